package httpapi_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// csvRows reads a CSV answer whole.
func csvRows(t *testing.T, r response) [][]string {
	t.Helper()
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV answer: %d %s: %.300s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCSVExports: ?format=csv streams the ledger (across more than one of
// the store's pages, every entry once, newest first, balances matching)
// and the task list (its filters applied) as text/csv with a header row;
// a formula-like prompt is defused; a bad format is 400.
func TestCSVExports(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(100, false)
		ctx := context.Background()
		const grants = 520 // more than one page of the export (500)
		for range grants {
			if _, err := s.store.Grant(ctx, h.account, 1, "top", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		for _, body := range []map[string]any{flux("=HYPERLINK(\"x\")"), flux("a cat"), {"type": "image", "modelId": "flux-schnell", "prompt": "a dog"}} {
			ids = append(ids, wantAccepted(t, s.generate(h.key, body, async)))
		}
		test := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "t", "test": true}})
		testID := wantAccepted(t, s.generate(test.str("key"), flux("a test"), async))

		rows := csvRows(t, s.do(call{Method: "GET", Path: "/api/v1/account/ledger?format=csv", Key: h.key}))
		entries := s.ledgerCheck(h.account)
		if strings.Join(rows[0], ",") != "id,createdAt,kind,amount,balanceAfter,taskId,note" || len(rows) != len(entries)+1 {
			t.Fatalf("ledger CSV: header %v, %d rows for %d entries", rows[0], len(rows)-1, len(entries))
		}
		seen := map[string]bool{}
		for i, row := range rows[1:] {
			e := entries[len(entries)-1-i] // newest first
			if row[0] != itoa(int(e.ID)) || row[2] != e.Kind || row[3] != itoa(e.Amount) || seen[row[0]] {
				t.Fatalf("ledger row %d %v, entry %+v", i, row, e)
			}
			seen[row[0]] = true
		}
		if rows[1][4] != itoa(s.balance(h.account)) {
			t.Errorf("newest balanceAfter %s, balance %d", rows[1][4], s.balance(h.account))
		}

		tasks := csvRows(t, s.do(call{Method: "GET", Path: "/api/generation/jobs?format=csv&modelId=flux&test=false", Key: h.key}))
		if strings.Join(tasks[0], ",") != "jobId,createdAt,completedAt,status,type,modelId,cost,engine,test,keyId,prompt" || len(tasks) != 3 {
			t.Fatalf("tasks CSV: %v", tasks)
		}
		if tasks[1][0] != ids[1] || tasks[2][0] != ids[0] || tasks[2][10] != `'=HYPERLINK("x")` || tasks[1][6] != "4" {
			t.Errorf("tasks CSV rows: %v", tasks[1:])
		}
		all := csvRows(t, s.do(call{Method: "GET", Path: "/api/generation/jobs?format=csv", Key: h.key}))
		if len(all) != 5 || all[1][0] != testID || all[1][8] != "true" {
			t.Errorf("all tasks CSV: %v", all)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/generation/jobs?format=xml", Key: h.key}), http.StatusBadRequest, gengate.EInvalid)
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/account/ledger?format=xml", Key: h.key}), http.StatusBadRequest, gengate.EInvalid)
		if json := s.do(call{Method: "GET", Path: "/api/v1/account/ledger?format=json&limit=2", Key: h.key}); len(json.JSON["data"].([]any)) != 2 {
			t.Errorf("format=json: %s", json)
		}
	})
}

// TestDailyUsage: GET /api/v1/account/usage/daily sums the day's charges
// net of refunds per model and key (a refunded task counts, at 0), as
// JSON and as CSV; a bad days is 400.
func TestDailyUsage(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect, noWorkers: true})
		h := s.holder(100, false)
		b := s.do(call{Method: "POST", Path: "/api/v1/keys", Key: h.key, Body: map[string]any{"name": "b"}})
		wantStatus(t, b, http.StatusCreated)
		wantAccepted(t, s.generate(h.key, flux("one"), async))
		failed := wantAccepted(t, s.generate(h.key, flux("two"), async))
		wantAccepted(t, s.generate(b.str("key"), map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "three"}, async))
		s.failTask(failed, "UPSTREAM_ERROR", false)
		keys := s.do(call{Method: "GET", Path: "/api/v1/keys", Key: h.key}).JSON["data"].([]any)
		keyA := ""
		for _, k := range keys {
			if id := k.(map[string]any)["id"].(string); id != b.str("id") {
				keyA = id
			}
		}
		r := s.do(call{Method: "GET", Path: "/api/v1/account/usage/daily?days=7", Key: h.key})
		wantStatus(t, r, http.StatusOK)
		today := time.Now().UTC().Format(time.DateOnly)
		got := map[string]string{}
		for _, d := range r.JSON["data"].([]any) {
			m := d.(map[string]any)
			got[m["modelId"].(string)] = m["day"].(string) + " " + m["keyId"].(string) + " " + itoa(int(m["tasks"].(float64))) + " " + itoa(int(m["credits"].(float64)))
		}
		want := map[string]string{"flux": today + " " + keyA + " 2 4", "flux-schnell": today + " " + b.str("id") + " 1 2"}
		if len(got) != 2 || got["flux"] != want["flux"] || got["flux-schnell"] != want["flux-schnell"] {
			t.Errorf("daily usage %v, want %v", got, want)
		}
		rows := csvRows(t, s.do(call{Method: "GET", Path: "/api/v1/account/usage/daily?format=csv", Key: h.key}))
		if strings.Join(rows[0], ",") != "day,modelId,keyId,tasks,credits" || len(rows) != 3 {
			t.Errorf("daily usage CSV %v", rows)
		}
		wantProblem(t, s.do(call{Method: "GET", Path: "/api/v1/account/usage/daily?days=0", Key: h.key}), http.StatusBadRequest, gengate.EInvalid)
	})
}
