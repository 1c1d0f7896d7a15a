package contract

// AdminKeysPath is the bridge's admin API of scoped API keys; the operator
// puts the keys of spec.apiKeys[] under it (PUT <path>/<name>) and deletes
// the ones the spec no longer names.
const AdminKeysPath = "/api/admin/keys"

// APIKey is a scoped API key as the operator puts it: Key is its secret,
// read from the resource's Secret.
type APIKey struct {
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	Chats     []string `json:"chats,omitempty"`
	Budget    int      `json:"budget,omitempty"`
	ExpiresAt *string  `json:"expires_at,omitempty"`
	Approval  bool     `json:"approval,omitempty"`
	Key       string   `json:"key,omitempty"`
}

// APIKeyView is a key as the bridge lists it (never its secret); Source is
// "resource" for the operator's, "api" for those made by hand.
type APIKeyView struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// APIKeyList is the bridge's answer to GET AdminKeysPath.
type APIKeyList struct {
	Keys []APIKeyView `json:"keys"`
}
