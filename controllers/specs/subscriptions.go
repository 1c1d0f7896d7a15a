package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

// SubscriptionID is the bridge's id of the spec's subscription name.
func SubscriptionID(name string) string {
	return contract.OperatorSubscriptionPrefix + name
}

// SubscriptionSecrets are the values a subscription's references name:
// the signing secret (nil without a secretRef) and a NATS or AMQP target's
// credentials or a cloud receiver's verify token (nil without a
// credentialsSecretRef).
type SubscriptionSecrets struct {
	Signing     []byte
	Credentials *contract.SubscriptionCredentials
}

// Subscription renders one subscription of the spec, with the values of
// its Secrets, into the body of the bridge's PUT.
func Subscription(s msgbridgev1alpha1.SubscriptionSpec, secrets SubscriptionSecrets) contract.Subscription {
	format := s.Format
	if format == "" {
		format = msgbridgev1alpha1.SubscriptionFormatStandard
	}
	events := slices.Clone(s.Events)
	if events == nil {
		events = []string{}
	}
	return contract.Subscription{
		ID:          SubscriptionID(s.Name),
		Target:      s.Target,
		Events:      events,
		Format:      string(format),
		Secret:      string(secrets.Signing),
		Credentials: secrets.Credentials,
		Headers:     s.Headers,
		Enabled:     s.IsEnabled(),
	}
}

// The keys of a credentials Secret (credentialsSecretRef): a NATS
// target's token, or user and password; an AMQP target's user and
// password; a cloud receiver's verify token.
const (
	NATSTokenKey    = "token"
	NATSUserKey     = "user"
	NATSPasswordKey = "password" //nolint:gosec // G101: the name of a Secret's key, not a credential
)

// NATSCredentials reads the credentials of a nats:// target from the data
// of its Secret (named name): token, or user and password. A Secret with
// neither, with both kinds, or with only one of user and password is
// invalid: the message says which keys it lacks or has too many of, never
// a value.
func NATSCredentials(name string, data map[string][]byte) (*contract.SubscriptionCredentials, string) {
	token, user, password := data[NATSTokenKey], data[NATSUserKey], data[NATSPasswordKey]
	switch {
	case len(token) > 0 && (len(user) > 0 || len(password) > 0):
		return nil, fmt.Sprintf("Secret %s has both %s and %s/%s: give one kind of credentials", name, NATSTokenKey, NATSUserKey, NATSPasswordKey)
	case len(token) > 0:
		return &contract.SubscriptionCredentials{Token: string(token)}, ""
	case len(user) > 0 && len(password) > 0:
		return &contract.SubscriptionCredentials{User: string(user), Password: string(password)}, ""
	case len(user) > 0 || len(password) > 0:
		return nil, fmt.Sprintf("Secret %s has only one of %s and %s: they go together", name, NATSUserKey, NATSPasswordKey)
	}
	return nil, fmt.Sprintf("Secret %s has neither the key %s nor the keys %s and %s", name, NATSTokenKey, NATSUserKey, NATSPasswordKey)
}

// AMQPCredentials reads the credentials of an amqp(s):// target from the
// data of its Secret (named name): user and password, both; RabbitMQ has
// no token. The message names keys, never a value.
func AMQPCredentials(name string, data map[string][]byte) (*contract.SubscriptionCredentials, string) {
	user, password := data[NATSUserKey], data[NATSPasswordKey]
	switch {
	case len(data[NATSTokenKey]) > 0:
		return nil, fmt.Sprintf("Secret %s has %s: an amqp(s):// target takes %s and %s", name, NATSTokenKey, NATSUserKey, NATSPasswordKey)
	case len(user) > 0 && len(password) > 0:
		return &contract.SubscriptionCredentials{User: string(user), Password: string(password)}, ""
	}
	return nil, fmt.Sprintf("Secret %s lacks %s or %s: an amqp(s):// target takes both", name, NATSUserKey, NATSPasswordKey)
}

// SubscriptionCredentials reads the credentials of s from the data of the
// Secret its credentialsSecretRef names (name): a nats:// or amqp(s)://
// target's, or the verify token of an http(s) target of format cloud (the
// key token alone).
func SubscriptionCredentials(s msgbridgev1alpha1.SubscriptionSpec, name string, data map[string][]byte) (*contract.SubscriptionCredentials, string) {
	switch {
	case strings.HasPrefix(s.Target, "nats://"):
		return NATSCredentials(name, data)
	case strings.HasPrefix(s.Target, "amqp://"), strings.HasPrefix(s.Target, "amqps://"):
		return AMQPCredentials(name, data)
	}
	token := data[NATSTokenKey]
	switch {
	case len(data[NATSUserKey]) > 0 || len(data[NATSPasswordKey]) > 0:
		return nil, fmt.Sprintf("Secret %s has %s or %s: an http(s) receiver of format cloud takes only the verify token (%s)",
			name, NATSUserKey, NATSPasswordKey, NATSTokenKey)
	case len(token) == 0:
		return nil, fmt.Sprintf("Secret %s has no key %s: the verify token of format cloud", name, NATSTokenKey)
	}
	return &contract.SubscriptionCredentials{Token: string(token)}, ""
}

// SubscriptionDigest identifies a rendered subscription, its secret and
// credentials included: the bridge never echoes them back, so the operator compares
// digests to know whether what the bridge holds is what it rendered last.
// It is kept in memory only, never written where others read it.
func SubscriptionDigest(s contract.Subscription) string {
	// Marshalling a struct of strings, a bool, a slice, a map and a
	// struct of strings cannot fail; the secrets in it are hashed, never
	// written out.
	b, _ := json.Marshal(s) //nolint:gosec // see above
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// StaleSubscriptions are the ids the bridge holds that the operator rendered
// (prefix k8s-) and mb's spec no longer names: the ones to delete. The
// subscriptions a person created through the admin API are never among them.
func StaleSubscriptions(mb *msgbridgev1alpha1.MessagingBridge, held []contract.SubscriptionView) []string {
	wanted := map[string]bool{}
	for _, s := range mb.Spec.Subscriptions {
		wanted[SubscriptionID(s.Name)] = true
	}
	var stale []string
	for _, v := range held {
		if strings.HasPrefix(v.ID, contract.OperatorSubscriptionPrefix) && !wanted[v.ID] {
			stale = append(stale, v.ID)
		}
	}
	return stale
}
