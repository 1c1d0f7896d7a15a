package httpapi

import (
	"net/http"
	"sync"
)

// Lazy is the handler that build returns, made by the first request it
// serves rather than at start-up: a part that few requests reach (the
// dashboard's API) then costs a start nothing before its first answer.
func Lazy(build func() http.Handler) http.Handler {
	h := sync.OnceValue(build)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h().ServeHTTP(w, r) })
}
