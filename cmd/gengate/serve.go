package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/console"
	"github.com/gengate/gengate/internal/engine/builtin"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/replicate"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/webhook"
	"github.com/gengate/gengate/internal/worker"
)

// serve runs the server. Its log is JSON lines on stderr only: an error
// that ends it is logged as one too (main then prints nothing more).
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	flagOut := io.Discard // a bad flag is reported by the fatal line below
	if wantsHelp(args) {
		flagOut = stderr // which is stdout for --help
	}
	cfg, err := parseServeFlags(args, getenv, flagOut)
	if cfg != nil && cfg.PrintConfig {
		printSettings(stdout, cfg.Settings, cfg.ConfigFile)
		return err
	}
	if err == nil {
		err = runServe(ctx, cfg, log, getenv, stdout)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		log.Error("gengate serve stopped", "err", err.Error())
		return loggedError{err}
	}
	return err
}

// loggedError is an error serve has logged already.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// errCutShort ends a drain whose grace period ran out.
var errCutShort = errors.New("shutdown cut short: --shutdown-grace ran out with requests or task steps still running (their tasks go on; unfinished steps were handed back to other workers)")

func runServe(ctx context.Context, cfg *Config, log *slog.Logger, getenv func(string) string, stdout io.Writer) error {
	var err error
	startLine(log, cfg)
	cpus, procs := setProcs(cfg, getenv)
	log.Info("processors", "cpus", cpus, "procs", procs)
	// Every connection, a parked synchronous wait included, holds a file:
	// the soft file limit goes up to the hard one, and --max-conns (0)
	// follows it.
	nofile, ferr := raiseFileLimit()
	if ferr != nil {
		log.Warn("reading the file limit failed", "err", ferr)
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = defaultMaxConns(nofile)
	}
	log.Info("connections", "maxConns", cfg.MaxConns, "fileLimit", nofile)

	// Every file the operator gave is checked before anything is created:
	// a bad --prices or --config leaves no data directory behind.
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		return err
	}
	if cfg.Prices != "" {
		if err := loadPrices(catalog, cfg.Prices); err != nil {
			return err
		}
	}
	engs, err := buildEngines(cfg.File, catalog, getenv, cfg.SandboxDelay, engineFlags{allowPrivate: cfg.AllowPrivate, downloadTimeout: cfg.OutputDownloadTimeout, idleConns: cfg.Workers})
	if err != nil {
		return err
	}
	if sb, ok := engs.All["sandbox"].(*sandbox.Engine); ok {
		sb.SetMaxRenders(cmp.Or(cfg.SandboxRenders, cpus))
	}
	if b, ok := engs.All["builtin"].(*builtin.Engine); ok {
		// The CPU cap admits jobs where they run: an API-only process
		// (its workers elsewhere) would never see its admissions end.
		max := cfg.MaxCPUJobs
		if cfg.Role == "api" {
			max = math.MaxInt32
		}
		b.SetMaxJobs(max)
	}
	if err := restoreIfMissing(ctx, cfg, getenv, log, stdout); err != nil {
		return err
	}
	box, err := webhookBox(cfg)
	if err != nil {
		return err
	}
	retryDelays, err := parseDelays(cfg.WebhookRetryDelays)
	if err != nil {
		return fmt.Errorf("--webhook-retry-delays: %w", err)
	}
	// The replica stops after the store has closed its connections:
	// Litestream's own file handle holds the process's locks on the
	// database until then (internal/replicate).
	var replica *replicate.Replicator
	defer func() {
		if replica != nil {
			if err := replica.Close(context.Background()); err != nil {
				log.Warn("replica: the last copy at shutdown failed", "err", err)
			}
		}
	}()
	store, err := sqlstore.Open(ctx, cfg.Database, cfg.Data, append([]sqlstore.Option{sqlstore.WithPostgresConns(cfg.DBConns), sqlstore.WithConnWait(cfg.DBWait), sqlstore.WithBatchWait(cfg.DBBatchWait), sqlstore.WithBatchTimeout(cfg.DBBatchTimeout),
		sqlstore.WithSQLiteBatch(cfg.SQLiteBatch), sqlstore.WithSQLiteBatchWait(cfg.SQLiteBatchWait), sqlstore.WithSQLiteWALMB(cfg.SQLiteWALMB),
		sqlstore.WithFileTokenKey(box), sqlstore.WithLog(log), sqlstore.WithMaxWebhookEventsPerEndpoint(cfg.MaxWebhookEventsPerEndpoint)}, sqliteCheckpoints(cfg)...)...)
	if err != nil {
		return err
	}
	defer store.Close()
	blobs, err := blob.Open(cfg.Storage, filepath.Join(cfg.Data, "files"), getenv)
	if err != nil {
		return err
	}
	if cfg.Replicate.URL != "" {
		if replica, err = startReplication(ctx, cfg, getenv, log); err != nil {
			return err
		}
	}
	if s3, ok := blobs.(*blob.S3); ok {
		s3.SetPartBuffers(cfg.S3PartBuffers)
	}
	if len(engs.Providers) == 0 {
		log.Info("no upstream provider configured: the sandbox serves every model without a built-in engine (placeholders, not AI output)")
	} else {
		log.Info("upstream providers configured", "providers", engs.Providers)
	}
	host, _ := os.Hostname()
	if cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(cfg.MemoryLimit)
	}
	defer startHeapFloor(uint64(cfg.GCHeapFloorMB) << 20)()
	events := gengate.NewEvents()
	events.SetMaxRechecks(cfg.WaitRechecks)
	svc := &gengate.Service{
		Store:               store,
		Catalog:             catalog,
		Engines:             engs.All,
		Routes:              engs.Routes,
		Registry:            &gengate.Registry{},
		ProvidersConfigured: len(engs.Providers) > 0,
		Blobs:               blobs,
		Fetcher: fetch.New(fetch.Config{AllowPrivate: cfg.AllowPrivate,
			MaxInputMemory: cfg.MaxInputMemory, MaxDecodeMemory: cfg.MaxDecodeMemory}),
		Events:          events,
		Log:             log,
		SyncWait:        cfg.SyncWait,
		ReviewTerms:     splitTerms(cfg.ReviewTerms),
		Owner:           fmt.Sprintf("%s:%d:%s", host, os.Getpid(), gengate.NewID()[:8]),
		Lease:           cfg.TaskLease,
		UploadRetention: cfg.UploadRetention,
		MaxOutputBytes:  cfg.MaxOutputBytes,
		InputURLs:       gengate.InputURLSettings{MinBytes: cfg.InputURLMinBytes},
		Webhooks: gengate.WebhookSettings{Guard: fetch.TargetGuard(cfg.AllowPrivate), Box: box,
			Overlap: cfg.WebhookOverlap, MaxEndpoints: cfg.MaxWebhookEndpoints},
		MaxKeys:   cfg.MaxKeys,
		Takeovers: &gengate.LeaseTakeovers{},
	}
	if cfg.Role != "worker" && cfg.KeyCache > 0 { // workers authenticate no one
		svc.Keys = gengate.NewKeyCache(store, cfg.KeyRefresh, cfg.KeyCache)
	}
	if err := inputURLSigning(svc, blobs, cfg, engs.Providers, log); err != nil {
		return err
	}
	var replication func() any
	if replica != nil {
		if localFilesDir(cfg) != "" {
			svc.Blobs = mirroredBlobs{Store: blobs, r: replica}
		}
		replication = func() any { return replica.Status() }
	}
	cfg.Billing.apply(svc)
	if cfg.FreeRateLimit > 0 {
		svc.FreeLimit = httpapi.NewLimiter(cfg.FreeRateLimit, cfg.FreeRateBurst)
	}
	var firstLink func(base string) // prints the first-start member's set-up link
	if cfg.Role != "worker" {       // the key is for someone calling the API
		if firstLink, err = firstStart(ctx, store, stdout, cfg); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	health := checkProviders(ctx, engs, log, cfg.ProviderCheck, cfg.ProviderRecheck)
	if cfg.RegistryCheck > 0 && len(engs.Providers) > 0 {
		go checkRegistries(ctx, svc, cfg.RegistryCheck)
	}
	// Every role's operator surfaces (watch.go).
	metrics := httpapi.NewMetrics(store, cfg.MetricsRefresh, log)
	if err := errors.Join(metrics.Register(writeStagesCollector{store}), metrics.Register(queueCollector{store, log}),
		metrics.Register(listenCollector{store}), metrics.Register(takeoverCollector{svc.Takeovers})); err != nil {
		return err
	}
	if replication != nil {
		if err := metrics.Register(replicaCollector{replication}); err != nil {
			return err
		}
	}
	drain := make(chan struct{})
	readiness := httpapi.ReadyHandler(httpapi.ReadyConfig{Checks: readyChecks(store, blobs, cfg.WorkerStale),
		Providers: health.snapshot, Replication: replication, Drain: drain,
		Routes: func() any { return svc.Registry.Report() }}, log)
	admin, err := startAdmin(cfg, metrics, readiness, stdout)
	if err != nil {
		return err
	}
	if admin != nil {
		defer admin.Close() // nothing there waits for results
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = store.Listen(ctx, log, func(channel, payload string) {
			if channel == sqlstore.ChannelTask {
				events.Publish(payload)
			}
			events.Kick()
		})
	}()
	if svc.Keys != nil {
		wg.Add(1)
		go func() { // the key change counter, read every --key-refresh/4
			defer wg.Done()
			svc.Keys.Run(ctx)
		}()
	}
	if cfg.Role != "api" {
		// The first beat before the listeners: this process's own /readyz
		// counts it from the start.
		if err := store.Heartbeat(ctx, svc.Owner, cfg.Role, readBuildInfo().Version, time.Now(), time.Now()); err != nil {
			return fmt.Errorf("worker heartbeat: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			heartbeat(ctx, store, svc.Owner, cfg.Role, cfg.WorkerStale, log)
		}()
		// A task created in this process goes straight to a free step slot
		// (gengate's handoff.go); set before the listeners start.
		handoff := &worker.Handoff{}
		svc.Handoff = handoff
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker.Run(ctx, svc, events, worker.Config{Concurrency: cfg.Workers, Grace: cfg.ShutdownGrace, Handoff: handoff}, log)
		}()
		wg.Add(1)
		webhookLease := cfg.WebhookLease
		if webhookLease <= 0 {
			webhookLease = cfg.WebhookTimeout + 30*time.Second
		}
		go func() { // webhook deliveries: the outbox's loop, in every worker process
			defer wg.Done()
			webhook.Run(ctx, store, webhook.Config{
				Client:         fetch.TargetClient(cfg.AllowPrivate, cfg.WebhookTimeout),
				Data:           httpapi.WebhookData(svc, httpapi.Config{PublicURL: cfg.PublicURL}, "http://"+cfg.Addr, log),
				Body:           httpapi.WebhookBody(svc, httpapi.Config{PublicURL: cfg.PublicURL, Facades: facades}, "http://"+cfg.Addr, log),
				Secrets:        svc.WebhookSigningSecrets,
				Sign:           httpapi.WebhookSigner(svc),
				Schedule:       retryDelays,
				Workers:        cfg.WebhookWorkers,
				AccountWorkers: cfg.WebhookAccountWorkers,
				Lease:          webhookLease,
				Log:            log,
			})
		}()
	}
	var srvErr error
	stopping := time.Now()
	if cfg.Role != "worker" {
		srvErr = listenAndServe(ctx, cfg, svc, log, stdout, reachability(engs), firstLink, metrics, readiness, drain, &stopping, replication)
	} else {
		fmt.Fprintln(stdout, "gengate worker running")
		<-ctx.Done()
		stopping = time.Now()
		close(drain)
	}
	if ctx.Err() != nil {
		log.Info("shutting down: waiting requests answer with their tasks, running steps get the grace period",
			"grace", cfg.ShutdownGrace.String())
	}
	cancel()
	wg.Wait()
	cut := errors.Is(srvErr, context.DeadlineExceeded) || (srvErr == nil && time.Since(stopping) >= max(cfg.ShutdownGrace, time.Second))
	if cut {
		return errCutShort
	}
	if srvErr == nil {
		log.Info("stopped", "drain", "clean")
	}
	return srvErr
}

