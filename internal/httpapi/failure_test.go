package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gengate/gengate"
)

// TestFailureStatus: a finished failure answers a status that says it is
// final, by reason (docs/api.md's table), never 500, with the reason, the
// refund and the balance in the problem body.
func TestFailureStatus(t *testing.T) {
	for _, tc := range []struct {
		code       string
		inputFault bool
		status     int
		reason     string
	}{
		{gengate.CodeRejectedInput, true, http.StatusUnprocessableEntity, "UPSTREAM_REJECTED_INPUT"},
		{gengate.CodeContentPolicy, true, http.StatusUnprocessableEntity, "CONTENT_POLICY"},
		{gengate.EFailed, true, http.StatusUnprocessableEntity, ""}, // an input the engine could not use
		{gengate.CodeRefusedAfterReview, false, http.StatusConflict, "REFUSED_AFTER_REVIEW"},
		{gengate.CodeDeadline, false, http.StatusGatewayTimeout, "DEADLINE_EXCEEDED"},
		{gengate.CodeUpstream, false, http.StatusBadGateway, "UPSTREAM_ERROR"},
		{gengate.EFailed, false, http.StatusBadGateway, ""},
	} {
		t.Run(tc.code, func(t *testing.T) {
			a := &api{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			task := &gengate.Task{ID: "t1", Status: gengate.StatusFailed, Cost: 7, ErrorCode: tc.code,
				ErrorMessage: "no", InputFault: tc.inputFault}
			w := httptest.NewRecorder()
			a.writeOutcome(w, httptest.NewRequest("POST", "/api/generation/jobs/t1", nil), &gengate.Outcome{Task: task, Balance: 93})
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body["code"] != gengate.EFailed || body["refunded"] != true || body["creditsRefunded"] != 7.0 ||
				body["remainingCredits"] != 93.0 || body["jobId"] != "t1" {
				t.Errorf("body %s", w.Body)
			}
			if got, _ := body["reason"].(string); got != tc.reason {
				t.Errorf("reason %q, want %q", got, tc.reason)
			}
		})
	}
}
