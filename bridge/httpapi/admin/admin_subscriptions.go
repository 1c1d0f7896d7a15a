package admin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/contract"
)

// Subscriptions are the receivers of the bridge's events
// (*webhook.Outbox). A change takes effect at once.
type Subscriptions interface {
	List(ctx context.Context) ([]webhook.Status, error)
	// Get: webhook.ErrNoSubscription when absent.
	Get(ctx context.Context, id string) (webhook.Status, error)
	// Create: webhook.ErrSubscriptionExists when the id is taken.
	Create(ctx context.Context, s webhook.Subscription) error
	// Put creates or replaces; it reports whether it created.
	Put(ctx context.Context, s webhook.Subscription) (bool, error)
	// Delete reports whether the subscription existed.
	Delete(ctx context.Context, id string) (bool, error)
}

// subscriptionRequest is the body of POST and PUT. Secret, credentials
// and the headers' values (a bearer token, often) are write-only.
type subscriptionRequest struct {
	ID          *string             `json:"id"`
	Target      string              `json:"target"`
	Events      []string            `json:"events"`
	Format      string              `json:"format"`
	Secret      string              `json:"secret"`
	Credentials webhook.Credentials `json:"credentials"`
	Headers     map[string]string   `json:"headers"`
	Enabled     *bool               `json:"enabled"`
}

type SubscriptionJSON struct {
	ID             string     `json:"id"`
	Target         string     `json:"target"`
	Events         []string   `json:"events"`
	Format         string     `json:"format"`
	HeaderNames    []string   `json:"header_names"`
	Enabled        bool       `json:"enabled"`
	SecretSet      bool       `json:"secret_set"`
	CredentialsSet bool       `json:"credentials_set"`
	CreatedAt      string     `json:"created_at"`
	UpdatedAt      string     `json:"updated_at"`
	Health         healthJSON `json:"health"`
}

type healthJSON struct {
	State         string  `json:"state"`
	Pending       int     `json:"pending"`
	DeadLetters   int     `json:"dead_letters"`
	LastSuccessAt *string `json:"last_success_at"`
	LastFailureAt *string `json:"last_failure_at"`
	LastError     string  `json:"last_error"`
}

var errNoSubscription = bridge.Errorf(bridge.KindNotFound, bridge.CodeSubscriptionNotFound, "no such subscription")

func subscriptionOf(st webhook.Status) SubscriptionJSON {
	h := st.Health
	return SubscriptionJSON{
		ID: st.ID, Target: st.Target, Events: nonNilSlice(st.Events), Format: st.Format, HeaderNames: headerNames(st.Headers),
		Enabled: st.Enabled, SecretSet: len(st.Secret) > 0, CredentialsSet: st.Credentials.Set(),
		CreatedAt: bridge.FormatTime(st.CreatedAt), UpdatedAt: bridge.FormatTime(st.UpdatedAt),
		Health: healthJSON{
			State: h.State, Pending: h.Pending, DeadLetters: h.DeadLetters,
			LastSuccessAt: optionalStamp(h.LastSuccess), LastFailureAt: optionalStamp(h.LastFailure), LastError: h.LastError,
		},
	}
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// headerNames are the names of a subscription's headers, sorted: their
// values are write-only, as the secret.
func headerNames(h map[string]string) []string {
	return nonNilSlice(slices.Sorted(maps.Keys(h)))
}

func optionalStamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := bridge.FormatTime(t)
	return &s
}

// subscriptionError is an error of the store as a *bridge.Error.
func subscriptionError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, webhook.ErrNoSubscription):
		return errNoSubscription
	case errors.Is(err, webhook.ErrSubscriptionExists):
		return bridge.Errorf(bridge.KindConflict, bridge.CodeSubscriptionExists, "a subscription of this id exists; PUT replaces it")
	case errors.Is(err, webhook.ErrManaged):
		return bridge.Errorf(bridge.KindConflict, bridge.CodeSubscriptionManaged,
			"the subscription default is WEBHOOK_URL and WEBHOOK_SECRET: change the settings")
	}
	if _, ok := errors.AsType[*bridge.Error](err); ok {
		return err
	}
	return bridge.Internal(bridge.CodeInternal, "could not read or write the subscriptions", err)
}

