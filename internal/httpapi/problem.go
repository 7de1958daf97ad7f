package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gengate/gengate"
)

// statusOf maps each error code to its HTTP status: the one table that does.
var statusOf = map[string]int{
	gengate.EInvalid:           http.StatusBadRequest,
	gengate.EUnsupportedOption: http.StatusBadRequest,
	gengate.EUnauthorized:      http.StatusUnauthorized,
	gengate.EInsufficient:      http.StatusPaymentRequired,
	gengate.ENotFound:          http.StatusNotFound,
	gengate.EMethodNotAllowed:  http.StatusMethodNotAllowed,
	gengate.ENeedsReview:       http.StatusConflict,
	gengate.EKeyInUse:          http.StatusConflict,
	gengate.EConflict:          http.StatusConflict,
	gengate.ETaskFinished:      http.StatusConflict,
	gengate.ETaskBusy:          http.StatusConflict,
	gengate.ECanceled:          http.StatusConflict,
	gengate.ETooLarge:          http.StatusRequestEntityTooLarge,
	gengate.EUnsupportedMedia:  http.StatusUnsupportedMediaType,
	gengate.EKeyReused:         http.StatusUnprocessableEntity,
	gengate.ERateLimited:       http.StatusTooManyRequests,
	gengate.EOverloaded:        http.StatusServiceUnavailable,
	gengate.EServerKey:         http.StatusServiceUnavailable,
	gengate.EFailed:            http.StatusInternalServerError,
	gengate.EInternal:          http.StatusInternalServerError,
	// The account area's.
	gengate.EInvalidCredentials: http.StatusUnauthorized,
	gengate.EInvalidLink:        http.StatusUnauthorized,
	gengate.ESignupClosed:       http.StatusForbidden,
	gengate.EEmailTaken:         http.StatusConflict,
	gengate.ECSRF:               http.StatusForbidden,
	gengate.EForbidden:          http.StatusForbidden,
	gengate.ESpendLimit:         http.StatusPaymentRequired,
	gengate.ECodeUnknown:        http.StatusNotFound,
	gengate.ECodeUsed:           http.StatusConflict,
	gengate.ECodeExpired:        http.StatusGone,
	gengate.ESignature:          http.StatusBadRequest,
	gengate.ECrossOrigin:        http.StatusForbidden,
	gengate.EKeyWider:           http.StatusForbidden,
	gengate.EKeyLimit:           http.StatusConflict,
}

// writeError answers with err as a problem body. The client gets the
// message of a *gengate.Error; anything else is logged and reported as
// INTERNAL without its text.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *gengate.Error
	if !errors.As(err, &e) {
		log.ErrorContext(r.Context(), "internal error", "err", err, "requestId", requestID(r))
		e = gengate.Errorf(gengate.EInternal, "internal error; the request id identifies it in the logs")
	}
	status := statusOf[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if e.Code == gengate.EOverloaded && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(overloadedRetryAfter))
	}
	if secs, ok := e.Extra["retryAfter"].(int); ok && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	writeProblem(w, r, status, e)
}

// overloadedRetryAfter is the Retry-After, in seconds, of a 503 OVERLOADED:
// the work in flight it waits for (an input being checked, an image
// operation) takes seconds.
const overloadedRetryAfter = 2

// writeProblem answers with e as a problem body, encoded once: the RFC 9457
// members and the error's extension members in one map.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, e *gengate.Error) {
	body := make(map[string]any, 7+len(e.Extra))
	for k, v := range e.Extra {
		body[k] = v
	}
	// Extension members never replace the RFC 9457 ones: "status" is the
	// HTTP status code, whatever an error's extras say.
	body["type"], body["title"], body["status"] = "about:blank", http.StatusText(status), status
	body["detail"], body["code"] = e.Message, e.Code
	delete(body, "requestId")
	if id := requestID(r); id != "" {
		body["requestId"] = id
	}
	delete(body, "errors")
	if len(e.Fields) > 0 {
		body["errors"] = e.Fields
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
