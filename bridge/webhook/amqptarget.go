package webhook

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
)

// AMQP target schemes: RabbitMQ, plain and over TLS.
const (
	schemeAMQP  = "amqp"
	schemeAMQPS = "amqps"
)

// The options of an amqp:// target and their defaults: the topic exchange
// the bridge declares and publishes to, and the first tokens of every
// routing key (<prefix>.<account>.<event type>).
const (
	amqpOptionExchange = "exchange"
	amqpOptionPrefix   = "prefix"
	amqpDefaultName    = "msgbridge"
	// maxAMQPName is RabbitMQ's limit on an exchange or virtual host name
	// (a short string: 255 bytes).
	maxAMQPName = 255
)

// exchangeNamePattern is what RabbitMQ takes in an exchange's name.
var exchangeNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// amqpTarget is an amqp:// or amqps:// target taken apart: the broker's
// address (no user information: credentials come from the subscription),
// the virtual host, the exchange and the routing key prefix.
type amqpTarget struct {
	tls      bool
	host     string // host:port
	vhost    string
	exchange string
	prefix   string
}

// parseAMQPTarget reads amqp[s]://host[:port]/[vhost]?exchange=…&prefix=…:
// the path is the virtual host as in RabbitMQ's own URIs (empty or "/":
// the default, "/"; %2F spells a slash inside a name). A form it cannot
// use is invalid_target; an option it does not know, or a value RabbitMQ
// would refuse, is invalid_target_option.
func parseAMQPTarget(u *url.URL) (amqpTarget, error) {
	t := amqpTarget{tls: u.Scheme == schemeAMQPS, exchange: amqpDefaultName, prefix: amqpDefaultName}
	vhost, err := amqpVhost(u)
	if err != nil {
		return t, err
	}
	t.vhost = vhost
	port := u.Port()
	if port == "" {
		port = "5672"
		if t.tls {
			port = "5671"
		}
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return t, invalid(bridge.CodeInvalidTarget, "the port of an %s:// target is 1 to 65535", u.Scheme)
	}
	t.host = u.Hostname() + ":" + port
	if strings.Contains(u.Hostname(), ":") {
		t.host = "[" + u.Hostname() + "]:" + port
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return t, invalid(bridge.CodeInvalidTargetOption, "the options of an %s:// target are a URL query: %v", u.Scheme, err)
	}
	return t, t.setOptions(query)
}

// amqpVhost is the virtual host a target's path names.
func amqpVhost(u *url.URL) (string, error) {
	raw := strings.TrimPrefix(u.EscapedPath(), "/")
	if raw == "" {
		return "/", nil
	}
	if strings.Contains(raw, "/") {
		return "", invalid(bridge.CodeInvalidTarget, "an amqp:// target's path is one virtual host; "+
			"write a slash inside its name as %%2F, e.g. amqp://rabbitmq:5672/%%2F for the default")
	}
	vhost, err := url.PathUnescape(raw)
	if err != nil || len(vhost) > maxAMQPName || strings.ContainsAny(vhost, "\x00\r\n") {
		return "", invalid(bridge.CodeInvalidTarget, "the virtual host of an amqp:// target is 1 to 255 bytes, without line breaks")
	}
	return vhost, nil
}

// setOptions takes the exchange and the routing key prefix from query,
// each at most once, and refuses any other option.
func (t *amqpTarget) setOptions(query url.Values) error {
	for name, values := range query {
		if !slices.Contains([]string{amqpOptionExchange, amqpOptionPrefix}, name) {
			return invalid(bridge.CodeInvalidTargetOption, "unknown option %q of an amqp:// target; the options are exchange and prefix", name)
		}
		if len(values) != 1 {
			return invalid(bridge.CodeInvalidTargetOption, "option %q is given %d times", name, len(values))
		}
	}
	if q := query.Get(amqpOptionExchange); query.Has(amqpOptionExchange) {
		if len(q) > maxAMQPName || !exchangeNamePattern.MatchString(q) || strings.HasPrefix(q, "amq.") {
			return invalid(bridge.CodeInvalidTargetOption, "exchange %q: 1 to 255 letters, digits, '-', '_', '.' or ':', "+
				"not starting with amq. (RabbitMQ reserves those)", q)
		}
		t.exchange = q
	}
	if q := query.Get(amqpOptionPrefix); query.Has(amqpOptionPrefix) {
		if err := validRoutingPrefix(q); err != nil {
			return err
		}
		t.prefix = q
	}
	return nil
}

// validRoutingPrefix checks a routing key prefix: dot-separated tokens,
// as a NATS subject prefix, without the topic exchange's wildcards.
func validRoutingPrefix(prefix string) error {
	tokens := strings.Split(prefix, ".")
	if len(tokens) > 8 {
		return invalid(bridge.CodeInvalidTargetOption, "the routing key prefix %q has more than 8 tokens", prefix)
	}
	for _, tok := range tokens {
		if !subjectTokenPattern.MatchString(tok) {
			return invalid(bridge.CodeInvalidTargetOption, "the routing key prefix %q has a token that is not letters, digits, _ or -", prefix)
		}
	}
	return nil
}

// validAMQPCredentials checks an amqp:// target's credentials: RabbitMQ
// takes a user and password (or none: its guest user, on its own host
// only); there is no token.
func validAMQPCredentials(c Credentials) error {
	if c.Token != "" {
		return invalid(bridge.CodeInvalidCredentials, "an amqp:// target takes a user and password, not a token")
	}
	return validCredentials(c)
}

// routingKey is <prefix>.<account>.<event type>.
func (t amqpTarget) routingKey(account, eventType string) string {
	if account == "" {
		account = unlinkedAccount
	}
	return t.prefix + "." + account + "." + eventType
}

// brokerURL is what the client dials: scheme, host and port; the virtual
// host and the credentials go in its Config, so that neither is parsed
// again nor ever part of a string that could be logged.
func (t amqpTarget) brokerURL() string {
	scheme := schemeAMQP
	if t.tls {
		scheme = schemeAMQPS
	}
	return scheme + "://" + t.host + "/"
}
