package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
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

// metrics are the Prometheus metrics served at /metrics, on a registry of
// their own.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(tasks TaskCounter, log *slog.Logger) *metrics {
	m := &metrics{
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
		m.reg.MustRegister(&taskCollector{tasks: tasks, log: log,
			desc: prometheus.NewDesc("gengate_tasks", "Task records by internal status.", []string{"status"}, nil)})
	}
	return m
}

func (m *metrics) observe(route string, code int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

// taskCollector reads the task counts from the store at each scrape.
type taskCollector struct {
	tasks TaskCounter
	log   *slog.Logger
	desc  *prometheus.Desc
}

func (c *taskCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *taskCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.tasks.CountTasks(ctx)
	if err != nil {
		c.log.Error("metrics: count tasks", "err", err)
		return
	}
	for _, s := range []gengate.Status{gengate.StatusQueued, gengate.StatusSubmitting, gengate.StatusRunning,
		gengate.StatusSucceeded, gengate.StatusFailed, gengate.StatusNeedsReview, gengate.StatusCanceled} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}
