// Package httpapi is gengate's HTTP surface: the spec's endpoints, API-key
// authentication, RFC 9457 problem bodies, Prefer and Idempotency-Key
// handling, and the output files. It turns requests into calls on
// gengate.Service and its results into responses; no rule lives here.
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gengate/gengate"
)

// Config is what the HTTP layer needs besides the service.
type Config struct {
	// PublicURL is the base of output file URLs; empty means the scheme and
	// host the request came in on.
	PublicURL string
	// MaxBody caps the bodies of generate and quote (default 32 MiB).
	MaxBody int64
	// MaxJSONBody caps the small JSON bodies of the other routes: sign-in,
	// keys, webhooks, admin, /v1/images/generations (default
	// DefaultMaxJSONBody).
	MaxJSONBody int64
	// MaxBodyMemory is the memory the request bodies being read may hold
	// together (body.go); over it a request is refused with 503 OVERLOADED
	// before its body is read (default DefaultMaxBodyMemory).
	MaxBodyMemory int64
	// PollWait is how long POST on a statusUrl waits for its task when
	// Prefer asks for no wait of its own (default DefaultPollWait; Prefer:
	// wait=N waits up to N, at most the service's SyncWait).
	PollWait time.Duration
	// Ready reports whether the service can take requests (/readyz).
	Ready func(ctx context.Context) error
	// Readiness, when set, serves /readyz instead of Ready and Providers
	// (ReadyHandler: the same handler as the operator listener's).
	Readiness http.Handler
	// Providers, when set, gives the state of each upstream provider as
	// checked at start, shown as "providers" in /readyz; it does not make
	// the service unready (other providers go on serving).
	Providers func() any
	// Replication, when set, gives the state of serve --replicate's
	// replica, shown as "replication" in /readyz and on the engines page;
	// a replica behind or failing is a warning there, it does not make
	// the service unready.
	Replication func() any
	// Routes, when set, gives the state of the registry checks of the
	// providers' routes (gengate.RegistryReport), shown as "routes" in
	// /readyz: the routes that left routing and why, and the registries
	// that could not be read.
	Routes func() any
	// Drain, once closed, ends the waits of generate calls: they answer at
	// once with their tasks (202), which go on. The server closes it when it
	// shuts down. Nil never drains.
	Drain <-chan struct{}
	// Tasks, when set, reports task counts in the metrics (when Metrics
	// is nil).
	Tasks TaskCounter
	// Metrics records the requests; the same value is served by Operator
	// on the operator listener. Nil makes one from Tasks.
	Metrics *Metrics
	// MetricsToken, when set, also serves GET /metrics on this (public)
	// handler, to requests with Authorization: Bearer <MetricsToken>.
	// Without it the public /metrics is a 404.
	MetricsToken string
	// RateLimit, when above zero, caps generate calls per API key and
	// second (a token bucket of RateBurst calls, default the rate rounded
	// up); calls over it get 429 RATE_LIMITED with Retry-After.
	RateLimit float64
	RateBurst int
	// Console, when set, serves the web console at GET / and
	// GET /console/... (package console); without it GET / is a JSON 404.
	Console http.Handler
	// Accounts configures the account area (auth.go).
	Accounts AccountsConfig
	// TrustedProxies are the proxies whose X-Forwarded-For and Forwarded
	// headers name the client (clientaddr.go); empty believes none.
	TrustedProxies TrustedProxies
	// Facades holds the engines' inverse mappings for the Replicate- and
	// fal-compatible APIs (facades.go).
	Facades Facades
	// Waiting holds the synchronous calls parked off net/http while they
	// wait (parked.go); the server waits for their answers when it shuts
	// down. Nil makes one.
	Waiting *Waiting
}

// DefaultPollWait is the default of Config.PollWait.
const DefaultPollWait = 5 * time.Second

// DefaultMaxBody is the default of Config.MaxBody.
const DefaultMaxBody = 32 << 20

