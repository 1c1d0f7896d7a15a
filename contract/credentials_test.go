package contract

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestCheckCredentials(t *testing.T) {
	good := map[string]string{
		"API_KEY":        strings.Repeat("a", 16),
		"ADMIN_TOKEN":    strings.Repeat("b", 43),
		"ENCRYPTION_KEY": strings.Repeat("0f", 32),
		"WEBHOOK_SECRET": "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)),
		"TOTP_SECRET":    "JBSW Y3DP-EHPK 3PXP jbsw y3dp ehpk 3pxp",
	}
	with := func(env, v string) map[string]string {
		m := map[string]string{}
		for k, x := range good {
			m[k] = x
		}
		m[env] = v
		return m
	}
	cases := []struct {
		name   string
		values map[string]string
		want   string // substring of the error; "" accepts
	}{
		{"all valid", good, ""},
		{"nothing to check", map[string]string{}, ""},
		{"empty webhook secret and TOTP: features off", with("WEBHOOK_SECRET", ""), ""},
		{"short API key", with("API_KEY", "short"), "API_KEY must be at least 16"},
		{"API key with a space", with("API_KEY", "abcdefgh ijklmnop"), "API_KEY must be printable ASCII"},
		{"API key with non-ASCII", with("API_KEY", "abcdefghijklmnopä"), "API_KEY must be printable ASCII"},
		{"empty admin token", with("ADMIN_TOKEN", ""), "ADMIN_TOKEN is required"},
		{"admin token equals API key", with("ADMIN_TOKEN", good["API_KEY"]), "ADMIN_TOKEN must differ from API_KEY"},
		{"encryption key not hex", with("ENCRYPTION_KEY", "nothex"), "ENCRYPTION_KEY must be 64 hex characters (32 bytes), got 6"},
		{"encryption key 64 non-hex", with("ENCRYPTION_KEY", strings.Repeat("zz", 32)), "ENCRYPTION_KEY must be 64 hex characters (0-9, a-f)"},
		{"encryption key all zero", with("ENCRYPTION_KEY", strings.Repeat("0", 64)), "ENCRYPTION_KEY must not be all zero"},
		{"upper-case hex key", with("ENCRYPTION_KEY", strings.Repeat("AB", 32)), ""},
		{"webhook secret without prefix", with("WEBHOOK_SECRET", "abc"), "WEBHOOK_SECRET must start with whsec_"},
		{"webhook secret not base64", with("WEBHOOK_SECRET", "whsec_!!!"), "WEBHOOK_SECRET is not valid base64"},
		{"webhook key too short", with("WEBHOOK_SECRET", "whsec_"+base64.StdEncoding.EncodeToString([]byte("short"))), "24-64 bytes, got 5"},
		{"webhook key too long", with("WEBHOOK_SECRET", "whsec_"+base64.StdEncoding.EncodeToString(make([]byte, 65))), "24-64 bytes, got 65"},
		{"TOTP not base32", with("TOTP_SECRET", "not base32!"), "TOTP_SECRET is not base32"},
		{"TOTP of 80 bits", with("TOTP_SECRET", "JBSWY3DPEHPK3PXP"), "TOTP_SECRET must hold at least 16 bytes"},
		{"TOTP padded", with("TOTP_SECRET", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP===="), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCredentials(tc.values)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
