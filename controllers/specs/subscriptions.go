package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
)

// SubscriptionID is the bridge's id of the spec's subscription name.
func SubscriptionID(name string) string {
	return contract.OperatorSubscriptionPrefix + name
}

// Subscription renders one subscription of the spec, with the value of its
// secret (nil without a secretRef), into the body of the bridge's PUT.
func Subscription(s msgbridgev1alpha1.SubscriptionSpec, secret []byte) contract.Subscription {
	format := s.Format
	if format == "" {
		format = msgbridgev1alpha1.SubscriptionFormatStandard
	}
	events := slices.Clone(s.Events)
	if events == nil {
		events = []string{}
	}
	return contract.Subscription{
		ID:      SubscriptionID(s.Name),
		Target:  s.Target,
		Events:  events,
		Format:  string(format),
		Secret:  string(secret),
		Headers: s.Headers,
		Enabled: s.IsEnabled(),
	}
}

// SubscriptionDigest identifies a rendered subscription, its secret
// included: the bridge never echoes a secret back, so the operator compares
// digests to know whether what the bridge holds is what it rendered last.
// It is kept in memory only, never written where others read it.
func SubscriptionDigest(s contract.Subscription) string {
	// Marshalling a struct of strings, a bool, a slice and a map cannot
	// fail; the secret in it is hashed, never written out.
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
