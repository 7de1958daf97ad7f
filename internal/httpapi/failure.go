package httpapi

import (
	"net/http"

	"github.com/gengate/gengate"
)

// A finished failure is final: the task is refunded and asking again
// answers the same. Its status says so, by reason, and is never 500, which
// clients and their HTTP libraries retry as a passing server fault
// (docs/api.md has the table):
//
//	UPSTREAM_REJECTED_INPUT, CONTENT_POLICY, input faults  422
//	REFUSED_AFTER_REVIEW                                    409
//	DEADLINE_EXCEEDED                                       504
//	UPSTREAM_ERROR, and any other failure                   502
func failureStatus(t *gengate.Task) int {
	switch reason := t.ErrorCode; {
	case reason == gengate.CodeRejectedInput, reason == gengate.CodeContentPolicy, t.InputFault:
		return http.StatusUnprocessableEntity
	case reason == gengate.CodeRefusedAfterReview:
		return http.StatusConflict
	case reason == gengate.CodeDeadline:
		return http.StatusGatewayTimeout
	default:
		return http.StatusBadGateway
	}
}

// failureReason is the reason a failed task shows, "" for a failure that
// has none beyond GENERATION_FAILED.
func failureReason(t *gengate.Task) string {
	if t.ErrorCode == gengate.EFailed {
		return ""
	}
	return t.ErrorCode
}
