package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// reconcileSubscriptions renders spec.subscriptions into the bridge through
// its admin API and reports their health. It runs only for a bridge that
// has subscriptions, or had them (its condition is still there: the ones it
// rendered must be deleted), so that a bridge without any is not asked
// about them at every poll. unreachable says why the bridge cannot be asked
// this round ("" when it can).
func (r *MessagingBridgeReconciler) reconcileSubscriptions(ctx context.Context, rd *round, unreachable string) {
	mb := rd.mb
	had := meta.FindStatusCondition(mb.Status.Conditions, msgbridgev1alpha1.ConditionSubscriptionsHealthy) != nil
	if len(mb.Spec.Subscriptions) == 0 && !had {
		return
	}
	observed := map[string]conditions.SubscriptionObservation{}
	if unreachable == "" {
		var err error
		observed, err = r.syncSubscriptions(ctx, rd)
		if err != nil {
			unreachable = err.Error()
		}
	}
	var statuses []msgbridgev1alpha1.SubscriptionStatus
	for _, s := range mb.Spec.Subscriptions {
		o, ok := observed[s.Name]
		if !ok {
			o.Unknown = "the bridge could not be asked"
		}
		statuses = append(statuses, conditions.SubscriptionStatus(s.Name, o))
	}
	rd.status.Subscriptions = statuses
	if len(statuses) == 0 && unreachable == "" {
		// Every subscription it rendered is gone from the bridge.
		meta.RemoveStatusCondition(&rd.status.Conditions, msgbridgev1alpha1.ConditionSubscriptionsHealthy)
		forgetConditionMetrics(mb.Namespace, mb.Name, msgbridgev1alpha1.ConditionSubscriptionsHealthy)
		return
	}
	rd.setCondition(conditions.SubscriptionsHealthy(statuses, unreachable))
}

// syncSubscriptions puts each subscription of the spec that the bridge does
// not hold as last rendered, deletes the k8s- ones the spec no longer
// names, and reads their health. An error means the bridge could not be
// asked, or could not delete a stale one (retried next poll).
func (r *MessagingBridgeReconciler) syncSubscriptions(ctx context.Context, rd *round) (map[string]conditions.SubscriptionObservation, error) {
	token, err := r.roundAdminToken(ctx, rd)
	if err != nil {
		return nil, err
	}
	base, key := r.bridgeURL(rd.mb), client.ObjectKeyFromObject(rd.mb)
	held, err := r.bridge().Subscriptions(ctx, base, token)
	if err != nil {
		return nil, subscriptionsUnreadable(err)
	}
	heldByID := map[string]*contract.SubscriptionView{}
	for i := range held {
		heldByID[held[i].ID] = &held[i]
	}
	observed := map[string]conditions.SubscriptionObservation{}
	changed := false
	for _, s := range rd.mb.Spec.Subscriptions {
		rendered, invalid, err := r.renderSubscription(ctx, rd.mb, s)
		switch {
		case err != nil:
			return nil, err
		case invalid != "":
			// What the bridge holds stays: a Secret deleted by mistake
			// must not stop the deliveries.
			observed[s.Name] = conditions.SubscriptionObservation{Invalid: invalid}
			continue
		}
		digest := specs.SubscriptionDigest(rendered)
		if heldByID[rendered.ID] != nil && r.subscriptions.applied(key, rendered.ID) == digest {
			continue
		}
		if err := r.bridge().PutSubscription(ctx, base, token, rendered); err != nil {
			if !bridgeclient.IsRefused(err) {
				return nil, fmt.Errorf("putting subscription %s: %w", rendered.ID, err)
			}
			observed[s.Name] = conditions.SubscriptionObservation{Invalid: "the bridge refused it: " + err.Error()}
			continue
		}
		r.subscriptions.record(key, rendered.ID, digest)
		changed = true
	}
	for _, id := range specs.StaleSubscriptions(rd.mb, held) {
		if err := r.bridge().DeleteSubscription(ctx, base, token, id); err != nil {
			return nil, fmt.Errorf("deleting subscription %s: %w", id, err)
		}
		r.subscriptions.record(key, id, "")
		log.FromContext(ctx).Info("deleted a subscription the spec no longer names", "subscription", id)
		changed = true
	}
	if changed {
		// The health of what was just put.
		if held, err = r.bridge().Subscriptions(ctx, base, token); err != nil {
			return nil, subscriptionsUnreadable(err)
		}
	}
	return withHealth(rd.mb, observed, held), nil
}

