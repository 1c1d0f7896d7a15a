package bridge

import "net/http"

// httpStatusOfKind is the one table from an error's kind to the HTTP status
// that answers it. Both HTTP doors answer by it: the bridge's own API as it
// is, the Cloud API door as the status it then translates to Graph's.
var httpStatusOfKind = map[Kind]int{
	KindInternal:            http.StatusInternalServerError,
	KindInvalid:             http.StatusBadRequest,
	KindUnauthorized:        http.StatusUnauthorized,
	KindForbidden:           http.StatusForbidden,
	KindNotFound:            http.StatusNotFound,
	KindConflict:            http.StatusConflict,
	KindTooLarge:            http.StatusRequestEntityTooLarge,
	KindUnsupported:         http.StatusUnsupportedMediaType,
	KindRateLimited:         http.StatusTooManyRequests,
	KindUnavailable:         http.StatusServiceUnavailable,
	KindTimeout:             http.StatusGatewayTimeout,
	KindUpstream:            http.StatusBadGateway,
	KindInsufficientStorage: http.StatusInsufficientStorage,
}

// HTTPStatus is the HTTP status that answers an error of kind k; 500 for a
// kind the table lacks.
func (k Kind) HTTPStatus() int {
	if status, ok := httpStatusOfKind[k]; ok {
		return status
	}
	return http.StatusInternalServerError
}
