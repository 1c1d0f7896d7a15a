package settings

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/logging"
)

const (
	testAPIKey   = "api-key-0123456789abcdef"
	testAdmin    = "admin-token-0123456789abcdef"
	testEncKey   = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	testTOTP     = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" // 20 bytes
	testWhsecRaw = "0123456789abcdef01234567"         // 24 bytes
)

// testEncKeyRaw is testEncKey decoded, as Settings hands it over.
func testEncKeyRaw() string {
	raw, _ := hex.DecodeString(testEncKey)
	return string(raw)
}

func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func required() map[string]string {
	return map[string]string{"API_KEY": testAPIKey, "ADMIN_TOKEN": testAdmin, "ENCRYPTION_KEY": testEncKey}
}

func TestLoadDefaults(t *testing.T) {
	s, err := Load(nil, env(required()), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.ListenAddr != ":8080" || s.DataDir != "./data" || s.MaxFileSize != 50_000_000 ||
		s.HeartbeatInterval != 15*time.Second || s.LogLevel != logging.LevelInfo || s.WebhookURL != "" ||
		s.WebhookSecret != "" || s.TOTPSecret != "" || s.InboxRetention != 720*time.Hour || s.MessageRetention != 720*time.Hour ||
		s.MediaRetention != 168*time.Hour || s.Pprof {
		t.Errorf("defaults: %+v", s)
	}
	if want := []time.Duration{5 * time.Second, 15 * time.Second, 60 * time.Second}; fmt.Sprint(s.RetrySchedule) != fmt.Sprint(want) {
		t.Errorf("retry schedule %v, want %v", s.RetrySchedule, want)
	}
	if s.APIKey.Reveal() != testAPIKey || s.AdminToken.Reveal() != testAdmin || s.EncryptionKey.Reveal() != testEncKeyRaw() {
		t.Error("credentials not loaded")
	}
	if s.EventStreams != 64 || s.EventStreamsPerAddress != 8 || s.LogFilesMaxBytes != 64<<20 || s.WebhookLocalTargets ||
		s.DeliveredRetention != 168*time.Hour || s.EventLogRetention != 24*time.Hour {
		t.Errorf("event stream caps: %d, %d per address", s.EventStreams, s.EventStreamsPerAddress)
	}
	if s.MaxUploads != 32 || s.UploadsPerAddress != 4 || s.KeyDeadline != 10*time.Second {
		t.Errorf("upload bounds: %d, %d per address, key deadline %s", s.MaxUploads, s.UploadsPerAddress, s.KeyDeadline)
	}
	if s.CheckRate.String() != "10/m" || s.CheckBurst != 5 || s.PresenceInterval != 5*time.Second || s.UploadRetention != 24*time.Hour {
		t.Errorf("check budget: %s, burst %d", s.CheckRate, s.CheckBurst)
	}
	if s.GroupActionRate.String() != "4/m" {
		t.Errorf("group action rate %s", s.GroupActionRate)
	}
	if s.StatusUpdates || s.ChannelPosts {
		t.Error("status updates or channel posts are on by default")
	}
	if s.SendRate.String() != "20/m" || !s.TypingDelay.Off() || s.RestrictionBackoff != time.Minute {
		t.Errorf("protection defaults: rate %s, typing %s, back-off %s", s.SendRate, s.TypingDelay, s.RestrictionBackoff)
	}
}

func TestLoadValidValues(t *testing.T) {
	kv := required()
	kv["MAX_FILE_SIZE"] = "10MiB"
	kv["WEBHOOK_URL"] = "https://backend.team-a.svc/hooks/whatsapp?x=1"
	kv["WEBHOOK_SECRET"] = "whsec_" + base64.StdEncoding.EncodeToString([]byte(testWhsecRaw))
	kv["TOTP_SECRET"] = "jbsw y3dp ehpk 3pxp jbsw y3dp ehpk 3pxp"
	kv["RETRY_SCHEDULE"] = "1s, 2s"
	kv["HEARTBEAT_INTERVAL"] = "200ms"
	kv["MEDIA_RETENTION"] = "90s"
	kv["LOG_LEVEL"] = "debug"
	kv["PPROF"] = "on"
	kv["STATUS_UPDATES"] = "on"
	kv["CHANNEL_POSTS"] = "on"
	kv["ENCRYPTION_KEY"] = strings.ToUpper(testEncKey)
	s, err := Load(nil, env(kv), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxFileSize != 10<<20 {
		t.Errorf("max file size %d", s.MaxFileSize)
	}
	if s.WebhookSecret.Reveal() != testWhsecRaw {
		t.Errorf("webhook secret not decoded")
	}
	if len(s.TOTPSecret) != 20 {
		t.Errorf("totp secret decoded to %d bytes", len(s.TOTPSecret))
	}
	if fmt.Sprint(s.RetrySchedule) != "[1s 2s]" || s.HeartbeatInterval != 200*time.Millisecond || s.LogLevel != logging.LevelDebug ||
		s.MediaRetention != 90*time.Second || !s.Pprof || !s.StatusUpdates || !s.ChannelPosts {
		t.Errorf("parsed: %+v", s)
	}
	if s.EncryptionKey.Reveal() != testEncKeyRaw() {
		t.Error("upper-case hex does not decode to the same key")
	}
}

func TestFlagOverridesEnvironment(t *testing.T) {
	s, err := Load([]string{"--listen-addr=127.0.0.1:9999", "--log-level", "warn"},
		env(map[string]string{"API_KEY": testAPIKey, "ADMIN_TOKEN": testAdmin, "ENCRYPTION_KEY": testEncKey, "LISTEN_ADDR": ":1"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.ListenAddr != "127.0.0.1:9999" || s.LogLevel != logging.LevelWarn {
		t.Errorf("flags not applied: %+v", s)
	}
}

func TestLoadRejects(t *testing.T) {
	cases := []struct {
		env, value, want string
	}{
		{"API_KEY", "", "setting API_KEY (--api-key, from default): is required"},
		{"API_KEY", "short", "at least 16 characters"},
		{"API_KEY", "has a space in it 0123456", "printable ASCII without spaces"},
		{"ADMIN_TOKEN", "", "setting ADMIN_TOKEN"},
		{"ADMIN_TOKEN", testAPIKey, "must differ from API_KEY"},
		{"ENCRYPTION_KEY", "", "setting ENCRYPTION_KEY"},
		{"ENCRYPTION_KEY", testEncKey[:62], "64 hex characters (32 bytes), got 62"},
		{"ENCRYPTION_KEY", "zz" + testEncKey[2:], "64 hex characters (0-9, a-f)"},
		{"ENCRYPTION_KEY", strings.Repeat("0", 64), "must not be all zero"},
		{"LISTEN_ADDR", "8080", "is not host:port"},
		{"LISTEN_ADDR", ":99999", "port \"99999\""},
		{"LISTEN_ADDR", "bad_host!:80", "neither an IP address nor a host name"},
		{"LISTEN_ADDR", "127.0.0.1:+19004", `port "+19004"`},
		{"LISTEN_ADDR", ":-0", `port "-0"`},
		{"LISTEN_ADDR", ":08080", `port "08080"`},
		{"LISTEN_ADDR", "localhost:", `port ""`},
		{"LISTEN_ADDR", "garbage", "is not host:port"},
		{"LISTEN_ADDR", "::80", "is not host:port"},
		{"DATA_DIR", " ", "must not be empty"},
		{"MAX_UPLOADS", "0", "from 1 to 10000, got 0"},
		{"MAX_UPLOADS", "many", "is not a whole number"},
		{"UPLOADS_PER_ADDRESS", "33", "from 1 to 32, got 33"},
		{"EVENT_STREAMS", "0", "from 1 to 10000, got 0"},
		{"LOG_FILES_MAX_BYTES", "512KiB", "at least 1MiB"},
		{"WEBHOOK_LOCAL_TARGETS", "yes", "is neither on nor off"},
		{"DELIVERED_RETENTION", "0s", "from 1s to 8760h"},
		{"EVENT_LOG_RETENTION", "9000h", "from 1s to 8760h"},
		{"EVENT_STREAMS_PER_ADDRESS", "65", "from 1 to 64, got 65"},
		{"KEY_DEADLINE", "10", "is not a duration"},
		{"CHECK_RATE", "10", "is not a rate"},
		{"CHECK_BURST", "101", "from 1 to 100, got 101"},
		{"PRESENCE_INTERVAL", "100ms", "from 1s to 1m0s"},
		{"UPLOAD_RETENTION", "0s", "from 1s to 8760h"},
		{"TRUSTED_PROXIES", "10.0.0.0/8,ingress", `"ingress" is neither a CIDR`},
		{"KEY_DEADLINE", "10m", "from 100ms to 5m0s"},
		{"WEBHOOK_URL", "ftp://x", "http:// or https://"},
		{"WEBHOOK_URL", "https://", "has no host"},
		{"CLOUD_MEDIA_HOSTS", "https://cdn.example", "is not a host or host:port"},
		{"CLOUD_MEDIA_HOSTS", "cdn.example/files", "is not a host or host:port"},
		{"CLOUD_MEDIA_HOSTS", "*.example", "is not a host or host:port"},
		{"CLOUD_MEDIA_HOSTS", "cdn.example:99999", "has no valid port"},
		{"WEBHOOK_URL", "https://u:p@host/x", "must not carry a user"},
		{"WEBHOOK_URL", "://bad", "is not a URL"},
		{"WEBHOOK_URL", "https://hooks.example:99999/x", `port "99999"`},
		{"WEBHOOK_URL", "https://hooks.example:0/x", `port "0"`},
		{"WEBHOOK_URL", "https://hooks.example:+443/x", "port that is not a number"},
		{"WEBHOOK_URL", "https://hooks.example:https/x", "port that is not a number"},
		{"WEBHOOK_SECRET", "abc", "must start with whsec_"},
		{"WEBHOOK_SECRET", "whsec_!!!", "not valid base64"},
		{"WEBHOOK_SECRET", "whsec_" + base64.StdEncoding.EncodeToString([]byte("short")), "24-64 bytes, got 5"},
		{"MAX_FILE_SIZE", "lots", "is not a size"},
		{"MAX_FILE_SIZE", "0", "from 1 byte to 2GiB"},
		{"MAX_FILE_SIZE", "3GiB", "from 1 byte to 2GiB"},
		{"MAX_FILE_SIZE", "-5MB", "must be positive"},
		{"MAX_FILE_SIZE", "1.9", "whole bytes or whole units"},
		{"MAX_FILE_SIZE", "1.5MB", "whole bytes or whole units"},
		{"MAX_FILE_SIZE", "1,000", "whole bytes or whole units"},
		{"MAX_FILE_SIZE", "MB", "is not a size (for example"},
		{"MAX_FILE_SIZE", ".5MB", "is not a size"},
		{"MAX_FILE_SIZE", "5 M B", "whole bytes or whole units"},
		{"SPOOL_MAX_BYTES", "1.5GB", "whole bytes or whole units"},
		{"SPOOL_MAX_BYTES", "-1", "must be positive"},
		{"SPOOL_MAX_BYTES", "lots", "is not a size"},
		{"SPOOL_MAX_BYTES", "1MB", "must be at least MAX_FILE_SIZE"},
		{"SPOOL_MAX_BYTES", "2PiB", "from 1 byte to 1PiB"},
		{"DISK_RESERVE", "lots", "is not a size"},
		{"DISK_RESERVE", "-1", "must be positive"},
		{"DISK_RESERVE", "2%", "is not a size"},
		{"DISK_RESERVE", "512KiB", "must be at least 1MiB"},
		{"DISK_RESERVE", "2PiB", "from 1 byte to 1PiB"},
		{"TOTP_SECRET", "not base32 1", "is not base32"},
		{"TOTP_SECRET", "JBSWY3DPEHPK3PXP", "at least 16 bytes"},
		{"RETRY_SCHEDULE", "5s,x", `"x" is not a duration`},
		{"RETRY_SCHEDULE", "5s,,15s", `"" is not a duration`},
		{"RETRY_SCHEDULE", "0s", "must be above 0"},
		{"RETRY_SCHEDULE", "-1s", "must be above 0"},
		{"RETRY_SCHEDULE", "7h", "at most 6h0m0s"},
		{"RETRY_SCHEDULE", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s", "has 11 delays; at most 10"},
		{"HEARTBEAT_INTERVAL", "fast", "is not a duration"},
		{"HEARTBEAT_INTERVAL", "1ms", "from 100ms to 10m0s"},
		{"MEDIA_RETENTION", "7d", `"7d" is not a duration (for example 168h for a week or 30m)`},
		{"MEDIA_RETENTION", "168", "is not a duration"},
		{"MEDIA_RETENTION", "0s", "must be from 1s to 8760h"},
		{"MEDIA_RETENTION", "-1h", "must be from 1s to 8760h"},
		{"MEDIA_RETENTION", "500ms", "must be from 1s to 8760h"},
		{"MEDIA_RETENTION", "8761h", "must be from 1s to 8760h"},
		{"LOG_LEVEL", "trace", `"trace" is not one of debug, info, warn, error`},
		{"LOG_LEVEL", "INFO", "is not one of"},
		{"INBOX_RETENTION", "30d", `"30d" is not a duration`},
		{"INBOX_RETENTION", "500ms", "must be from 1s to 8760h, got 500ms"},
		{"INBOX_RETENTION", "0", "must be from 1s to 8760h"},
		{"INBOX_RETENTION", "-720h", "must be from 1s to 8760h"},
		{"INBOX_RETENTION", "8761h", "must be from 1s to 8760h"},
		{"MESSAGE_RETENTION", "30d", `"30d" is not a duration`},
		{"MESSAGE_RETENTION", "0", "must be from 1s to 8760h"},
		{"MESSAGE_RETENTION", "8761h", "must be from 1s to 8760h"},
		{"INBOX_RETENTION", "720", "is not a duration"},
		{"SEND_RATE", "20", "is not a rate"},
		{"GROUP_ACTION_RATE", "4/min", "is not a rate"},
		{"GROUP_ACTION_RATE", "0/m", "is not a rate"},
		{"SEND_RATE", "20/min", "is not a rate"},
		{"SEND_RATE", "0/m", "is not a rate"},
		{"SEND_RATE", "020/m", "is not a rate"},
		{"SEND_RATE", "+5/s", "is not a rate"},
		{"SEND_RATE", " 5/s", "is not a rate"},
		{"SEND_RATE", "200000/s", "count must be from 1 to 100000"},
		{"TYPING_DELAY", "on", "is not a typing delay"},
		{"PPROF", "true", "is neither on nor off"},
		{"PPROF", "ON", "is neither on nor off"},
		{"STATUS_UPDATES", "yes", "is neither on nor off"},
		{"WA_VERSION", "2.2413.1", "must be a WhatsApp Web version 2.3000.N"},
		{"REJECT_CALLS", "some", "must be off, all or unknown"},
		{"REJECT_CALLS_REPLY", "\xff", "must be UTF-8 text"},
		{"WA_VERSION", "2.3000.0", "must be a WhatsApp Web version 2.3000.N"},
		{"TYPING_DELAY", "50ms", "is not a typing delay"},
		{"TYPING_DELAY", "0s/char", "time per character"},
		{"TYPING_DELAY", "2s/char", "time per character"},
		{"TYPING_DELAY", "50ms/char,max=2m", "max= must be"},
		{"TYPING_DELAY", "50ms/char,5s", "max= must be"},
		{"TYPING_DELAY", "50ms/char,max=10ms", "max= must be"},
		{"RESTRICTION_BACKOFF", "soon", "is not a duration"},
		{"RESTRICTION_BACKOFF", "2h", "from 10ms to 1h0m0s"},
	}
	for _, c := range cases {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			kv := required()
			kv[c.env] = c.value
			if c.value == "" {
				delete(kv, c.env)
			}
			_, err := Load(nil, env(kv), io.Discard)
			if err == nil {
				t.Fatalf("accepted %s=%q", c.env, c.value)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not contain %q", msg, c.want)
			}
			if !strings.HasPrefix(msg, "setting "+c.env+" ") {
				t.Errorf("error %q does not name the setting first", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

func TestErrorsNeverQuoteSecrets(t *testing.T) {
	leaky := "s3cr3t value with spaces!"
	for _, name := range []string{"API_KEY", "ADMIN_TOKEN", "ENCRYPTION_KEY", "WEBHOOK_SECRET", "TOTP_SECRET"} {
		kv := required()
		kv[name] = leaky
		_, err := Load(nil, env(kv), io.Discard)
		if err == nil || strings.Contains(err.Error(), leaky) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: error %v quotes the secret", name, err)
		}
	}
}

func TestSecretsAreRedactedWhenFormatted(t *testing.T) {
	s, err := Load(nil, env(required()), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, s)
		if strings.Contains(out, testAPIKey) || strings.Contains(out, testAdmin) || strings.Contains(out, testEncKey) ||
			strings.Contains(out, testEncKeyRaw()) {
			t.Errorf("%s leaks a secret: %s", format, out)
		}
	}
}

func TestCommandLineErrors(t *testing.T) {
	var usage bytes.Buffer
	if _, err := Load([]string{"--help"}, env(required()), &usage); !errors.Is(err, ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	if !strings.Contains(usage.String(), "--api-key") && !strings.Contains(usage.String(), "-api-key") {
		t.Errorf("usage lacks the flags: %s", usage.String())
	}
	if _, err := Load([]string{"--nope=1"}, env(required()), io.Discard); err == nil || !strings.Contains(err.Error(), "command line") {
		t.Errorf("unknown flag: %v", err)
	}
	if _, err := Load([]string{"stray"}, env(required()), io.Discard); err == nil || !strings.Contains(err.Error(), `unexpected argument "stray"`) {
		t.Errorf("stray argument: %v", err)
	}
}

// FuzzLoad feeds arbitrary values to every setting: Load must never panic and
// must either accept the value or name the setting in a one-line error.
func FuzzLoad(f *testing.F) {
	for _, d := range specsFor(&Settings{}) {
		f.Add(d.env, d.def)
	}
	f.Add("MAX_FILE_SIZE", "1e400 MB")
	f.Add("RETRY_SCHEDULE", "9223372036854775807ns")
	f.Fuzz(func(t *testing.T, name, value string) {
		kv := required()
		kv[name] = value
		_, err := Load(nil, env(kv), io.Discard)
		if err != nil && (!strings.HasPrefix(err.Error(), "setting ") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error for %s=%q is not one line naming a setting: %q", name, value, err)
		}
	})
}

// The strict parsers still take every ordinary form.
func TestLoadAcceptsOrdinaryForms(t *testing.T) {
	for _, c := range []struct {
		env, value string
		check      func(*Settings) bool
	}{
		{"LISTEN_ADDR", ":0", func(s *Settings) bool { return s.ListenAddr == ":0" }},
		{"LISTEN_ADDR", "[::1]:65535", func(s *Settings) bool { return s.ListenAddr == "[::1]:65535" }},
		{"LISTEN_ADDR", "bridge.team-a.svc:8080", func(s *Settings) bool { return s.ListenAddr == "bridge.team-a.svc:8080" }},
		{"WEBHOOK_URL", "http://[::1]:65535/h", func(s *Settings) bool { return s.WebhookURL == "http://[::1]:65535/h" }},
		{"SPOOL_MAX_BYTES", "1GiB", func(s *Settings) bool { return s.SpoolMaxBytes == 1<<30 }},
		{"SPOOL_MAX_BYTES", "", func(s *Settings) bool { return s.SpoolMaxBytes == 0 }},
		{"DISK_RESERVE", "256MiB", func(s *Settings) bool { return s.DiskReserve == 256<<20 }},
		{"DISK_RESERVE", "", func(s *Settings) bool { return s.DiskReserve == 0 }},
		{"CLOUD_MEDIA_HOSTS", "", func(s *Settings) bool { return s.CloudMediaHosts == nil }},
		{"CLOUD_MEDIA_HOSTS", " CDN.example, files.internal:8443 ,", func(s *Settings) bool {
			return len(s.CloudMediaHosts) == 2 && s.CloudMediaHosts[0] == "cdn.example" && s.CloudMediaHosts[1] == "files.internal:8443"
		}},
		{"WEBHOOK_URL", "https://hooks.example/h", func(s *Settings) bool { return s.WebhookURL == "https://hooks.example/h" }},
		{"MAX_FILE_SIZE", "1048576", func(s *Settings) bool { return s.MaxFileSize == 1<<20 }},
		{"MAX_FILE_SIZE", " 10 MiB ", func(s *Settings) bool { return s.MaxFileSize == 10<<20 }},
		{"MAX_FILE_SIZE", "50mb", func(s *Settings) bool { return s.MaxFileSize == 50_000_000 }},
		{"MAX_FILE_SIZE", "2GiB", func(s *Settings) bool { return s.MaxFileSize == 2<<30 }},
		{"UPLOADS_PER_ADDRESS", " 2 ", func(s *Settings) bool { return s.UploadsPerAddress == 2 }},
		{"TRUSTED_PROXIES", "10.0.0.0/8, fd00::1", func(s *Settings) bool { return len(s.TrustedProxies) == 2 }},
		{"KEY_DEADLINE", "250ms", func(s *Settings) bool { return s.KeyDeadline == 250*time.Millisecond }},
		{"INBOX_RETENTION", "2s", func(s *Settings) bool { return s.InboxRetention == 2*time.Second }},
		{"INBOX_RETENTION", " 168h ", func(s *Settings) bool { return s.InboxRetention == 168*time.Hour }},
		{"MESSAGE_RETENTION", "2s", func(s *Settings) bool { return s.MessageRetention == 2*time.Second }},
		{"ENCRYPTION_KEY", "00" + strings.Repeat("0", 61) + "1", func(s *Settings) bool { return s.EncryptionKey.Reveal()[31] == 1 }},
	} {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			kv := required()
			kv[c.env] = c.value
			s, err := Load(nil, env(kv), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(s) {
				t.Errorf("loaded %+v", s)
			}
		})
	}
}

// Settings logged whole through the bridge's logger show no credential.
func TestSecretsAreRedactedWhenLogged(t *testing.T) {
	s, err := Load(nil, env(required()), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	log, files, err := logging.New(logging.Options{Stdout: &out, Level: logging.LevelInfo})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("loaded", "settings", s)
	_ = files.Close()
	for _, secret := range []string{testAPIKey, testAdmin, testEncKey, testEncKeyRaw()} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("the log line holds a secret: %s", out.String())
		}
	}
	if !strings.Contains(out.String(), `"ListenAddr":":8080"`) && !strings.Contains(out.String(), `":8080"`) {
		t.Errorf("the settings are not in the line: %s", out.String())
	}
}