func listenAndServe(ctx context.Context, cfg *Config, svc *gengate.Service, log *slog.Logger, stdout io.Writer,
	probe func(context.Context, string) error, firstLink func(base string), metrics *httpapi.Metrics, readiness http.Handler,
	drain chan struct{}, stopping *time.Time, replication func() any) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	ln = newLimitListener(ln, cfg.MaxConns)
	if firstLink != nil {
		firstLink(linkBase(cfg.PublicURL, ln.Addr().String()))
	}
	trusted, _ := httpapi.ParseTrustedProxies(cfg.TrustedProxies) // checked by Validate
	waiting := httpapi.NewWaiting()
	handler := httpapi.New(svc, httpapi.Config{
		Waiting:        waiting,
		PublicURL:      cfg.PublicURL,
		MaxBody:        cfg.MaxBody,
		MaxJSONBody:    cfg.MaxJSONBody,
		MaxBodyMemory:  cfg.MaxBodyMemory,
		PollWait:       cfg.PollWait,
		Readiness:      readiness,
		Replication:    replication,
		Drain:          drain,
		Metrics:        metrics,
		MetricsToken:   cfg.MetricsToken,
		RateLimit:      cfg.RateLimit,
		RateBurst:      cfg.RateBurst,
		Console:        console.New(console.Config{PublicURL: cfg.PublicURL}),
		Accounts:       cfg.Accounts.httpConfig(probe),
		TrustedProxies: trusted,
		Facades:        facades,
	}, log)
	srv := newHTTPServer(cfg, handler)
	fmt.Fprintf(stdout, "gengate listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Requests waiting for results answer 202 now; their tasks go on.
	*stopping = time.Now()
	close(drain)
	shutdown, cancel := context.WithTimeout(context.Background(), max(cfg.ShutdownGrace, time.Second))
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// Parked calls (their connections no longer net/http's) answer too.
	return waiting.Wait(shutdown)
}