// New returns the handler for the whole API.
func New(svc *gengate.Service, cfg Config, log *slog.Logger) http.Handler {
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxJSONBody == 0 {
		cfg.MaxJSONBody = DefaultMaxJSONBody
	}
	if cfg.PollWait == 0 {
		cfg.PollWait = DefaultPollWait
	}
	if cfg.MaxBodyMemory == 0 {
		cfg.MaxBodyMemory = DefaultMaxBodyMemory
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(cfg.Tasks, 0, log)
	}
	if cfg.Waiting == nil {
		cfg.Waiting = NewWaiting()
	}
	a := &api{svc: svc, cfg: cfg, log: log, metrics: cfg.Metrics,
		signIns: newSignInLimiter(cfg.Accounts), hashSlots: make(chan struct{}, passwordSlots(cfg.Accounts)),
		probes: &probeCache{results: map[string]probeResult{}}, drained: drainContext(cfg.Drain),
		waiting: cfg.Waiting, crossOrigin: newCrossOrigin(cfg.PublicURL), bodies: newBodyBudget(cfg.MaxBodyMemory), declared: map[string]bodySpec{}}
	a.facades = newFacadeIndex(svc, cfg.Facades)
	if cfg.RateLimit > 0 {
		a.limiter = newLimiter(cfg.RateLimit, cfg.RateBurst)
	}
	mux := gatedMux{http.NewServeMux(), a} // dbgate.go: the connection budget
	mux.Handle("POST /api/v1/generate", bodyStream(cfg.MaxBody), a.auth(a.rateLimit(a.handleGenerate())))
	mux.Handle("GET /api/v1/models", bodyNone, a.auth(a.handleModels()))
	mux.Handle("POST /api/generation/jobs/{id}", bodyNone, a.auth(a.handleAdvance()))
	mux.Handle("GET /api/generation/jobs/{id}", bodyNone, a.auth(a.handleRead()))
	mux.Handle("POST /api/generation/jobs/{id}/cancel", bodyNone, a.auth(a.handleCancel()))
	mux.Handle("POST /api/v1/files", bodyFile(svc.UploadLimit()+multipartSlack), a.auth(a.rateLimit(a.handleUpload())))
	mux.Handle("GET /api/v1/webhooks/secret", bodyNone, a.auth(a.handleWebhookSecret()))
	mux.Handle("POST /api/v1/webhooks/secret/rotate", bodyNone, a.auth(a.handleRotateWebhookSecret(true)))
	mux.Handle("GET /api/v1/webhooks", bodyNone, a.auth(a.handleWebhookEndpoints()))
	mux.Handle("POST /api/v1/webhooks", bodyJSON(cfg.MaxJSONBody), a.auth(a.handleCreateWebhookEndpoint()))
	mux.Handle("DELETE /api/v1/webhooks/{id}", bodyNone, a.auth(a.handleDeleteWebhookEndpoint()))
	mux.Handle("POST /api/v1/webhooks/{id}/rotate", bodyNone, a.auth(a.handleRotateWebhookSecret(false)))
	mux.Handle("GET /api/v1/webhooks/{id}/attempts", bodyNone, a.auth(a.handleWebhookAttempts()))
	mux.Handle("POST /api/v1/webhooks/events/{eventId}/replay", bodyNone, a.auth(a.handleReplayWebhookEvent()))
	mux.Handle("POST /v1/images/generations", bodyJSON(cfg.MaxJSONBody), a.openAIAuth(a.handleOpenAIGenerations()))
	mux.Handle("POST /v1/images/edits", bodyMultipart(2*svc.UploadLimit()+multipartSlack), a.openAIAuth(a.handleOpenAIEdits()))
	// Replicate-compatible predictions (replicate.go).
	mux.Handle("POST /v1/models/{owner}/{name}/predictions", bodyStream(cfg.MaxBody), a.replicateAuth(a.replicateRateLimit(a.handleReplicateModelPredictions())))
	mux.Handle("POST /v1/predictions", bodyStream(cfg.MaxBody), a.replicateAuth(a.replicateRateLimit(a.handleReplicatePredictions())))
	mux.Handle("GET /v1/predictions", bodyNone, a.replicateAuth(a.handleReplicateList()))
	mux.Handle("GET /v1/predictions/{id}", bodyNone, a.replicateAuth(a.handleReplicateGet()))
	mux.Handle("POST /v1/predictions/{id}/cancel", bodyNone, a.replicateAuth(a.handleReplicateCancel()))
	mux.Handle("GET /v1/webhooks/default/secret", bodyNone, a.replicateAuth(a.handleReplicateWebhookSecret()))
	// fal's server-proxy protocol for fal's clients (falproxy.go): the
	// method and the x-fal-target-url header say what is asked.
	mux.Handle(falProxyPath, bodyStream(cfg.MaxBody), a.handleFalProxy())
	// The public keys of fal queue webhooks' signatures (falwebhook.go).
	mux.Handle("GET "+falJWKSPath, bodyNone, a.handleFalJWKS())
	mux.Handle("GET /api/v1/openapi.json", bodyNone, a.handleOpenAPI())
	mux.Handle("GET /docs/api", bodyNone, a.handleAPIDocs())
	mux.Handle("GET /files/{name}", bodyNone, a.handleFile())
	mux.Handle("GET /files/in/{task}/{name}", bodyNone, a.handleSignedInput())
	mux.Handle("GET /healthz", bodyNone, a.handleHealth())
	mux.Handle("GET /readyz", bodyNone, a.handleReady())
	if cfg.MetricsToken != "" { // otherwise only on the operator listener (metrics.go)
		mux.Handle("GET /metrics", bodyNone, a.metricsAuth(a.metrics.Handler()))
	}
	a.accountRoutes(mux) // area_routes.go: auth, account, keys, quote, admin
	// Known paths asked with another method: 405 with Allow.
	mux.Handle("/api/v1/generate", bodyNone, a.handleMethodNotAllowed("POST"))
	mux.Handle("/api/v1/models", bodyNone, a.handleMethodNotAllowed("GET, HEAD"))
	mux.Handle("/api/generation/jobs/{id}", bodyNone, a.handleMethodNotAllowed("GET, HEAD, POST"))
	mux.Handle("/api/generation/jobs/{id}/cancel", bodyNone, a.handleMethodNotAllowed("POST"))
	mux.Handle("/api/v1/files", bodyNone, a.handleMethodNotAllowed("POST"))
	mux.Handle("/api/v1/webhooks", bodyNone, a.handleMethodNotAllowed("GET, HEAD, POST"))
	// One pattern for /secret and /{id}: two would conflict with the
	// methods' own patterns (net/http cannot rank them).
	mux.Handle("/api/v1/webhooks/{id}", bodyNone, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "secret" {
			a.handleMethodNotAllowed("GET, HEAD").ServeHTTP(w, r)
			return
		}
		a.handleMethodNotAllowed("DELETE").ServeHTTP(w, r)
	}))
	mux.Handle("/api/v1/webhooks/{id}/rotate", bodyNone, a.handleMethodNotAllowed("POST"))
	mux.Handle("/api/v1/webhooks/{id}/attempts", bodyNone, a.handleMethodNotAllowed("GET, HEAD"))
	mux.Handle("/api/v1/webhooks/events/{eventId}/replay", bodyNone, a.handleMethodNotAllowed("POST"))
	if cfg.Console != nil {
		mux.Handle("GET /{$}", bodyNone, cfg.Console)
		mux.Handle("GET /console/", bodyNone, cfg.Console)
	}
	// Anything else, /api/... included: a JSON 404.
	mux.Handle("/", bodyNone, a.handleNotFound())
	return a.requestID(mux)
}

