package httpapi

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
)

// This file is the caller's own account: the account, its ledger, its
// usage, its tasks, and quotes. Every answer is scoped to the account of
// the caller's key or session.

// Page sizes of every list.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

func badField(field, msg string) error {
	return &gengate.Error{Code: gengate.EInvalid, Message: field + " " + msg,
		Fields: []gengate.FieldError{{Field: field, Code: gengate.FieldValue, Message: msg}}}
}

// pageLimit reads ?limit=: 1..100, default 20.
func pageLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPageLimit {
		return 0, badField("limit", fmt.Sprintf("must be a whole number from 1 to %d", MaxPageLimit))
	}
	return n, nil
}

// pageQuery reads the ?limit= and ?cursor= of a list paged by creation
// (a task cursor, "t:<created ms>:<id>").
func pageQuery(r *http.Request) (limit int, after gengate.TaskCursor, err error) {
	if limit, err = pageLimit(r); err != nil {
		return 0, gengate.TaskCursor{}, err
	}
	after, err = readTaskCursor(r)
	return limit, after, err
}

// Cursors are opaque to clients: base64url of a kind letter and the
// position ("l:<ledger id>", "t:<created ms>:<id>").
func encodeCursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// onePage trims a list read with one row beyond limit (so that a full
// page can tell whether another follows) and, when there is a next page,
// sets body's nextCursor from the page's last item.
func onePage[T any](items []T, limit int, body map[string]any, cursor func(last T) string) []T {
	if len(items) > limit {
		items = items[:limit]
		body["nextCursor"] = cursor(items[limit-1])
	}
	return items
}

// createdCursor is the cursor after an item ordered by creation time and id.
func createdCursor(createdAt time.Time, id string) string {
	return taskCursor(gengate.TaskCursor{CreatedAt: createdAt, ID: id})
}