func (s *server) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	all, err := s.Subscriptions.List(r.Context())
	if err != nil {
		return subscriptionError(err)
	}
	out := make([]SubscriptionJSON, len(all))
	for i, st := range all {
		out[i] = subscriptionOf(st)
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

func (s *server) getSubscription(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Subscriptions.Get(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		return subscriptionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, subscriptionOf(st))
}

func (s *server) createSubscription(w http.ResponseWriter, r *http.Request) error {
	sub, err := readSubscription(w, r, "")
	if err != nil {
		return err
	}
	if err := s.Subscriptions.Create(r.Context(), sub); err != nil {
		return subscriptionError(err)
	}
	return s.answerSubscription(w, r, sub.ID, http.StatusCreated)
}

func (s *server) putSubscription(w http.ResponseWriter, r *http.Request) error {
	sub, err := readSubscription(w, r, mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	created, err := s.Subscriptions.Put(r.Context(), sub)
	if err != nil {
		return subscriptionError(err)
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	return s.answerSubscription(w, r, sub.ID, code)
}

func (s *server) answerSubscription(w http.ResponseWriter, r *http.Request, id string, code int) error {
	st, err := s.Subscriptions.Get(r.Context(), id)
	if err != nil {
		return subscriptionError(err)
	}
	return httpkit.WriteJSON(w, code, subscriptionOf(st))
}

func (s *server) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	existed, err := s.Subscriptions.Delete(r.Context(), id)
	if err != nil {
		return subscriptionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": existed})
}

// readSubscription decodes a POST (pathID empty: the body
// names the id) or PUT body.
func readSubscription(w http.ResponseWriter, r *http.Request, pathID string) (webhook.Subscription, error) {
	var req subscriptionRequest
	if err := httpkit.DecodeJSON(w, r, &req); err != nil {
		return webhook.Subscription{}, err
	}
	id := pathID
	switch {
	case req.ID != nil && pathID != "" && *req.ID != pathID:
		return webhook.Subscription{}, bridge.Invalid(bridge.CodeInvalidSubscriptionID, "the body's id differs from the path's")
	case req.ID != nil:
		id = *req.ID
	case pathID == "":
		return webhook.Subscription{}, bridge.Invalid(bridge.CodeInvalidSubscriptionID, "id is required")
	}
	key, err := subscriptionSecret(req.Format, req.Secret)
	if err != nil {
		return webhook.Subscription{}, bridge.Invalid(bridge.CodeInvalidSecret, "secret: %s", err.Error())
	}
	sub := webhook.Subscription{
		ID: id, Target: req.Target, Events: slices.Compact(slices.Sorted(slices.Values(req.Events))),
		Format: req.Format, Secret: key, Credentials: req.Credentials, Headers: req.Headers,
		Enabled: req.Enabled == nil || *req.Enabled,
	}
	return sub, nil // the store validates the rest
}

// subscriptionSecret decodes a subscription's secret: whsec_<base64>, or,
// for the cloud format, also a Meta app secret as Meta's dashboard shows it
// (the raw string is the HMAC key of X-Hub-Signature-256, as Meta signs
// with it), so that a receiver's app secret is pasted as it is.
func subscriptionSecret(format, secret string) ([]byte, error) {
	if format != cloudFormat || secret == "" || strings.HasPrefix(secret, contract.WebhookSecretPrefix) {
		return contract.ParseWebhookSecret(secret)
	}
	if len(secret) > contract.MaxWebhookKey || strings.IndexFunc(secret, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return nil, fmt.Errorf("an app secret is 1-%d printable ASCII characters without spaces (or whsec_ followed by base64)", contract.MaxWebhookKey)
	}
	return []byte(secret), nil
}

// cloudFormat is the Cloud API door's webhook format (cloudapi.FormatName,
// which this package does not import).
const cloudFormat = "cloud"