type api struct {
	svc     *gengate.Service
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	limiter *limiter // nil: no rate limit
	// The account area's sign-in limits, password-hashing slots and cache
	// of engine probes.
	signIns   *signInLimiter
	hashSlots chan struct{}
	probes    *probeCache
	drained   context.Context // ends when cfg.Drain closes
	waiting   *Waiting        // the parked calls (parked.go)
	facades   *facadeIndex    // provider model names (facades.go)
	// crossOrigin refuses sign-in requests sent by another site's pages
	// (crossorigin.go).
	crossOrigin *http.CrossOriginProtection
	// The request bodies' memory, and each route's body declaration by
	// pattern (body.go).
	bodies   *bodyBudget
	declared map[string]bodySpec
	// The OpenAPI document as served, with the body declarations.
	openAPIOnce sync.Once
	openAPI     []byte
}

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyAPIKey
	keyClient // the client's address (clientaddr.go)
)

func requestID(r *http.Request) string { s, _ := r.Context().Value(keyRequestID).(string); return s }

func withAPIKey(ctx context.Context, k *gengate.APIKey) context.Context {
	return context.WithValue(ctx, keyAPIKey, k)
}

func apiKey(r *http.Request) *gengate.APIKey {
	k, _ := r.Context().Value(keyAPIKey).(*gengate.APIKey)
	return k
}