func decodeCursor(r *http.Request, kind string) (string, bool, error) {
	v := r.URL.Query().Get("cursor")
	if v == "" {
		return "", false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	rest, ok := strings.CutPrefix(string(b), kind+":")
	if err != nil || !ok || len(v) > 200 {
		return "", false, badField("cursor", "is not a cursor this list gave")
	}
	return rest, true, nil
}

func taskCursor(t gengate.TaskCursor) string {
	return encodeCursor("t:" + strconv.FormatInt(t.CreatedAt.UnixMilli(), 10) + ":" + t.ID)
}

func readTaskCursor(r *http.Request) (gengate.TaskCursor, error) {
	v, ok, err := decodeCursor(r, "t")
	if !ok || err != nil {
		return gengate.TaskCursor{}, err
	}
	msStr, id, found := strings.Cut(v, ":")
	n, perr := strconv.ParseInt(msStr, 10, 64)
	if !found || perr != nil || id == "" {
		return gengate.TaskCursor{}, badField("cursor", "is not a cursor this list gave")
	}
	return gengate.TaskCursor{CreatedAt: time.UnixMilli(n), ID: id}, nil
}

// accountBody is an Account object with its members.
func (a *api) accountBody(r *http.Request, acct *gengate.Account) (map[string]any, error) {
	members, err := a.svc.Store.ListMembers(r.Context(), acct.ID)
	if err != nil {
		return nil, err
	}
	ms := make([]map[string]any, 0, len(members))
	for _, m := range members {
		ms = append(ms, map[string]any{"id": m.ID, "email": m.Email, "role": m.Role, "createdAt": timestamp(m.CreatedAt)})
	}
	return map[string]any{"id": acct.ID, "name": acct.Name, "remainingCredits": acct.Balance,
		"createdAt": timestamp(acct.CreatedAt), "members": ms}, nil
}

// handleAccount is GET /api/v1/account.
func (a *api) handleAccount() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct, err := a.svc.Store.FindAccount(r.Context(), apiKey(r).AccountID)
		var body map[string]any
		if err == nil {
			body, err = a.accountBody(r, acct)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
}

// handleRenameAccount is PATCH /api/v1/account {"name"}: the account's
// owner (or an operator), signed in, renames it; the answer is the
// account.
func (a *api) handleRenameAccount() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Name string `json:"name"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		acct, err := a.svc.RenameAccount(r.Context(), principalOf(r).member, req.Name)
		var body map[string]any
		if err == nil {
			body, err = a.accountBody(r, acct)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
}

// handleLedger is GET /api/v1/account/ledger.
func (a *api) handleLedger() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.ledgerOf(w, r, apiKey(r).AccountID)
	})
}

// ledgerOf answers a page (or the CSV) of an account's ledger: the
// caller's own, or, for an operator, the account named in the path.
func (a *api) ledgerOf(w http.ResponseWriter, r *http.Request, accountID string) {
	limit, err := pageLimit(r)
	var before int64
	if err == nil {
		var v string
		var ok bool
		v, ok, err = decodeCursor(r, "l")
		if ok {
			before, err = strconv.ParseInt(v, 10, 64)
			if err != nil || before < 1 {
				err = badField("cursor", "is not a cursor this list gave")
			}
		}
	}
	csvOut := false
	if err == nil {
		csvOut, err = wantsCSV(r)
	}
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if csvOut { // exports.go
		a.ledgerCSV(w, r, accountID, before)
		return
	}
	// One more than asked tells whether another page follows.
	entries, err := a.svc.Store.LedgerPage(r.Context(), accountID, before, limit+1)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	body := map[string]any{}
	entries = onePage(entries, limit, body, func(e gengate.LedgerEntry) string {
		return encodeCursor("l:" + strconv.FormatInt(e.ID, 10))
	})
	data := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		d := map[string]any{"id": strconv.FormatInt(e.ID, 10), "kind": e.Kind, "amount": e.Amount,
			"balanceAfter": e.BalanceAfter, "createdAt": timestamp(e.CreatedAt)}
		if e.TaskID != "" {
			d["taskId"] = e.TaskID
		}
		if e.Note != "" {
			d["note"] = e.Note
		}
		data = append(data, d)
	}
	body["data"] = data
	writeJSON(w, http.StatusOK, body)
}

// MaxUsageDays is the longest period GET /api/v1/account/usage sums.
const MaxUsageDays = 366

// usageDays reads ?days= (default 30).
func usageDays(r *http.Request) (int, error) {
	days := 30
	if v := r.URL.Query().Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxUsageDays {
			return 0, badField("days", fmt.Sprintf("must be a whole number from 1 to %d", MaxUsageDays))
		}
		days = n
	}
	return days, nil
}

// handleDailyUsage is GET /api/v1/account/usage/daily?days=30[&format=csv]:
// net credits per UTC day, model and key, for the console's chart.
func (a *api) handleDailyUsage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		days, err := usageDays(r)
		csvOut := false
		if err == nil {
			csvOut, err = wantsCSV(r)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		since := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-days)
		usage, err := a.svc.Store.DailyUsage(r.Context(), apiKey(r).AccountID, since)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if csvOut {
			done := false
			a.streamCSV(w, r, "usage", []string{"day", "modelId", "keyId", "tasks", "credits"}, func() ([][]string, error) {
				if done {
					return nil, nil
				}
				done = true
				rows := make([][]string, 0, len(usage))
				for _, u := range usage {
					rows = append(rows, []string{u.Day.Format(time.DateOnly), u.ModelID, u.KeyID, strconv.Itoa(u.Tasks), strconv.Itoa(u.Credits)})
				}
				return rows, nil
			})
			return
		}
		data := make([]map[string]any, 0, len(usage))
		for _, u := range usage {
			d := map[string]any{"day": u.Day.Format(time.DateOnly), "modelId": u.ModelID, "tasks": u.Tasks, "credits": u.Credits}
			if u.KeyID != "" {
				d["keyId"] = u.KeyID
			}
			data = append(data, d)
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": data})
	})
}

// handleUsage is GET /api/v1/account/usage?days=30.
func (a *api) handleUsage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		days := 30
		if v := r.URL.Query().Get("days"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxUsageDays {
				writeError(w, r, a.log, badField("days", fmt.Sprintf("must be a whole number from 1 to %d", MaxUsageDays)))
				return
			}
			days = n
		}
		since := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
		usage, err := a.svc.Store.Usage(r.Context(), apiKey(r).AccountID, since)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		data := make([]map[string]any, 0, len(usage))
		for _, u := range usage {
			data = append(data, map[string]any{"modelId": u.ModelID, "tasks": u.Tasks, "credits": u.Credits})
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": data})
	})
}

// publicStatuses are the values of ?status= on the task list.
var publicStatuses = map[string]bool{"processing": true, "succeeded": true, "failed": true, "needs_review": true, "canceled": true}

// handleTasks is GET /api/generation/jobs: the account's tasks.
func (a *api) handleTasks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.tasksOf(w, r, apiKey(r).AccountID)
	})
}

// tasksOf answers a page (or the CSV) of an account's tasks: the caller's
// own, or, for an operator, the account named in the path.
func (a *api) tasksOf(w http.ResponseWriter, r *http.Request, accountID string) {
	q := r.URL.Query()
	f := gengate.TaskFilter{Status: q.Get("status"), ModelID: q.Get("modelId"), Type: q.Get("type")}
	var err error
	switch {
	case f.Status != "" && !publicStatuses[f.Status]:
		err = badField("status", "must be processing, succeeded, failed, needs_review or canceled")
	case f.Type != "" && f.Type != "image" && f.Type != "video":
		err = badField("type", `must be "image" or "video"`)
	case len(f.ModelID) > 200:
		err = badField("modelId", "is too long")
	}
	if v := q.Get("test"); v != "" && err == nil {
		test, perr := strconv.ParseBool(v)
		if perr != nil || (v != "true" && v != "false") {
			err = badField("test", `must be "true" or "false"`)
		}
		f.Test = &test
	}
	if err == nil {
		f.Limit, err = pageLimit(r)
	}
	if err == nil {
		f.After, err = readTaskCursor(r)
	}
	csvOut := false
	if err == nil {
		csvOut, err = wantsCSV(r)
	}
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if csvOut { // exports.go
		a.tasksCSV(w, r, accountID, f)
		return
	}
	limit := f.Limit
	f.Limit++
	tasks, err := a.svc.Store.ListAccountTasks(r.Context(), accountID, f)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	body := map[string]any{}
	tasks = onePage(tasks, limit, body, func(t *gengate.Task) string { return createdCursor(t.CreatedAt, t.ID) })
	data := make([]map[string]any, 0, len(tasks))
	for _, t := range tasks {
		data = append(data, a.taskRecord(r, t))
	}
	body["data"] = data
	writeJSON(w, http.StatusOK, body)
}

// addTaskDetails adds what the account area shows of a task besides its
// status: prompt, options, inputs, engine, and whether it is a sandbox
// placeholder.
func addTaskDetails(body map[string]any, t *gengate.Task) {
	body["prompt"] = t.Prompt
	opts := t.Options
	if opts == nil {
		opts = map[string]any{}
	}
	body["options"] = opts
	inputs := t.InputURLs
	if inputs == nil {
		inputs = map[string]string{}
	}
	body["inputs"] = inputs
	body["engine"] = t.Engine
	body["placeholder"] = t.Engine == "sandbox"
	if t.Test() {
		body["test"] = true
	}
}

// handleQuote is POST /api/v1/quote (a generate body) and GET
// /api/v1/quote?type=&modelId=&... (the same fields as query parameters).
func (a *api) handleQuote() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A POST body is decoded as it arrives, as generate's is.
		var body io.Reader
		if r.Method == http.MethodPost {
			opened, err := openBody(r)
			if err != nil {
				writeError(w, r, a.log, err)
				return
			}
			body = opened
		} else {
			body = bytes.NewReader(queryBody(r))
		}
		read := &bodyReader{r: body}
		q, err := a.svc.QuoteFrom(r.Context(), apiKey(r), read)
		if err != nil && read.err != nil && read.err != io.EOF {
			err = bodyError(r, read.err)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"modelId": q.ModelID, "type": q.Type, "cost": q.Cost,
			"remainingCredits": q.Balance, "engine": q.Engine, "placeholder": q.Placeholder})
	})
}
