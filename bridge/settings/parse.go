package settings

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

func parseListenAddr(v string) (string, error) {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port (for example :8080 or 127.0.0.1:8080)", v)
	}
	// 0 asks the kernel for a free port (tests do).
	if _, ok := parsePort(port); !ok {
		return "", fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if host != "" && net.ParseIP(host) == nil && !validHostname(host) {
		return "", fmt.Errorf("host %q is neither an IP address nor a host name", host)
	}
	return v, nil
}

// parsePort accepts a port as written canonically: decimal digits only (no
// sign, which strconv.Atoi would take), no leading zero, at most 65535.
func parsePort(p string) (int, bool) {
	if p == "" || len(p) > 5 || (len(p) > 1 && p[0] == '0') || strings.Trim(p, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	return n, err == nil && n <= 65535
}

func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		if strings.IndexFunc(label, notHostnameRune) >= 0 {
			return false
		}
	}
	return true
}

// notHostnameRune reports a rune that RFC 1123 host name labels cannot hold.
func notHostnameRune(c rune) bool {
	return (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && c != '-'
}

func parseDataDir(v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", errors.New("must not be empty")
	}
	if strings.ContainsRune(v, 0) {
		return "", errors.New("must not contain a NUL byte")
	}
	return v, nil
}

// parseCredential accepts an API_KEY or ADMIN_TOKEN as the operator checks
// it too (contract.CheckCredential).
func parseCredential(v string) (bridge.Secret, error) {
	return bridge.Secret(v), contract.CheckCredential(v)
}

// parseEncryptionKey decodes the 64 hex characters to the 32-byte key.
func parseEncryptionKey(v string) (bridge.Secret, error) {
	key, err := contract.ParseEncryptionKey(v)
	return bridge.Secret(key), err
}

func parseWebhookURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	var urlErr *url.Error
	if errors.As(err, &urlErr) && strings.HasPrefix(urlErr.Err.Error(), "invalid port") {
		return "", errors.New("has a port that is not a number from 1 to 65535")
	}
	if err != nil {
		return "", errors.New("is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("must start with http:// or https://")
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", errors.New("has no host")
	}
	if p := u.Port(); p != "" {
		if n, ok := parsePort(p); !ok || n == 0 {
			return "", fmt.Errorf("port %q is not a number from 1 to 65535", p)
		}
	}
	if u.User != nil {
		return "", errors.New("must not carry a user or password; sign with WEBHOOK_SECRET instead")
	}
	if u.Fragment != "" {
		return "", errors.New("must not have a #fragment")
	}
	return u.String(), nil
}

// parseWebhookSecret decodes whsec_<base64>; empty leaves webhooks unsigned.
func parseWebhookSecret(v string) (bridge.Secret, error) {
	key, err := contract.ParseWebhookSecret(v)
	return bridge.Secret(key), err
}

// parseFileSize takes whole bytes ("1048576") or a whole number of an SI or
// IEC unit ("50MB", "10MiB"); go-humanize handles both families of units.
// Fractions are refused: go-humanize would round "1.9" down to one byte.
func parseFileSize(v string) (int64, error) { return parseSize(v, maxFileSizeLimit, "2GiB") }

// parseSize is parseFileSize's strict parsing with the ceiling limit,
// written limitText.
func parseSize(v string, limit uint64, limitText string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, errors.New("must not be empty")
	}
	if strings.HasPrefix(v, "-") {
		return 0, errors.New("must be positive")
	}
	notASize := fmt.Errorf("%q is not a size (for example 50MB, 10MiB or 1048576)", v)
	rest := strings.TrimLeft(v, "0123456789")
	if len(rest) == len(v) {
		return 0, notASize
	}
	if strings.IndexFunc(strings.TrimSpace(rest), notASCIILetter) >= 0 {
		return 0, fmt.Errorf("%q is not a size in whole bytes or whole units (for example 50MB, 10MiB or 1048576)", v)
	}
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, notASize
	}
	if n == 0 || n > limit {
		return 0, fmt.Errorf("must be from 1 byte to %s, got %q", limitText, v)
	}
	return int64(n), nil
}

func notASCIILetter(c rune) bool { return (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') }

// parseTOTPSecret decodes the base32 secret as authenticator apps show it;
// empty turns one-time passwords off.
func parseTOTPSecret(v string) (bridge.Secret, error) {
	key, err := contract.ParseTOTPSecret(v)
	return bridge.Secret(key), err
}

func parseRetrySchedule(v string) ([]time.Duration, error) {
	parts := strings.Split(v, ",")
	if len(parts) > maxRetries {
		return nil, fmt.Errorf("has %d delays; at most %d", len(parts), maxRetries)
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration (for example 5s,15s,60s)", strings.TrimSpace(p))
		}
		if d <= 0 || d > maxRetryDelay {
			return nil, fmt.Errorf("delay %s must be above 0 and at most %s", d, maxRetryDelay)
		}
		out = append(out, d)
	}
	return out, nil
}

func parseHeartbeat(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (for example 15s)", v)
	}
	if d < minHeartbeat || d > maxHeartbeat {
		return 0, fmt.Errorf("must be from %s to %s, got %s", minHeartbeat, maxHeartbeat, d)
	}
	return d, nil
}

// parseRetention is how long the bridge keeps something it received: a Go
// duration (no bare number, no day unit: 720h for 30 days), from
// minRetention to maxRetention. Surrounding spaces are ignored, as in the
// other durations.
func parseRetention(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (for example 168h for a week or 30m)", v)
	}
	if d < minRetention || d > maxRetention {
		return 0, fmt.Errorf("must be from %s to %s, got %s", minRetention, formatHours(maxRetention), d)
	}
	return d, nil
}

// formatHours writes a whole number of hours as 168h, not 168h0m0s.
func formatHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// countUpTo parses a whole number from 1 to hi.
func countUpTo(hi int) func(string) (int, error) {
	const lo = 1
	return func(v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", v)
		}
		if n < lo || n > hi {
			return 0, fmt.Errorf("must be from %d to %d, got %d", lo, hi, n)
		}
		return n, nil
	}
}

// durationWithin parses a Go duration from lo to hi.
func durationWithin(lo, hi time.Duration) func(string) (time.Duration, error) {
	return func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (for example 10s)", v)
		}
		if d < lo || d > hi {
			return 0, fmt.Errorf("must be from %s to %s, got %s", lo, hi, d)
		}
		return d, nil
	}
}

// parseHosts reads a comma-separated list of host names or host:port,
// lowercased; empty is none. A scheme, a path, a wildcard or a user is
// refused: the list names exactly the hosts a fetch may reach.
func parseHosts(v string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(v, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		u, err := url.Parse("http://" + h)
		if err != nil || u.Host != h || u.Hostname() == "" || strings.ContainsAny(h, "*/@?#") {
			return nil, fmt.Errorf("%q is not a host or host:port", h)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("%q has no valid port", h)
			}
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}