// withHealth completes observed with the bridge's entry of each subscription
// not already found invalid.
func withHealth(mb *msgbridgev1alpha1.MessagingBridge, observed map[string]conditions.SubscriptionObservation, held []contract.SubscriptionView) map[string]conditions.SubscriptionObservation {
	for _, s := range mb.Spec.Subscriptions {
		if _, ok := observed[s.Name]; ok {
			continue
		}
		o := conditions.SubscriptionObservation{Unknown: "the bridge does not list it"}
		for i := range held {
			if held[i].ID == specs.SubscriptionID(s.Name) {
				o = conditions.SubscriptionObservation{View: &held[i]}
			}
		}
		observed[s.Name] = o
	}
	return observed
}

func subscriptionsUnreadable(err error) error {
	var se *bridgeclient.StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return errors.New("the bridge has no subscriptions API (GET " + contract.AdminSubscriptionsPath + " is 404): its image predates subscriptions")
	}
	return fmt.Errorf("reading the subscriptions: %w", err)
}

// renderSubscription builds the bridge's body of s with its secret and
// credentials. A missing Secret or key makes it invalid (the message says
// which, never a value); err is a failure to read that retries.
func (r *MessagingBridgeReconciler) renderSubscription(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge, s msgbridgev1alpha1.SubscriptionSpec) (contract.Subscription, string, error) {
	var secrets specs.SubscriptionSecrets
	if ref := s.SecretRef; ref != nil {
		data, invalid, err := r.subscriptionSecret(ctx, mb, ref.Name)
		if invalid != "" || err != nil {
			return contract.Subscription{}, invalid, err
		}
		value, ok := data[ref.Key]
		if !ok {
			return contract.Subscription{}, fmt.Sprintf("Secret %s has no key %q", ref.Name, ref.Key), nil
		}
		secrets.Signing = value
	}
	if ref := s.CredentialsSecretRef; ref != nil {
		data, invalid, err := r.subscriptionSecret(ctx, mb, ref.Name)
		if invalid != "" || err != nil {
			return contract.Subscription{}, invalid, err
		}
		if secrets.Credentials, invalid = specs.SubscriptionCredentials(s, ref.Name, data); invalid != "" {
			return contract.Subscription{}, invalid, nil
		}
	}
	return specs.Subscription(s, secrets), "", nil
}

// subscriptionSecret is the data of the Secret name of mb's namespace;
// invalid says that it does not exist.
func (r *MessagingBridgeReconciler) subscriptionSecret(ctx context.Context, mb *msgbridgev1alpha1.MessagingBridge, name string) (map[string][]byte, string, error) {
	secret, err := r.readSecret(ctx, types.NamespacedName{Namespace: mb.Namespace, Name: name})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("Secret %s not found", name), nil
	case err != nil:
		return nil, "", err
	}
	return secret.Data, "", nil
}

// subscriptionMemory remembers, per MessagingBridge and subscription id, the
// digest of what the operator last put into the bridge. After an operator
// restart it is empty: each subscription is put once more, which the
// bridge takes as a replacement with the same values.
type subscriptionMemory struct {
	mu      sync.Mutex
	digests map[types.NamespacedName]map[string]string
}

func (m *subscriptionMemory) applied(key types.NamespacedName, id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.digests[key][id]
}

// record notes digest as what the bridge holds for id; "" forgets it.
func (m *subscriptionMemory) record(key types.NamespacedName, id, digest string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.digests == nil {
		m.digests = map[types.NamespacedName]map[string]string{}
	}
	if m.digests[key] == nil {
		m.digests[key] = map[string]string{}
	}
	if digest == "" {
		delete(m.digests[key], id)
		return
	}
	m.digests[key][id] = digest
}

// any reports whether anything was recorded for key.
func (m *subscriptionMemory) any(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.digests[key]) > 0
}

func (m *subscriptionMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.digests, key)
}
