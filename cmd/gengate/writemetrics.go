package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/sqlstore"
)

// writeStagesCollector reports the SQLite writer's stage histograms
// (internal/sqlstore/writestages.go) on /metrics:
// gengate_sqlite_write_seconds{stage="queue|gather|exec|commit|total"}
// and gengate_sqlite_batches_total, and the writer's busy time
// (gengate_sqlite_writer_busy_seconds_total). On PostgreSQL it reports
// nothing.
type writeStagesCollector struct{ store *sqlstore.DB }

var (
	writeSecondsDesc = prometheus.NewDesc("gengate_sqlite_write_seconds",
		"Time a write spent in each stage of the SQLite writer: queue (waiting for the writer), gather (the batch gathering), exec (the batch's statements), commit (COMMIT: WAL write and fsync), total (send to answer).",
		[]string{"stage"}, nil)
	batchesDesc = prometheus.NewDesc("gengate_sqlite_batches_total", "Batches the SQLite writer committed (or failed).", nil, nil)
	busyDesc    = prometheus.NewDesc("gengate_sqlite_writer_busy_seconds_total",
		"Time the SQLite writer spent running its batches, COMMIT and its fsync included; a rate near 1 means every write waits for the writer.", nil, nil)
)

func (c writeStagesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- writeSecondsDesc
	ch <- batchesDesc
	ch <- busyDesc
}

func (c writeStagesCollector) Collect(ch chan<- prometheus.Metric) {
	stages := c.store.WriteStages()
	if stages == nil {
		return
	}
	batches, _, busy := c.store.WriterWork()
	for _, h := range stages {
		buckets := make(map[float64]uint64, len(sqlstore.StageBounds))
		var n uint64
		for i, b := range sqlstore.StageBounds {
			n += h.Counts[i]
			buckets[b.Seconds()] = n
		}
		n += h.Counts[len(h.Counts)-1]
		ch <- prometheus.MustNewConstHistogram(writeSecondsDesc, n, h.Sum.Seconds(), buckets, h.Stage)
	}
	ch <- prometheus.MustNewConstMetric(batchesDesc, prometheus.CounterValue, float64(batches))
	ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.CounterValue, busy.Seconds())
}

// listenCollector reports, on PostgreSQL, how many times listening for
// notifications failed (gengate_postgres_listen_failures_total): while it
// fails, waits fall back to their rechecks.
type listenCollector struct{ store *sqlstore.DB }

var listenFailuresDesc = prometheus.NewDesc("gengate_postgres_listen_failures_total",
	"Times this process's LISTEN connection to PostgreSQL failed (could not connect or LISTEN, broke, or stopped answering); waiting requests and idle workers fall back to their rechecks until it is back.", nil, nil)

func (c listenCollector) Describe(ch chan<- *prometheus.Desc) { ch <- listenFailuresDesc }

func (c listenCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.store.Postgres() {
		return
	}
	ch <- prometheus.MustNewConstMetric(listenFailuresDesc, prometheus.CounterValue, float64(c.store.ListenFailures()))
}

// takeoverCollector reports the task leases this process's workers took
// over from a worker whose lease ran out (gengate.LeaseTakeovers).
type takeoverCollector struct{ c *gengate.LeaseTakeovers }

var takeoversDesc = prometheus.NewDesc("gengate_lease_takeovers_total",
	"Task steps this process's workers claimed after another worker's lease on them ran out (a worker killed, hung or cut off mid-step); each is logged at WARN with its jobId and previousOwner.", nil, nil)

func (c takeoverCollector) Describe(ch chan<- *prometheus.Desc) { ch <- takeoversDesc }

func (c takeoverCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(takeoversDesc, prometheus.CounterValue, float64(c.c.Count()))
}
