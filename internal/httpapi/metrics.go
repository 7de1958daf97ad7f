package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gengate/gengate"
)

// TaskCounter counts tasks by internal status, for the metrics.
type TaskCounter interface {
	CountTasks(ctx context.Context) (map[gengate.Status]int, error)
}

// DefaultTaskCountEvery is how old the task counts of /metrics may get
// before a scrape refreshes them.
const DefaultTaskCountEvery = 10 * time.Second

// Metrics are the Prometheus metrics, on a registry of their own: requests
// by route and status, their durations, Go and process statistics, and the
// tasks in each status.
//
// They are an operator surface, served off the public listener: by
// Operator on the --admin-addr listener, or on the public one at /metrics
// only behind Config.MetricsToken. Counting tasks is a full scan of the
// task table, so the counts are cached: however many scrapers ask, the
// store is counted at most once per refresh interval.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	cache    sync.Map // routeCode -> *routeSeries
}

// NewMetrics makes the metrics. tasks, when not nil, gives the task
// gauges, counted at most once every countEvery (0:
// DefaultTaskCountEvery).
func NewMetrics(tasks TaskCounter, countEvery time.Duration, log *slog.Logger) *Metrics {
	if countEvery <= 0 {
		countEvery = DefaultTaskCountEvery
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gengate_http_requests_total",
			Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gengate_http_request_duration_seconds",
			Help:    "HTTP request duration by route pattern (generate includes its wait for the result).",
			Buckets: []float64{.005, .01, .05, .1, .5, 1, 5, 15, 60, 180},
		}, []string{"route"}),
	}
	m.reg.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if tasks != nil {
		m.reg.MustRegister(&taskCollector{tasks: tasks, log: log, every: countEvery, now: time.Now,
			desc: prometheus.NewDesc("gengate_tasks", "Task records by internal status (counted at most once per refresh interval).", []string{"status"}, nil)})
	}
	return m
}

func (m *Metrics) observe(route string, code int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	s := m.series(route, code)
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}

// routeSeries are the request counter and duration histogram of one route
// and status code, looked up once: WithLabelValues hashes the labels and
// allocates the code's string at every call.
type routeSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

type routeCode struct {
	route string
	code  int
}

// series returns the series of route and code, cached (routes are the
// mux's patterns and codes a handful, so the cache stays small).
func (m *Metrics) series(route string, code int) *routeSeries {
	k := routeCode{route, code}
	if s, ok := m.cache.Load(k); ok {
		return s.(*routeSeries)
	}
	s, _ := m.cache.LoadOrStore(k, &routeSeries{
		requests: m.requests.WithLabelValues(route, strconv.Itoa(code)),
		duration: m.duration.WithLabelValues(route),
	})
	return s.(*routeSeries)
}

// Register adds a collector of the process's own (the wiring's: the
// SQLite writer's stages, say) to the metrics.
func (m *Metrics) Register(c prometheus.Collector) error { return m.reg.Register(c) }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// Operator is the handler of the operator listener (--admin-addr): GET
// /metrics, the Go profiler at /debug/pprof/, /healthz, and /readyz when
// ready is given (ReadyHandler). It has no
// authentication of its own: bind it to loopback or a private network.
func Operator(m *Metrics, ready http.Handler) http.Handler {
	mux := http.NewServeMux()
	if ready != nil {
		mux.Handle("GET /readyz", ready)
	}
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

// metricsAuth admits a request to /metrics on the public listener only
// with "Authorization: Bearer <MetricsToken>", compared in constant time
// (of the SHA-256 of both, so not even the length leaks).
func (a *api) metricsAuth(next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(a.cfg.MetricsToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(token)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gengate-metrics"`)
			writeError(w, r, a.log, gengate.Errorf(gengate.EUnauthorized, "/metrics needs the operator's metrics token: Authorization: Bearer <token>"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// taskCollector reports the task counts, counting the store at most once
// every every: a scrape within that time of the last count reports the
// cached counts, and concurrent scrapes wait for one count rather than
// each running their own.
type taskCollector struct {
	tasks TaskCounter
	log   *slog.Logger
	desc  *prometheus.Desc
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	counts  map[gengate.Status]int
	counted time.Time
}

func (c *taskCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *taskCollector) Collect(ch chan<- prometheus.Metric) {
	counts := c.current()
	if counts == nil {
		return
	}
	for _, s := range []gengate.Status{gengate.StatusQueued, gengate.StatusSubmitting, gengate.StatusRunning,
		gengate.StatusSucceeded, gengate.StatusFailed, gengate.StatusNeedsReview, gengate.StatusCanceled} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

// current returns the cached counts, counting again when they are older
// than every. A failed count keeps the old counts (nil if none) and is
// not retried before every has passed.
func (c *taskCollector) current() map[gengate.Status]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if !c.counted.IsZero() && now.Sub(c.counted) < c.every {
		return c.counts
	}
	c.counted = now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.tasks.CountTasks(ctx)
	if err != nil {
		c.log.Error("metrics: count tasks", "err", err)
		return c.counts
	}
	c.counts = counts
	return counts
}
