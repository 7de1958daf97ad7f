package httpapi

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// This file is the operator's endpoints, /api/v1/admin/*: accounts,
// credits, sign-in links, the review queue and the engines. Only a member
// with the operator role (by session) or an operator key (made by the CLI,
// gengate keys create --operator) may use them; everyone else, other keys
// of an operator's account included, gets 403 FORBIDDEN.

func (a *api) adminRoutes(mux gatedMux) {
	op := func(h http.Handler) http.Handler { return a.auth(a.operator(h)) }
	mux.Handle("GET /api/v1/admin/accounts", bodyNone, op(a.handleAdminAccounts()))
	mux.Handle("POST /api/v1/admin/accounts", bodyJSON(a.cfg.MaxJSONBody), op(a.handleAdminCreateAccount()))
	mux.Handle("GET /api/v1/admin/accounts/{id}", bodyNone, op(a.handleAdminAccount()))
	mux.Handle("GET /api/v1/admin/accounts/{id}/tasks", bodyNone, op(a.handleAdminAccountTasks()))
	mux.Handle("GET /api/v1/admin/accounts/{id}/ledger", bodyNone, op(a.handleAdminAccountLedger()))
	mux.Handle("POST /api/v1/admin/accounts/{id}/credits", bodyJSON(a.cfg.MaxJSONBody), op(a.handleAdminCredits()))
	mux.Handle("POST /api/v1/admin/accounts/{id}/link", bodyJSON(a.cfg.MaxJSONBody), op(a.handleAdminLink()))
	mux.Handle("GET /api/v1/admin/review", bodyNone, op(a.handleAdminReview()))
	mux.Handle("POST /api/v1/admin/review/{jobId}", bodyJSON(a.cfg.MaxJSONBody), op(a.handleAdminSettle()))
	mux.Handle("GET /api/v1/admin/engines", bodyNone, op(a.handleAdminEngines()))
	mux.Handle("POST /api/v1/admin/codes", bodyJSON(a.cfg.MaxJSONBody), op(a.handleAdminCodes()))
	mux.Handle("GET /api/v1/admin/purchases", bodyNone, op(a.handleAdminPurchases()))
}

// operator lets only operators through.
func (a *api) operator(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principalOf(r)
		if !gengate.IsOperator(p.member, p.key) {
			writeError(w, r, a.log, gengate.Errorf(gengate.EForbidden,
				"only operators may use this endpoint: an operator's session, or a key made with gengate keys create --operator"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *api) handleAdminAccounts() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, after, err := pageQuery(r)
		q := strings.TrimSpace(r.URL.Query().Get("q"))
		if err == nil && len(q) > 200 {
			err = badField("q", "is too long")
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		accts, err := a.svc.Store.ListAccounts(r.Context(), q, after, limit+1)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := map[string]any{}
		accts = onePage(accts, limit, body, func(a gengate.Account) string { return createdCursor(a.CreatedAt, a.ID) })
		data := make([]map[string]any, 0, len(accts))
		for i := range accts {
			b, err := a.accountBody(r, &accts[i])
			if err != nil {
				writeError(w, r, a.log, err)
				return
			}
			data = append(data, b)
		}
		body["data"] = data
		writeJSON(w, http.StatusOK, body)
	})
}

func (a *api) handleAdminCreateAccount() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Email    string `json:"email"`
			Name     string `json:"name"`
			Credits  *int   `json:"credits"`
			Operator bool   `json:"operator"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if req.Credits == nil {
			writeError(w, r, a.log, &gengate.Error{Code: gengate.EInvalid, Message: "credits is required",
				Fields: []gengate.FieldError{{Field: "credits", Code: gengate.FieldRequired, Message: "is required"}}})
			return
		}
		acct, m, token, err := a.svc.CreateAccountWithLink(r.Context(), req.Email, req.Name, *req.Credits, req.Operator)
		var body map[string]any
		if err == nil {
			body, err = a.accountBody(r, acct)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.log.InfoContext(r.Context(), "account created by operator", "account", acct.ID, "member", m.ID, "credits", *req.Credits)
		writeJSON(w, http.StatusCreated, map[string]any{"account": body, "setupLink": gengate.LinkURL(a.baseURL(r), token)})
	})
}

func (a *api) handleAdminAccount() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct, err := a.svc.Store.FindAccount(r.Context(), r.PathValue("id"))
		var body map[string]any
		if err == nil {
			body, err = a.accountBody(r, acct)
		}
		var keys map[string]any
		if err == nil {
			// The newest page of keys (limit and cursor page on).
			keys, err = a.keyPage(r, acct.ID)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body["keys"] = keys["data"]
		if c, ok := keys["nextCursor"]; ok {
			body["keysNextCursor"] = c
		}
		writeJSON(w, http.StatusOK, body)
	})
}

func (a *api) handleAdminCredits() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Credits int    `json:"credits"`
			Note    string `json:"note"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		switch {
		case req.Credits == 0:
			writeError(w, r, a.log, badField("credits", "must be a whole number other than 0 (negative removes credits)"))
			return
		case len(req.Note) > 500:
			writeError(w, r, a.log, badField("note", "must be at most 500 bytes"))
			return
		case req.Note == "":
			req.Note = "operator grant"
		}
		balance, err := a.svc.Store.Grant(r.Context(), r.PathValue("id"), req.Credits, req.Note, time.Now())
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.log.InfoContext(r.Context(), "credits granted", "account", r.PathValue("id"), "credits", req.Credits)
		writeJSON(w, http.StatusOK, map[string]any{"remainingCredits": balance})
	})
}