// firstStart creates an account with 1,000 credits and prints its key when
// the database has no account yet, so a newcomer can call the API at once.
func firstStart(ctx context.Context, store *sqlstore.DB, stdout io.Writer, cfg *Config) (func(base string), error) {
	n, err := store.CountAccounts(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	secret, acct, err := createKey(ctx, store, "default", 1000, false, false) // a plain live key
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "Created account %s with 1000 credits. Its API key (shown once, keep it):\n%s\n", acct.ID, secret)
	return firstMember(ctx, store, acct, cfg.Accounts.FirstEmail, stdout)
}

// createKey makes an account with credits and its first key, a test key
// (gg_test_) when test is set, an operator key when operator is.
func createKey(ctx context.Context, store gengate.Store, name string, credits int, test, operator bool) (string, *gengate.Account, error) {
	now := time.Now()
	acct := &gengate.Account{ID: gengate.NewID(), Name: name, CreatedAt: now}
	if err := store.CreateAccount(ctx, acct, credits); err != nil {
		return "", nil, err
	}
	newKey := gengate.NewAPIKey
	if test {
		newKey = gengate.NewTestAPIKey
	}
	secret, key := newKey(acct.ID, name, now)
	key.Operator = operator
	if err := store.CreateAPIKey(ctx, key); err != nil {
		return "", nil, err
	}
	return secret, acct, nil
}

func splitTerms(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// loadPrices applies a price override file: {"prices": {"flux": 5}}.
func loadPrices(c *gengate.Catalog, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc struct {
		Prices gengate.PriceOverrides `json:"prices"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return c.Override(doc.Prices)
}

// parseDelays reads --webhook-retry-delays: comma-separated durations, nil
// (the default schedule) when empty.
func parseDelays(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a duration", part)
		}
		out = append(out, d)
	}
	return out, nil
}
