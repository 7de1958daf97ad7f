package httpapi

import (
	"net/http"

	"github.com/gengate/gengate"
)

// handleCancel is POST /api/generation/jobs/{id}/cancel: the rules are
// gengate.Service.Cancel's (docs/api.md, "Cancel"). It answers the task
// record (200) of the canceled task, or a problem that changed nothing.
func (a *api) handleCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, err := a.svc.Cancel(r.Context(), apiKey(r).AccountID, r.PathValue("id"))
		if err != nil {
			if e, ok := err.(*gengate.Error); ok && e.Code == gengate.ETaskBusy {
				w.Header().Set("Retry-After", "1")
			}
			writeError(w, r, a.log, err)
			return
		}
		body := a.taskRecord(r, o.Task)
		body["remainingCredits"] = o.Balance
		writeJSON(w, http.StatusOK, body)
	})
}

// canceledProblem is what a canceled task's statusUrl answers (POST and
// the generate replay): 409 GENERATION_CANCELED, final, not to be retried.
func canceledProblem(o *gengate.Outcome) *gengate.Error {
	t := o.Task
	credits := 0
	if t.Refunded() {
		credits = t.Cost
	}
	return &gengate.Error{Code: gengate.ECanceled, Message: "the generation was canceled: " + t.ErrorMessage,
		Extra: map[string]any{"jobId": t.ID, "jobStatus": t.Status.Public(), "refunded": t.Refunded(),
			"creditsRefunded": credits, "remainingCredits": o.Balance, "reason": t.ErrorCode}}
}

// canceledRecord is the error member of a canceled task's record.
func canceledRecord(t *gengate.Task) map[string]any {
	credits := 0
	if t.Refunded() {
		credits = t.Cost
	}
	return map[string]any{"code": gengate.ECanceled, "message": t.ErrorMessage, "refunded": t.Refunded(),
		"creditsRefunded": credits, "reason": t.ErrorCode}
}
