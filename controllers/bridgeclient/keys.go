package bridgeclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/msgbridge/msgbridge/contract"
)

// Keys lists the bridge's scoped API keys (without secrets).
func (c *Client) Keys(ctx context.Context, baseURL, adminToken string) ([]contract.APIKeyView, error) {
	var out contract.APIKeyList
	if err := c.call(ctx, http.MethodGet, baseURL+contract.AdminKeysPath, adminToken, nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// PutKey stores the resource's key k with its secret, replacing it.
func (c *Client) PutKey(ctx context.Context, baseURL, adminToken string, k contract.APIKey) error {
	return c.call(ctx, http.MethodPut, keyURL(baseURL, k.Name), adminToken, k, nil)
}

// DeleteKey revokes the key name; one already gone is no error.
func (c *Client) DeleteKey(ctx context.Context, baseURL, adminToken, name string) error {
	err := c.call(ctx, http.MethodDelete, keyURL(baseURL, name), adminToken, nil, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	return err
}

func keyURL(baseURL, name string) string {
	return baseURL + contract.AdminKeysPath + "/" + url.PathEscape(name)
}
