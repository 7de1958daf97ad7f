package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

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
	gengate.ETooLarge:          http.StatusRequestEntityTooLarge,
	gengate.EUnsupportedMedia:  http.StatusUnsupportedMediaType,
	gengate.EKeyReused:         http.StatusUnprocessableEntity,
	gengate.ERateLimited:       http.StatusTooManyRequests,
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
}

// problem is an RFC 9457 problem details body.
type problem struct {
	Type      string               `json:"type"`
	Title     string               `json:"title"`
	Status    int                  `json:"status"`
	Detail    string               `json:"detail"`
	Code      string               `json:"code"`
	RequestID string               `json:"requestId,omitempty"`
	Errors    []gengate.FieldError `json:"errors,omitempty"`
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
	writeProblem(w, r, status, e)
}

func writeProblem(w http.ResponseWriter, r *http.Request, status int, e *gengate.Error) {
	p := problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: e.Message,
		Code: e.Code, RequestID: requestID(r), Errors: e.Fields}
	body := map[string]any{}
	b, _ := json.Marshal(p)
	_ = json.Unmarshal(b, &body)
	for k, v := range e.Extra {
		// Extension members never replace the RFC 9457 ones: "status" is
		// the HTTP status code, whatever an error's extras say.
		if _, std := body[k]; !std {
			body[k] = v
		}
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
