package httpapi

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// This file is the lists' CSV form (?format=csv): the ledger and the task
// list streamed as text/csv, a header row then one row per item, read
// from the store a page at a time and flushed after each page, so an
// export of any length holds one page in memory. The list's filters
// apply; limit does not (the export runs to the end of the list), cursor
// starts it where a page would.

// csvPage is how many items an export reads from the store at once.
const csvPage = 500

// wantsCSV reads ?format=: "csv", or "json" and absent for the JSON page.
func wantsCSV(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("format") {
	case "", "json":
		return false, nil
	case "csv":
		return true, nil
	}
	return false, badField("format", `must be "csv" or "json"`)
}

// csvText guards a free-text cell against spreadsheet formulas (a cell
// that starts with =, +, -, @ or a tab is read as one by Excel and its
// kin): such a cell gets a leading apostrophe.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// streamCSV answers a CSV export: next returns each page's rows in turn,
// none at the end. The first page is read before anything is written, so
// a failure then is a problem answer; a later failure cuts the export
// short (logged), since the status is sent by then.
func (a *api) streamCSV(w http.ResponseWriter, r *http.Request, name string, header []string, next func() ([][]string, error)) {
	rows, err := next()
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`-`+time.Now().UTC().Format("20060102")+`.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	_ = cw.Write(header)
	flusher, _ := w.(http.Flusher)
	for len(rows) > 0 {
		for _, row := range rows {
			if err := cw.Write(row); err != nil {
				return
			}
		}
		cw.Flush()
		if cw.Error() != nil {
			return // the client went away
		}
		if flusher != nil {
			flusher.Flush()
		}
		if rows, err = next(); err != nil {
			a.log.ErrorContext(r.Context(), "CSV export cut short", "err", err, "requestId", requestID(r))
			return
		}
	}
	cw.Flush()
}

// ledgerCSV streams the account's ledger from before (0: the newest).
func (a *api) ledgerCSV(w http.ResponseWriter, r *http.Request, accountID string, before int64) {
	done := false
	a.streamCSV(w, r, "ledger", []string{"id", "createdAt", "kind", "amount", "balanceAfter", "taskId", "note"}, func() ([][]string, error) {
		if done {
			return nil, nil
		}
		entries, err := a.svc.Store.LedgerPage(r.Context(), accountID, before, csvPage)
		if err != nil {
			return nil, err
		}
		done = len(entries) < csvPage
		rows := make([][]string, 0, len(entries))
		for _, e := range entries {
			rows = append(rows, []string{strconv.FormatInt(e.ID, 10), timestamp(e.CreatedAt), e.Kind, strconv.Itoa(e.Amount),
				strconv.Itoa(e.BalanceAfter), e.TaskID, csvText(e.Note)})
			before = e.ID
		}
		return rows, nil
	})
}

// tasksCSV streams the account's tasks matching f.
func (a *api) tasksCSV(w http.ResponseWriter, r *http.Request, accountID string, f gengate.TaskFilter) {
	done := false
	f.Limit = csvPage
	header := []string{"jobId", "createdAt", "completedAt", "status", "type", "modelId", "cost", "engine", "test", "keyId", "prompt"}
	a.streamCSV(w, r, "tasks", header, func() ([][]string, error) {
		if done {
			return nil, nil
		}
		tasks, err := a.svc.Store.ListAccountTasks(r.Context(), accountID, f)
		if err != nil {
			return nil, err
		}
		done = len(tasks) < csvPage
		rows := make([][]string, 0, len(tasks))
		for _, t := range tasks {
			completed := ""
			if !t.CompletedAt.IsZero() {
				completed = timestamp(t.CompletedAt)
			}
			rows = append(rows, []string{t.ID, timestamp(t.CreatedAt), completed, t.Status.Public(), t.Type, t.ModelID,
				strconv.Itoa(t.Cost), t.Engine, strconv.FormatBool(t.Test()), t.KeyID, csvText(t.Prompt)})
			f.After = gengate.TaskCursor{CreatedAt: t.CreatedAt, ID: t.ID}
		}
		return rows, nil
	})
}
