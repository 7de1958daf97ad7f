package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replicate/replicate-go"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/fal"
	rep "github.com/gengate/gengate/internal/engine/replicate"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
)

// testFacades are the engines' inverse mappings, wired as gengate serve
// wires them.
var testFacades = httpapi.Facades{ReplicateInput: rep.Inverse, ReplicateVersion: rep.Version,
	FalInput: fal.Inverse, FalVariants: fal.Variants}

// replicateClient is Replicate's official Go client given only the
// stack's /v1 as its base URL and a gengate key as its token.
func (s *stack) replicateClient(key string) *replicate.Client {
	s.t.Helper()
	c, err := replicate.NewClient(replicate.WithBaseURL(s.URL+"/v1"), replicate.WithToken(key))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// TestReplicateRun: replicate-go's Run on black-forest-labs/flux-schnell
// gets two 16:9 images that download as images, charged to the account as
// a generate call of flux-schnell; CreatePredictionWithModel then Wait ends
// succeeded, with the prediction's urls, metrics and model.
func TestReplicateRun(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(100)
		c := s.replicateClient(key)
		ctx := context.Background()

		out, err := c.Run(ctx, "black-forest-labs/flux-schnell",
			replicate.PredictionInput{"prompt": "a lighthouse at dusk", "num_outputs": 2, "aspect_ratio": "16:9"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		urls, ok := out.([]any)
		if !ok || len(urls) != 2 {
			t.Fatalf("output %#v, want a list of 2 URLs", out)
		}
		for _, u := range urls {
			wantImage(t, u.(string), "png", 16, 9)
		}
		m, _ := s.svc.Catalog.Model("flux-schnell")
		if spent, want := 100-s.balance(acct), m.Quote(map[string]any{"numOutputs": int64(2)}); spent != want || want == 0 {
			t.Errorf("charged %d credits, want %d", spent, want)
		}

		p, err := c.CreatePredictionWithModel(ctx, "black-forest-labs", "flux-schnell",
			replicate.PredictionInput{"prompt": "a cat", "output_format": "jpg"}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.Model != "black-forest-labs/flux-schnell" || p.URLs["get"] != s.URL+"/v1/predictions/"+p.ID || p.URLs["cancel"] == "" {
			t.Errorf("created prediction: %s", p.RawJSON())
		}
		if err := c.Wait(ctx, p, replicate.WithPollingInterval(20*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if p.Status != replicate.Succeeded || p.Metrics == nil || p.Metrics.PredictTime == nil || p.CompletedAt == nil {
			t.Fatalf("after Wait: %s", p.RawJSON())
		}
		list, _ := p.Output.([]any)
		if len(list) != 1 {
			t.Fatalf("output %#v", p.Output)
		}
		wantImage(t, list[0].(string), "jpeg", 1, 1)
		s.ledgerCheck(acct)
	})
}

// TestReplicateRefusals: refusals reach replicate-go as *replicate.APIError
// with Replicate's statuses, and change nothing.
func TestReplicateRefusals(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	acct, key := s.account(1)
	ctx := context.Background()
	c := s.replicateClient(key)
	cases := []struct {
		name       string
		model      string
		input      replicate.PredictionInput
		status     int
		code       string
		field      string
		byIdentity bool // Run with the identifier instead of CreatePredictionWithModel
	}{
		{"wrong token", "black-forest-labs/flux-schnell", replicate.PredictionInput{"prompt": "a cat"}, 401, "UNAUTHORIZED", "", false},
		{"balance short", "black-forest-labs/flux-schnell", replicate.PredictionInput{"prompt": "a cat", "num_outputs": 4}, 402, "INSUFFICIENT_CREDITS", "", false},
		{"unknown model", "acme/no-such-model", replicate.PredictionInput{"prompt": "a cat"}, 404, "NOT_FOUND", "", false},
		{"unknown version", "black-forest-labs/flux-schnell:0123456789abcdef", replicate.PredictionInput{"prompt": "a cat"}, 404, "NOT_FOUND", "", true},
		{"unknown gengate model", "gengate/no-such-model", replicate.PredictionInput{"prompt": "a cat"}, 404, "NOT_FOUND", "", false},
		{"aspect ratio the model lacks", "black-forest-labs/flux-schnell", replicate.PredictionInput{"prompt": "a cat", "aspect_ratio": "7:3"}, 422, "UNSUPPORTED_MODEL_OPTION", "aspect_ratio", false},
		{"too many outputs", "black-forest-labs/flux-schnell", replicate.PredictionInput{"prompt": "a cat", "num_outputs": 9}, 422, "UNSUPPORTED_MODEL_OPTION", "num_outputs", false},
		{"input the model lacks", "black-forest-labs/flux-schnell", replicate.PredictionInput{"prompt": "a cat", "go_fast": true}, 422, "INVALID_REQUEST", "go_fast", false},
		{"missing prompt", "black-forest-labs/flux-schnell", replicate.PredictionInput{}, 422, "INVALID_REQUEST", "prompt", false},
		{"wrong type", "gengate/flux-schnell", replicate.PredictionInput{"prompt": "a cat", "num_outputs": "two"}, 422, "INVALID_REQUEST", "num_outputs", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := c
			if tc.status == 401 {
				cl = s.replicateClient("gg_live_wrong")
			}
			var err error
			if tc.byIdentity {
				_, err = cl.Run(ctx, tc.model, tc.input, nil)
			} else {
				owner, name, _ := strings.Cut(tc.model, "/")
				_, err = cl.CreatePredictionWithModel(ctx, owner, name, tc.input, nil, false)
			}
			var apiErr *replicate.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not a *replicate.APIError", err)
			}
			if apiErr.Status != tc.status || apiErr.Title == "" || apiErr.Detail == "" {
				t.Errorf("got %+v, want status %d", apiErr, tc.status)
			}
			if tc.field != "" && !strings.Contains(apiErr.Detail, tc.field) {
				t.Errorf("detail %q does not name %s", apiErr.Detail, tc.field)
			}
		})
	}
	if s.taskCount() != 0 || s.balance(acct) != 1 {
		t.Errorf("refusals left %d tasks, balance %d", s.taskCount(), s.balance(acct))
	}

	// The raw answers: Replicate's shape, with gengate's code and the
	// invalid field under the caller's name.
	r := s.rawJSON("POST", "/v1/models/black-forest-labs/flux-schnell/predictions", key, nil,
		`{"input": {"prompt": "a cat", "aspect_ratio": "7:3"}}`)
	if r.Status != 422 || r.str("code") != "UNSUPPORTED_MODEL_OPTION" || r.num("status") != 422 || r.str("title") == "" {
		t.Errorf("422: %s", r.Body)
	}
	if f, _ := r.JSON["invalid_fields"].([]any); len(f) != 1 || f[0].(map[string]any)["field"] != "aspect_ratio" {
		t.Errorf("invalid_fields: %s", r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestReplicateRateLimited: over --rate-limit, a create is 429 with
// Retry-After, in Replicate's shape.
func TestReplicateRateLimited(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true, rateLimit: 0.01, rateBurst: 1})
	_, key := s.account(100)
	body := `{"input": {"prompt": "a cat"}}`
	first := s.rawJSON("POST", "/v1/models/gengate/flux-schnell/predictions", key, nil, body)
	if first.Status != 201 || first.str("status") != "starting" {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	r := s.rawJSON("POST", "/v1/models/gengate/flux-schnell/predictions", key, nil, body)
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || r.num("status") != 429 {
		t.Errorf("second: %d %v %s", r.Status, r.Header, r.Body)
	}
}

// TestReplicatePredictions: the other calls of replicate-go: a version id
// (a community model the catalog pins), gengate/{modelId}, Prefer: wait
// (RunWithOptions' block until done), get, cancel and the paged list.
func TestReplicatePredictions(t *testing.T) {
	s := newStack(t, stackOpts{})
	acct, key := s.account(1000)
	c := s.replicateClient(key)
	ctx := context.Background()

	// A version id alone names the community model it pins (real-esrgan:
	// the image-upscaler model), with the model's own input names.
	_, version := rep.Version("nightmareai/real-esrgan")
	out, err := c.Run(ctx, "nightmareai/real-esrgan:"+version,
		replicate.PredictionInput{"image": dataURL("image/png", testPNG(t, 32, 24)), "scale": 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := out.(string); !ok {
		t.Errorf("upscaler output %#v, want one URL", out)
	} else {
		wantImage(t, u, "png", 4, 3)
	}

	// gengate/{modelId} with gengate's names in snake_case; blocking with
	// Prefer: wait answers the finished prediction at once.
	out, err = c.RunWithOptions(ctx, "gengate/flux", replicate.PredictionInput{"prompt": "a fox", "aspect_ratio": "9:16"}, nil,
		replicate.WithBlockUntilDone())
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := out.([]any); len(l) != 1 {
		t.Fatalf("output %#v", out)
	} else {
		wantImage(t, l[0].(string), "png", 9, 16)
	}
	r := s.rawJSON("POST", "/v1/predictions", key, map[string]string{"Prefer": "wait=5"},
		`{"version": "black-forest-labs/flux-dev", "input": {"prompt": "a fox"}}`)
	if r.Status != 201 || r.str("status") != "succeeded" || r.Header.Get("Preference-Applied") != "wait=5" || r.str("model") != "black-forest-labs/flux-dev" {
		t.Errorf("Prefer: wait=5: %d %v %s", r.Status, r.Header, r.Body)
	}

	// Get, and the list in pages.
	p, err := c.GetPrediction(ctx, r.str("id"))
	if err != nil || p.Status != replicate.Succeeded || p.Input["prompt"] != "a fox" {
		t.Fatalf("get: %v %s", err, p.RawJSON())
	}
	if _, err := c.GetPrediction(ctx, "no-such-prediction"); apiStatus(err) != 404 {
		t.Errorf("unknown prediction: %v", err)
	}
	other, otherKey := s.account(10)
	_ = other
	if _, err := s.replicateClient(otherKey).GetPrediction(ctx, r.str("id")); apiStatus(err) != 404 {
		t.Errorf("another account's prediction: %v", err)
	}
	page, err := c.ListPredictions(ctx)
	if err != nil || len(page.Results) != 3 || page.Next != nil || page.Results[0].ID != r.str("id") {
		t.Fatalf("list: %v %s", err, page.RawJSON())
	}
	first := s.rawJSON("GET", "/v1/predictions?limit=2", key, nil, "")
	next, _ := first.JSON["next"].(string)
	if res, _ := first.JSON["results"].([]any); len(res) != 2 || !strings.HasPrefix(next, s.URL+"/v1/predictions?") {
		t.Fatalf("first page: %s", first.Body)
	}
	second := s.rawJSON("GET", strings.TrimPrefix(next, s.URL), key, nil, "")
	if res, _ := second.JSON["results"].([]any); len(res) != 1 || second.JSON["next"] != nil {
		t.Fatalf("second page: %s", second.Body)
	}

	// Cancel of a finished prediction answers it as it is; nothing moves.
	before := s.balance(acct)
	p, err = c.CancelPrediction(ctx, r.str("id"))
	if err != nil || p.Status != replicate.Succeeded || s.balance(acct) != before {
		t.Errorf("cancel of a finished prediction: %v %v", err, p)
	}
	s.ledgerCheck(acct)
}

// TestReplicateCancel: a prediction canceled before it ran is canceled
// and refunded.
func TestReplicateCancel(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	acct, key := s.account(100)
	c := s.replicateClient(key)
	ctx := context.Background()
	p, err := c.CreatePredictionWithModel(ctx, "black-forest-labs", "flux-schnell", replicate.PredictionInput{"prompt": "a cat"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != replicate.Starting || s.balance(acct) == 100 {
		t.Fatalf("created: %s, balance %d", p.RawJSON(), s.balance(acct))
	}
	p, err = c.CancelPrediction(ctx, p.ID)
	if err != nil || p.Status != replicate.Canceled {
		t.Fatalf("cancel: %v %v", err, p)
	}
	if s.balance(acct) != 100 {
		t.Errorf("balance %d after the cancel, want 100", s.balance(acct))
	}
	s.ledgerCheck(acct)
}

func apiStatus(err error) int {
	var e *replicate.APIError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// rawJSON sends one request by plain net/http (the facades are outside
// the OpenAPI document) and reads its JSON answer.
func (s *stack) rawJSON(method, path, key string, header map[string]string, body string) response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	_ = json.Unmarshal(data, &r.JSON)
	return r
}

// TestReplicateWebhook: predictions created by replicate-go with a
// webhook, run by the replicate engine on Replicate's fake (whose logs
// change as a prediction runs), on both databases. With every event in
// its filter, the webhook gets, in this order (and as it was at each
// event, although its receiver answers only once the prediction has
// finished): start (processing, no
// output, no logs), logs while it runs (processing, the progress of that
// moment, at least 500 ms apart), output (processing, with the output),
// completed (succeeded); each body is a replicate.Prediction of that
// prediction, signed as Replicate signs (replicate-go's
// ValidateWebhookRequest with GetDefaultWebhookSecret's secret); the task
// record lists the events as prediction.start, prediction.logs…,
// prediction.output and prediction.completed; so does a webhook without
// a filter. A filter of completed gets completed alone, one of start
// start alone; no webhook, or an empty filter, no event. A task whose
// webhookUrl bears the previous release's mark gets its final-state event
// as the prediction. A start its receiver refuses is not tried again (one
// attempt, failed), and completed comes after it.
func TestReplicateWebhook(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		up := replicatetest.New(t)
		up.SetPolls(5) // logs at 25, 50, 75, 100 %, each poll after a doubling wait (0.25 s, 0.5 s, 1 s...)
		s := newStack(t, stackOpts{dialect: dialect, allowPrivate: true, engines: map[string]gengate.Engine{
			"replicate": rep.New(rep.Config{APIKey: up.Key(), BaseURL: up.URL(), AllowPrivateOutputs: true})}})
		s.svc.Webhooks.Guard = fetch.TargetGuard(true)
		s.startWebhooksTimeout([]time.Duration{10 * time.Millisecond}, time.Minute)
		acct, key := s.account(1000)
		c := s.replicateClient(key)
		ctx := context.Background()
		secret, err := c.GetDefaultWebhookSecret(ctx)
		if err != nil || !strings.HasPrefix(secret.Key, "whsec_") {
			t.Fatalf("secret: %v %v", err, secret)
		}
		rcv, refusing := newReceiver(t), newReceiver(t, http.StatusInternalServerError)
		// The webhook of every event answers once every prediction has
		// finished: each body must be the prediction as it was when its
		// event was written, not as it is when it is sent.
		gated, open := newReceiverUnstarted(t), make(chan struct{})
		answer := gated.Config.Handler
		gated.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-open
			answer.ServeHTTP(w, r)
		})
		gated.Start()
		create := func(hook *replicate.Webhook) string {
			t.Helper()
			p, err := c.CreatePredictionWithModel(ctx, "black-forest-labs", "flux-schnell", replicate.PredictionInput{"prompt": "a cat"}, hook, false)
			if err != nil {
				t.Fatal(err)
			}
			return p.ID
		}
		all := create(&replicate.Webhook{URL: gated.URL + "/all", Events: replicate.WebhookEventAll})
		completed := create(&replicate.Webhook{URL: rcv.URL + "/completed", Events: []replicate.WebhookEventType{replicate.WebhookEventCompleted}})
		start := create(&replicate.Webhook{URL: rcv.URL + "/start", Events: []replicate.WebhookEventType{replicate.WebhookEventStart}})
		refused := create(&replicate.Webhook{URL: refusing.URL + "/refused",
			Events: []replicate.WebhookEventType{replicate.WebhookEventStart, replicate.WebhookEventCompleted}})
		dflt := create(&replicate.Webhook{URL: rcv.URL + "/default"})
		none := create(nil)
		r := s.rawJSON("POST", "/v1/models/black-forest-labs/flux-schnell/predictions", key, nil,
			`{"input": {"prompt": "a cat"}, "webhook": "`+rcv.URL+`/empty", "webhook_events_filter": []}`)
		wantStatus(t, r, http.StatusCreated)
		empty := r.str("id")
		// A prediction of the previous release: its webhookUrl marked.
		r = s.generate(key, map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "a cat",
			"webhookUrl": rcv.URL + "/legacy#gengate-replicate-prediction"}, map[string]string{"Prefer": "respond-async"})
		wantStatus(t, r, http.StatusAccepted)
		legacy := r.str("jobId")

		ids := []string{all, completed, start, refused, dflt, none, empty, legacy}
		for _, id := range ids {
			if o, err := s.svc.Wait(ctx, acct, id, 2*time.Minute); err != nil || o.Task.Status != gengate.StatusSucceeded {
				t.Fatalf("prediction %s: %v %v", id, o, err)
			}
		}
		close(open)
		settled := func(id string) []map[string]any { // the task's events once none is pending
			var ev []map[string]any
			waitFor(t, "the webhook events of "+id, func() bool {
				ev = s.webhookEvents(key, id)
				return !slices.ContainsFunc(ev, func(e map[string]any) bool { return e["status"] == "pending" })
			})
			return ev
		}
		types := func(ev []map[string]any) []string {
			var out []string
			for _, e := range ev {
				out = append(out, e["type"].(string)+"/"+e["status"].(string))
			}
			return out
		}
		received := func(rcv *receiver, id string) []replicate.Prediction {
			var out []replicate.Prediction
			for _, d := range rcv.deliveries() {
				req, _ := http.NewRequest("POST", rcv.URL, strings.NewReader(string(d.body)))
				req.Header = d.header
				if ok, err := replicate.ValidateWebhookRequest(req, *secret); !ok || err != nil {
					t.Errorf("replicate-go does not validate the webhook: %v %v", ok, err)
				}
				var p replicate.Prediction
				if err := json.Unmarshal(d.body, &p); err != nil {
					t.Fatalf("a webhook body is not a prediction: %v\n%s", err, d.body)
				}
				if p.ID == id {
					out = append(out, p)
				}
			}
			return out
		}

		// Every event, in order.
		ev := settled(all)
		got := received(gated, all)
		if len(got) != len(ev) || len(got) < 5 {
			t.Fatalf("%d deliveries of %d events (%q); want start, logs at least twice, output, completed", len(got), len(ev), types(ev))
		}
		kinds := []string{"prediction.start"}
		for range len(got) - 3 {
			kinds = append(kinds, "prediction.logs")
		}
		kinds = append(kinds, "prediction.output", "prediction.completed")
		var lastLogs time.Time
		for i, p := range got {
			if ev[i]["type"] != kinds[i] || ev[i]["status"] != "delivered" {
				t.Errorf("event %d: %v, want %s, delivered", i, ev[i], kinds[i])
			}
			logs := ""
			if p.Logs != nil {
				logs = *p.Logs
			}
			switch kinds[i] {
			case "prediction.start":
				if p.Status != replicate.Processing || p.Output != nil || logs != "" || p.StartedAt == nil || p.CompletedAt != nil {
					t.Errorf("start: %s", p.RawJSON())
				}
			case "prediction.logs":
				if p.Status != replicate.Processing || p.Output != nil || p.Progress() == nil || p.CompletedAt != nil {
					t.Errorf("logs event %d: %s", i, p.RawJSON())
				}
				at, err := time.Parse(time.RFC3339, ev[i]["createdAt"].(string))
				if err != nil {
					t.Fatal(err)
				}
				if !lastLogs.IsZero() && at.Sub(lastLogs) < gengate.PredictionLogsInterval {
					t.Errorf("logs events %v apart, want %v at least", at.Sub(lastLogs), gengate.PredictionLogsInterval)
				}
				lastLogs = at
			case "prediction.output":
				if p.Status != replicate.Processing || p.Output == nil || p.CompletedAt != nil || p.Metrics != nil {
					t.Errorf("output: %s", p.RawJSON())
				}
			case "prediction.completed":
				if p.Status != replicate.Succeeded || p.Output == nil || p.CompletedAt == nil || p.Model != "black-forest-labs/flux-schnell" {
					t.Errorf("completed: %s", p.RawJSON())
				}
			}
		}
		if first, last := got[1].Progress(), got[len(got)-3].Progress(); first == nil || last == nil || first.Percentage >= last.Percentage {
			t.Errorf("the logs events' progress does not move on: first %+v, last %+v", first, last)
		}

		// No filter: output and completed, Replicate's documented default.
		if got := types(settled(dflt)); !slices.Equal(got, []string{"prediction.output/delivered", "prediction.completed/delivered"}) {
			t.Errorf("a webhook without a filter: events %q", got)
		}

		// One event each, or none.
		for _, c := range []struct {
			id, want string
		}{{completed, "prediction.completed"}, {start, "prediction.start"}, {none, ""}, {empty, ""}} {
			ev := settled(c.id)
			want := []string(nil)
			if c.want != "" {
				want = []string{c.want + "/delivered"}
			}
			if got := types(ev); !slices.Equal(got, want) {
				t.Errorf("prediction %s: events %q, want %q", c.id, got, want)
			}
			got := received(rcv, c.id)
			if len(got) != len(want) {
				t.Errorf("prediction %s: %d deliveries, want %d", c.id, len(got), len(want))
			}
			if len(got) == 1 && c.want == "prediction.completed" && got[0].Status != replicate.Succeeded {
				t.Errorf("completed: %s", got[0].RawJSON())
			}
			if len(got) == 1 && c.want == "prediction.start" && (got[0].Status != replicate.Processing || got[0].Output != nil) {
				t.Errorf("start: %s", got[0].RawJSON())
			}
		}

		// The previous release's mark: its final-state event, as the
		// prediction.
		if got := types(settled(legacy)); !slices.Equal(got, []string{gengate.EventSucceeded + "/delivered"}) {
			t.Errorf("a marked webhookUrl: events %q", got)
		}
		if got := received(rcv, legacy); len(got) != 1 || got[0].Status != replicate.Succeeded || got[0].Output == nil {
			t.Errorf("a marked webhookUrl: %d deliveries", len(got))
		}

		// A refused start is not tried again.
		if got := types(settled(refused)); !slices.Equal(got, []string{"prediction.start/failed", "prediction.completed/delivered"}) {
			t.Errorf("a refused start then completed: events %q", got)
		}
		if got := received(refusing, refused); len(got) != 2 || got[0].Status != replicate.Processing || got[1].Status != replicate.Succeeded {
			t.Errorf("a refused start then completed: %d deliveries", len(got))
		}
	})
}
