package bridge

import (
	"net/http"
	"testing"
)

// Every kind but the internal one answers with a status of its own: a kind
// added without a row would answer 500 and read as the bridge's fault.
func TestEveryKindHasItsHTTPStatus(t *testing.T) {
	seen := map[int]Kind{}
	for k := KindInternal; k <= KindForbidden; k++ {
		status := k.HTTPStatus()
		if k != KindInternal && status == http.StatusInternalServerError {
			t.Errorf("kind %d answers 500", k)
		}
		if other, dup := seen[status]; dup {
			t.Errorf("kinds %d and %d both answer %d", other, k, status)
		}
		seen[status] = k
	}
}