// requestID gives every request an id, echoed in X-Request-Id and problem
// bodies, and logs and counts the request when it ends.
func (a *api) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := "req_" + hex.EncodeToString(b[:])
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		client := a.cfg.TrustedProxies.ClientAddr(r)
		ctx = context.WithValue(ctx, keyClient, client)
		r = r.WithContext(ctx)
		if client != hostOf(r.RemoteAddr) { // behind a trusted proxy (clientaddr.go)
			r.RemoteAddr = net.JoinHostPort(client, "0")
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, start: time.Now()}
		next.ServeHTTP(rec, r)
		if rec.parked {
			return // its answer is logged and counted when it is written (parked.go)
		}
		// The mux has set r.Pattern to the route that matched.
		a.finished(r.Context(), r.Pattern, id, r.Method, logPath(r), rec.status, time.Since(rec.start), false)
	})
}

// finished counts a call's answer in /metrics and writes its request line
// (parked calls are marked so): for the middleware above and for a parked
// call's answer (parked.go).
func (a *api) finished(ctx context.Context, pattern, id, method, path string, status int, took time.Duration, parked bool) {
	a.metrics.observe(pattern, status, took)
	client, _ := ctx.Value(keyClient).(string)
	attrs := [7]slog.Attr{slog.String("requestId", id), slog.String("method", method), slog.String("path", path),
		slog.Int("status", status), slog.Int64("ms", took.Milliseconds()), slog.String("client", client)}
	n := 6
	if parked {
		attrs[n] = slog.Bool("parked", true)
		n++
	}
	gengate.LogInfo(ctx, a.log, "request", attrs[:n]...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	start  time.Time
	parked bool // the call was parked: its connection is no longer net/http's
}

// Unwrap lets http.ResponseController reach net/http's writer (Hijack).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (a *api) handleNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, a.log, gengate.Errorf(gengate.ENotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
}

func (a *api) handleMethodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, r, a.log, gengate.Errorf(gengate.EMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allow))
	})
}

func (a *api) handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

func (a *api) handleReady() http.Handler {
	if a.cfg.Readiness != nil {
		return a.cfg.Readiness
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Ready != nil {
			if err := a.cfg.Ready(r.Context()); err != nil {
				a.log.ErrorContext(r.Context(), "not ready", "err", err)
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
				return
			}
		}
		body := map[string]any{"status": "ready"}
		if a.cfg.Providers != nil {
			if p := a.cfg.Providers(); p != nil {
				body["providers"] = p
			}
		}
		if a.cfg.Replication != nil {
			body["replication"] = a.cfg.Replication()
		}
		if a.cfg.Routes != nil {
			if p := a.cfg.Routes(); p != nil {
				body["routes"] = p
			}
		}
		writeJSON(w, http.StatusOK, body)
	})
}
