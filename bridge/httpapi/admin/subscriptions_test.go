package admin

import "testing"

// Item 8: a cloud subscription's secret may be the raw Meta app secret;
// other formats keep whsec_.
func TestSubscriptionSecretRawForCloud(t *testing.T) {
	const appSecret = "0123456789abcdef0123456789abcdef"
	if key, err := subscriptionSecret("cloud", appSecret); err != nil || string(key) != appSecret {
		t.Errorf("a raw app secret for cloud: %q %v", key, err)
	}
	if _, err := subscriptionSecret("standard", appSecret); err == nil {
		t.Error("a raw secret was taken for the standard format")
	}
	if _, err := subscriptionSecret("cloud", "has space"); err == nil {
		t.Error("a secret with a space was taken")
	}
}
