package httpapi

import "net/http"

// The operator's view of one account's tasks and ledger: the same lists
// (filters, paging, CSV) the account's holders get of their own, for the
// account named in the path. An unknown account is 404 NOT_FOUND.

// handleAdminAccountTasks is GET /api/v1/admin/accounts/{id}/tasks.
func (a *api) handleAdminAccountTasks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct, err := a.svc.Store.FindAccount(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.tasksOf(w, r, acct.ID)
	})
}

// handleAdminAccountLedger is GET /api/v1/admin/accounts/{id}/ledger.
func (a *api) handleAdminAccountLedger() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct, err := a.svc.Store.FindAccount(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.ledgerOf(w, r, acct.ID)
	})
}
