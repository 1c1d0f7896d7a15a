package webhook

import (
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// DefaultSubscription is the id of WEBHOOK_URL's subscription, which the
// settings own: it is written at every start and refused by the admin API.
const DefaultSubscription = "default"

// Subscription is one receiver of the bridge's events.
type Subscription struct {
	ID string
	// Target is an http(s):// URL, nats://host:port/<subject prefix> or
	// amqp(s)://host:port/<vhost>?exchange=<name>&prefix=<routing key prefix>.
	Target string
	// Events are the event types delivered; empty: all.
	Events []string
	// Format names the body's Format (FormatStandard by default).
	Format string
	// Secret is the decoded whsec_ key that signs deliveries; empty:
	// unsigned.
	Secret []byte
	// Credentials authenticate to a NATS server or a RabbitMQ broker.
	Credentials Credentials
	// Headers are added to every delivery.
	Headers map[string]string
	Enabled bool
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt, UpdatedAt time.Time
}

// Credentials are a NATS server's (User and Password, or Token) or a
// RabbitMQ broker's (User and Password).
type Credentials struct {
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Token    string `json:"token,omitempty"`
}

// Set reports whether any credential is given.
func (c Credentials) Set() bool { return c != Credentials{} }

// Takes reports whether s receives events of type eventType.
func (s *Subscription) Takes(eventType string) bool {
	return len(s.Events) == 0 || slices.Contains(s.Events, eventType)
}

// EventTypes are every event type the bridge emits, in the order the API
// description lists them.
var EventTypes = []string{
	TypeMessageStatus, TypeMessageUpsert, TypeSessionStatus, TypeMessageReaction, TypeMessageEdit, TypeMessageRevoke,
	TypeMessagePollVote, TypeGroupParticipants, TypeGroupUpdate, TypeStatusUpdate, TypeCallOffer, TypeCallEnded, TypeContactIdentity,
	TypeContactBlocked,
	TypeChannelPost, TypeLabelChanged, TypeLabelChat, TypeLabelMessage,
	TypeMessageApproval,
}

// Target schemes.
const (
	schemeHTTP  = "http"
	schemeHTTPS = "https"
	schemeNATS  = "nats"
)

// Limits of a subscription's fields.
const (
	maxTargetLen = 2048
	maxHeaders   = 32
	// maxSubscriptionID is the longest subscription id.
	maxSubscriptionID = 63
	maxHeaderValue    = 1024
	maxSecretLen      = 256 // a NATS user or password
	maxCredentialLn   = 1024
)

var (
	// subscriptionIDPattern leaves the length (maxSubscriptionID) to a
	// check of its own: a pattern counting to 62 compiles to 62 copies of
	// its class, which every start paid for at initialisation.
	subscriptionIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	// headerNamePattern is an HTTP token (RFC 9110), which NATS headers
	// take too.
	headerNamePattern = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")
	// subjectTokenPattern is one token of a NATS subject prefix: no
	// wildcards, no white space.
	subjectTokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// forbiddenHeaders are the headers the bridge sets or the transport owns
// (lower case); the prefixes below are forbidden whole.
var (
	forbiddenHeaders = []string{
		"content-type", "content-length", "host", "connection", "transfer-encoding", "te", "trailer", "upgrade", "keep-alive",
	}
	forbiddenHeaderPrefixes = []string{"proxy-", "webhook-", "nats-"}
)

func invalid(code, format string, args ...any) *bridge.Error {
	return bridge.Errorf(bridge.KindInvalid, code, format, args...)
}

// ValidID checks a subscription id.
func ValidID(id string) error {
	if len(id) > maxSubscriptionID || !subscriptionIDPattern.MatchString(id) {
		return invalid(bridge.CodeInvalidSubscriptionID,
			"a subscription id is 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit")
	}
	return nil
}

// Validate checks s as a request gave it (its ID included) and fills its
// defaults; the errors are *bridge.Error with their own codes.
func (s *Subscription) Validate() error {
	if err := ValidID(s.ID); err != nil {
		return err
	}
	if err := validTarget(s.Target, s.Credentials, handshakes(s.Format)); err != nil {
		return err
	}
	for _, e := range s.Events {
		if !slices.Contains(EventTypes, e) {
			return invalid(bridge.CodeUnknownEventType, "unknown event type %q; the types are %s", e, strings.Join(EventTypes, ", "))
		}
	}
	if s.Format == "" {
		s.Format = FormatStandard
	}
	if _, err := formatOf(s.Format); err != nil {
		return err
	}
	headers, err := canonicalHeaders(s.Headers)
	if err != nil {
		return err
	}
	s.Headers = headers
	return nil
}

// canonicalHeaders checks h and writes its names as HTTP's canonical
// form ("x-team" and "X-TEAM" both as "X-Team"), the one the store keeps
// and NATS sends: two names that differ only in case are one header, and
// refused.
func canonicalHeaders(h map[string]string) (map[string]string, error) {
	if err := validHeaders(h); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	for name, value := range h {
		canonical := textproto.CanonicalMIMEHeaderKey(name)
		if _, twice := out[canonical]; twice {
			return nil, invalid(bridge.CodeForbiddenHeader, "header %q is given twice, in different cases", canonical)
		}
		out[canonical] = value
	}
	return out, nil
}

// handshakes reports a format whose receivers verify a handshake (the
// cloud format's Meta hub.challenge), whose token is credentials.token.
func handshakes(format string) bool {
	f, err := formatOf(format)
	if err != nil {
		return false
	}
	_, ok := f.(Verifier)
	return ok
}

// validTarget checks the target's form; whether it answers is the probe's
// business. An HTTP receiver takes no credentials but the handshake's
// token, when its format performs one (Chatwoot's verify token).
func validTarget(target string, creds Credentials, handshake bool) error {
	u, err := url.Parse(target)
	if err != nil || len(target) > maxTargetLen || u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalid(bridge.CodeInvalidTarget,
			"target must be an http(s):// URL, nats://host:port/<subject prefix> or amqp(s)://host:port/<vhost>?exchange=…&prefix=…, "+
				"without user information (credentials go in credentials)")
	}
	switch u.Scheme {
	case schemeHTTP, schemeHTTPS:
		if creds.User != "" || creds.Password != "" || (creds.Token != "" && !handshake) {
			return invalid(bridge.CodeInvalidCredentials, "credentials are for nats:// and amqp:// targets, and a token for the verification "+
				"handshake of format cloud; an HTTP receiver verifies the signature (secret)")
		}
		return validCredentials(creds)
	case schemeNATS:
		if _, err := subjectPrefix(u); err != nil {
			return err
		}
		return validCredentials(creds)
	case schemeAMQP, schemeAMQPS:
		if _, err := parseAMQPTarget(u); err != nil {
			return err
		}
		return validAMQPCredentials(creds)
	}
	return invalid(bridge.CodeInvalidTarget, "target scheme %q is not one of http, https, nats, amqp, amqps", u.Scheme)
}

// subjectPrefix is a nats:// target's subject prefix: its path, without
// the leading slash, dot-separated tokens.
func subjectPrefix(u *url.URL) (string, error) {
	prefix := strings.TrimPrefix(u.Path, "/")
	if u.RawQuery != "" || prefix == "" || len(strings.Split(prefix, ".")) > 8 {
		return "", invalid(bridge.CodeInvalidTarget, "a nats:// target is nats://host:port/<subject prefix>, e.g. nats://nats:4222/msgbridge")
	}
	for _, tok := range strings.Split(prefix, ".") {
		if !subjectTokenPattern.MatchString(tok) {
			return "", invalid(bridge.CodeInvalidTarget, "the subject prefix %q has a token that is not letters, digits, _ or -", prefix)
		}
	}
	return prefix, nil
}

func validCredentials(c Credentials) error {
	switch {
	case len(c.User) > maxSecretLen || len(c.Password) > maxSecretLen || len(c.Token) > maxCredentialLn:
		return invalid(bridge.CodeInvalidCredentials, "a credential is too long")
	case c.Token != "" && (c.User != "" || c.Password != ""):
		return invalid(bridge.CodeInvalidCredentials, "give either user and password or token, not both")
	case (c.User == "") != (c.Password == ""):
		return invalid(bridge.CodeInvalidCredentials, "user and password go together")
	}
	return nil
}

func validHeaders(h map[string]string) error {
	if len(h) > maxHeaders {
		return invalid(bridge.CodeForbiddenHeader, "at most %d headers", maxHeaders)
	}
	for name, value := range h {
		lower := strings.ToLower(name)
		if !headerNamePattern.MatchString(name) || slices.Contains(forbiddenHeaders, lower) ||
			slices.ContainsFunc(forbiddenHeaderPrefixes, func(p string) bool { return strings.HasPrefix(lower, p) }) {
			return invalid(bridge.CodeForbiddenHeader, "header %q is not allowed: the bridge or the transport sets it, or it is not an HTTP token", name)
		}
		if len(value) > maxHeaderValue || strings.ContainsAny(value, "\r\n\x00") {
			return invalid(bridge.CodeForbiddenHeader, "header %q has a value that is too long or spans lines", name)
		}
	}
	return nil
}