func (a *api) handleAdminLink() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Email string `json:"email"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		email, err := gengate.NormalizeEmail(req.Email)
		var m *gengate.Member
		if err == nil {
			m, err = a.svc.Store.FindMemberByEmail(r.Context(), email)
		}
		if err == nil && m.AccountID != r.PathValue("id") {
			err = gengate.Errorf(gengate.ENotFound, "account %s has no member with this email", r.PathValue("id"))
		}
		var token string
		if err == nil {
			token, err = a.svc.IssueLink(r.Context(), m.ID, gengate.LinkSignIn)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"link": gengate.LinkURL(a.baseURL(r), token)})
	})
}

func (a *api) handleAdminReview() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, after, err := pageQuery(r)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		tasks, err := a.svc.Store.ListReview(r.Context(), after, limit+1)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		body := map[string]any{}
		tasks = onePage(tasks, limit, body, func(t *gengate.Task) string { return createdCursor(t.CreatedAt, t.ID) })
		names := map[string]string{}
		data := make([]map[string]any, 0, len(tasks))
		for _, t := range tasks {
			name, ok := names[t.AccountID]
			if !ok {
				acct, err := a.svc.Store.FindAccount(r.Context(), t.AccountID)
				if err != nil {
					writeError(w, r, a.log, err)
					return
				}
				name, names[t.AccountID] = acct.Name, acct.Name
			}
			rec := a.taskRecord(r, t)
			rec["accountId"], rec["accountName"], rec["reviewReason"] = t.AccountID, name, t.ReviewReason
			data = append(data, rec)
		}
		body["data"] = data
		writeJSON(w, http.StatusOK, body)
	})
}

func (a *api) handleAdminSettle() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Action string `json:"action"`
		}
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if req.Action != "deliver" && req.Action != "refund" {
			writeError(w, r, a.log, badField("action", `must be "deliver" or "refund"`))
			return
		}
		t, err := a.svc.Settle(r.Context(), r.PathValue("jobId"), req.Action == "refund")
		if err == nil {
			t, err = a.svc.Store.FindTask(r.Context(), t.ID)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		a.log.InfoContext(r.Context(), "review settled", "jobId", t.ID, "action", req.Action)
		writeJSON(w, http.StatusOK, a.taskRecord(r, t))
	})
}

// probeCache remembers, per engine, whether its provider answered, for a
// minute.
type probeCache struct {
	mu      sync.Mutex
	results map[string]probeResult
}

type probeResult struct {
	ok bool
	at time.Time
}

// ProbeTTL is how long an engine's reachability is remembered.
const ProbeTTL = time.Minute

func (a *api) probe(ctx context.Context, names []string) map[string]probeResult {
	out := map[string]probeResult{}
	if a.cfg.Accounts.Probe == nil {
		return out
	}
	now := time.Now()
	var stale []string
	a.probes.mu.Lock()
	for _, n := range names {
		if res, ok := a.probes.results[n]; ok && now.Sub(res.at) < ProbeTTL {
			out[n] = res
		} else {
			stale = append(stale, n)
		}
	}
	a.probes.mu.Unlock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, n := range stale {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			err := a.cfg.Accounts.Probe(pctx, n)
			cancel()
			mu.Lock()
			out[n] = probeResult{ok: err == nil, at: time.Now()}
			mu.Unlock()
		}()
	}
	wg.Wait()
	a.probes.mu.Lock()
	for _, n := range stale {
		a.probes.results[n] = out[n]
	}
	a.probes.mu.Unlock()
	return out
}

func engineKind(name string) string {
	switch name {
	case "sandbox":
		return "sandbox"
	case "builtin":
		return "builtin"
	}
	return "provider"
}

func (a *api) handleAdminEngines() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		type route struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
		}
		type model struct {
			ModelID string  `json:"modelId"`
			Routes  []route `json:"routes"`
		}
		models := map[string][]model{}
		for _, m := range a.svc.Catalog.Models() {
			rs := a.svc.RoutesFor(m)
			routes := make([]route, 0, len(rs))
			seen := map[string]bool{}
			for _, rt := range rs {
				routes = append(routes, route{Provider: rt.Engine, Model: rt.Upstream})
			}
			for _, rt := range rs {
				if !seen[rt.Engine] {
					seen[rt.Engine] = true
					models[rt.Engine] = append(models[rt.Engine], model{ModelID: m.ID, Routes: routes})
				}
			}
		}
		names := make([]string, 0, len(a.svc.Engines))
		var providers []string
		for n := range a.svc.Engines {
			names = append(names, n)
			if engineKind(n) == "provider" {
				providers = append(providers, n)
			}
		}
		sort.Strings(names)
		probed := a.probe(r.Context(), providers)
		// The routes the providers' registries took out of routing, by
		// provider, with why; and the registries that could not be read.
		reg := a.svc.Registry.Report()
		type retired struct {
			ModelID  string `json:"modelId"`
			Upstream string `json:"upstream"`
			State    string `json:"state"`
			Reason   string `json:"reason"`
		}
		out := map[string][]retired{}
		for _, c := range reg.Retired {
			out[c.Engine] = append(out[c.Engine], retired{ModelID: c.ModelID, Upstream: c.Upstream, State: c.State, Reason: c.Reason})
		}
		// Credits charged against upstream cost over the last 30 days, by
		// provider (upstreamcost.go); left out when the store cannot sum.
		costs := map[string][]gengate.ModelCost{}
		all, err := a.svc.UpstreamCosts(r.Context())
		if err != nil {
			a.log.WarnContext(r.Context(), "upstream cost sums", "err", err)
		}
		for _, c := range all {
			costs[c.Engine] = append(costs[c.Engine], c)
		}
		data := make([]map[string]any, 0, len(names))
		for _, n := range names {
			ms := models[n]
			if ms == nil {
				ms = []model{}
			}
			e := map[string]any{"name": n, "kind": engineKind(n), "models": ms, "status": "unknown"}
			if engineKind(n) == "provider" {
				rs := out[n]
				if rs == nil {
					rs = []retired{}
				}
				e["retiredRoutes"] = rs
				if why, ok := reg.Unreachable[n]; ok {
					e["registryUnreachable"] = why
				}
				if !reg.CheckedAt.IsZero() {
					e["registryCheckedAt"] = timestamp(reg.CheckedAt)
				}
				if err == nil {
					cs := costs[n]
					if cs == nil {
						cs = []gengate.ModelCost{}
					}
					e["costs"] = cs
				}
			}
			if engineKind(n) != "provider" {
				e["status"] = "ok" // runs in this process
			} else if res, ok := probed[n]; ok {
				e["status"] = "unreachable"
				if res.ok {
					e["status"] = "ok"
				}
				e["checkedAt"] = timestamp(res.at)
			}
			data = append(data, e)
		}
		body := map[string]any{"data": data}
		if a.cfg.Replication != nil {
			body["replication"] = a.cfg.Replication()
		}
		writeJSON(w, http.StatusOK, body)
	})
}
