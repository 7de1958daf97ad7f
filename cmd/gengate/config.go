package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/engine/builtin"
	"github.com/gengate/gengate/internal/engine/upstream"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/webhook"
)

// defaultWorkers is serve's default --workers. A step mostly waits (on an
// upstream's answer, on a group commit), so slots cost little: the memory
// of storing outputs is bounded apart (--s3-part-buffers). With 16 the
// end-to-end bench's SQLite commits held ~4 writes each, with 64 ~12
// (docs/notes/end-to-end.md).
const defaultWorkers = 64

// Config is every setting of gengate serve. Each flag falls back to an
// environment variable GENGATE_<NAME> (dashes as underscores).
type Config struct {
	Addr     string
	Data     string
	Database string
	SyncWait time.Duration
	// PollWait is how long POST on a statusUrl waits for its task.
	PollWait     time.Duration
	SandboxDelay time.Duration
	ReviewTerms  string
	PublicURL    string
	AllowPrivate bool
	Role         string
	Prices       string
	Workers      int
	TaskLease    time.Duration
	// WebhookTimeout bounds one webhook delivery attempt.
	WebhookTimeout time.Duration
	// WebhookKey seals webhook signing secrets (webhookkey.go);
	// WebhookOverlap is how long a rotated-out secret still signs;
	// MaxWebhookEndpoints bounds an account's endpoints.
	WebhookKey string
	// WebhookPreviousKey still opens what a rotated-out key sealed
	// (docs/server-key.md).
	WebhookPreviousKey  string
	WebhookOverlap      time.Duration
	MaxWebhookEndpoints int
	// WebhookRetryDelays is the delay after each failed delivery attempt
	// (gengate.WebhookSchedule); WebhookLease how long a claimed attempt
	// may run before another process may send the event again (0: the
	// timeout and 30s).
	WebhookRetryDelays string
	WebhookLease       time.Duration
	// WebhookWorkers is how many webhook deliveries the process runs at
	// once; WebhookAccountWorkers how many of one account's at once (over
	// every process), so that one account's slow receivers leave the rest
	// to the others; MaxWebhookEventsPerEndpoint the events an endpoint
	// keeps.
	WebhookWorkers              int
	WebhookAccountWorkers       int
	MaxWebhookEventsPerEndpoint int
	MaxBody                     int64
	// MaxJSONBody caps the small JSON bodies (sign-in, keys, webhooks,
	// admin, /v1/images/generations); MaxBodyMemory is the memory the
	// request bodies being read may hold together (internal/httpapi,
	// body.go).
	MaxJSONBody   int64
	MaxBodyMemory int64
	RateLimit     float64
	RateBurst     int
	// DBConns is the most PostgreSQL connections the process opens at once.
	DBConns int
	// DBWait is how long a request that reads the database waits for a
	// free PostgreSQL connection before it is refused with 503 OVERLOADED,
	// nothing read or written (internal/httpapi/dbgate.go).
	DBWait time.Duration
	// DBBatchWait is the longest a PostgreSQL batch of task creations
	// waits for the callers of the previous batch to come back.
	DBBatchWait time.Duration
	// DBBatchTimeout is the longest one shared batch (the SQLite writer's,
	// a PostgreSQL batch of creations, a work notification) may take.
	DBBatchTimeout time.Duration
	// SQLiteBatch is the most writes the SQLite writer commits together.
	SQLiteBatch int
	// SQLiteBatchWait is how long the SQLite writer, finding more than
	// one write queued or having just committed several, waits for more
	// before it begins a batch.
	SQLiteBatchWait time.Duration
	// SQLiteWALMB is the WAL size past which the SQLite writer finishes a
	// checkpoint so that the WAL starts over.
	SQLiteWALMB int
	// KeyRefresh bounds how long a key revoked or changed elsewhere may
	// still be accepted from this process's memory; KeyCache is the most
	// keys it keeps there (0: no cache, every request reads its key).
	KeyRefresh time.Duration
	KeyCache   int
	// FreeRateLimit and FreeRateBurst pace free-model calls per account.
	FreeRateLimit float64
	FreeRateBurst int
	// MaxKeys caps an account's active API keys made through the API.
	MaxKeys int
	// MaxInputMemory and MaxDecodeMemory are the input decode budgets
	// (fetch.Config): per image, and for all inputs in flight.
	MaxInputMemory  int64
	MaxDecodeMemory int64
	// MaxOutputBytes caps one output file (gengate.Service.MaxOutputBytes).
	MaxOutputBytes int64
	// OutputDownloadTimeout bounds one whole output download from a
	// provider into storage (upstream.Config.DownloadTimeout).
	OutputDownloadTimeout time.Duration
	// InputURLMinBytes is gengate.Service.InputURLs.MinBytes.
	InputURLMinBytes int64
	// MaxCPUJobs caps the builtin engine's jobs in flight per process.
	MaxCPUJobs int
	// SandboxRenders caps the sandbox's renders at once (0: as many as
	// processors).
	SandboxRenders int
	// Procs is GOMAXPROCS (0: procs.go's default).
	Procs int
	// ConfigFile is the --config YAML file of providers and routes.
	ConfigFile string
	// ShutdownGrace is how long in-flight requests and task steps may run
	// on after SIGTERM before they are cut short and handed back.
	ShutdownGrace time.Duration
	// HTTP server limits (docs/deploy.md, docs/security.md).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int64
	MaxConns          int
	WaitRechecks      int
	// MemoryLimit, above zero, is the Go runtime's soft memory limit in
	// bytes (runtime/debug.SetMemoryLimit); zero leaves GOMEMLIMIT's.
	MemoryLimit int64
	// GCHeapFloorMB is the least heap goal of the garbage collector, in
	// MiB (heapfloor.go); zero leaves the collector's own.
	GCHeapFloorMB int
	// Operator surfaces (docs/security.md): the --admin-addr listener of
	// /metrics and pprof, the token that opens the public /metrics, and how
	// old the task counts of /metrics may get.
	AdminAddr      string
	MetricsToken   string
	MetricsRefresh time.Duration
	// Storage is where outputs go: a directory (default <data>/files) or
	// s3://bucket[/prefix]?endpoint=host:port (see docs/deploy.md).
	Storage string
	// S3PartBuffers bounds the outputs stored to S3 at once, each holding
	// one blob.PartSize buffer: their memory whatever --workers is.
	S3PartBuffers int
	// UploadRetention is how long files sent to POST /api/v1/files are kept.
	UploadRetention time.Duration
	// ProviderCheck bounds each provider's check at start (health.go);
	// 0 turns the checks off. ProviderRecheck is how often they run again
	// (0: only at start).
	ProviderCheck   time.Duration
	ProviderRecheck time.Duration
	// WorkerStale is how long a worker may go unseen before /readyz
	// counts it gone; workers beat every sixth of it (watch.go).
	WorkerStale time.Duration
	// TrustedProxies lists the proxies (CIDR prefixes or addresses,
	// comma-separated) whose X-Forwarded-For and Forwarded headers name
	// the client (internal/httpapi/clientaddr.go).
	TrustedProxies string
	// RegistryCheck is how often the routes are checked against the
	// providers' model registries (registry.go); 0 never.
	RegistryCheck time.Duration
	// The account area (accounts_flags.go).
	Accounts AccountFlags
	// PrintConfig asks serve to print the settings and exit.
	PrintConfig bool
	// File is the --config file read; Settings every setting with the
	// layer it came from (configlayers.go).
	File     *fileConfig
	Settings []setting
	// Replication of the embedded install (replicate.go).
	Replicate ReplicateFlags
	// Selling credits: codes, card top-ups (billing_flags.go).
	Billing BillingFlags
}

// Validate names the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.Data == "" && c.Database == "":
		return errors.New("--data must not be empty")
	case c.SyncWait < 0:
		return errors.New("--sync-wait must be ≥ 0")
	case c.PollWait <= 0:
		return errors.New("--poll-wait must be > 0")
	case c.SandboxDelay < 0:
		return errors.New("--sandbox-delay must be ≥ 0")
	case c.Role != "all" && c.Role != "api" && c.Role != "worker":
		return fmt.Errorf("--role must be all, api or worker, not %q", c.Role)
	case c.Workers < 1:
		return errors.New("--workers must be ≥ 1")
	case c.WebhookWorkers < 1:
		return errors.New("--webhook-workers must be ≥ 1")
	case c.WebhookAccountWorkers < 1 || c.WebhookAccountWorkers > c.WebhookWorkers:
		return errors.New("--webhook-account-workers must be between 1 and --webhook-workers")
	case c.MaxWebhookEventsPerEndpoint < 1:
		return errors.New("--max-webhook-events-per-endpoint must be ≥ 1")
	case c.ShutdownGrace < 0:
		return errors.New("--shutdown-grace must be ≥ 0")
	case c.RegistryCheck < 0:
		return errors.New("--registry-check-interval must be ≥ 0")
	case c.ProviderCheck < 0:
		return errors.New("--provider-check-timeout must be ≥ 0")
	case c.ProviderRecheck != 0 && c.ProviderRecheck < time.Second:
		return errors.New("--provider-recheck must be 0 or ≥ 1s")
	case c.WorkerStale < time.Second:
		return errors.New("--worker-stale must be ≥ 1s")
	case c.TaskLease < time.Second:
		return errors.New("--task-lease must be ≥ 1s")
	case c.DBConns < 1:
		return errors.New("--db-conns must be ≥ 1")
	case c.DBWait < time.Millisecond:
		return errors.New("--db-wait must be ≥ 1ms")
	case c.DBBatchTimeout < time.Second:
		return errors.New("--db-batch-timeout must be ≥ 1s")
	case c.DBBatchWait < 0 || c.DBBatchWait > sqlstore.MaxBatchWait:
		return fmt.Errorf("--db-batch-wait must be between 0 and %s", sqlstore.MaxBatchWait)
	case c.SQLiteBatch < 1 || c.SQLiteBatch > sqlstore.MaxSQLiteBatch:
		return fmt.Errorf("--sqlite-batch must be between 1 and %d", sqlstore.MaxSQLiteBatch)
	case c.SQLiteBatchWait < 0 || c.SQLiteBatchWait > sqlstore.MaxSQLiteBatchWait:
		return fmt.Errorf("--sqlite-batch-wait must be between 0 and %s", sqlstore.MaxSQLiteBatchWait)
	case c.SQLiteWALMB < 1 || c.SQLiteWALMB > 65536:
		return errors.New("--sqlite-wal-mb must be between 1 and 65536")
	case c.KeyRefresh < 10*time.Millisecond || c.KeyRefresh > time.Minute:
		return errors.New("--key-refresh must be between 10ms and 1m")
	case c.KeyCache < 0:
		return errors.New("--key-cache must be ≥ 0")
	case c.FreeRateLimit < 0 || c.FreeRateBurst < 0:
		return errors.New("--free-rate-limit and --free-rate-burst must be ≥ 0")
	case c.MaxKeys < 1:
		return errors.New("--max-keys must be ≥ 1")
	case c.RateLimit < 0 || c.RateBurst < 0:
		return errors.New("--rate-limit and --rate-burst must be ≥ 0")
	case c.UploadRetention < time.Minute:
		return errors.New("--upload-retention must be ≥ 1m")
	case c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.IdleTimeout <= 0:
		return errors.New("--read-header-timeout, --read-timeout and --idle-timeout must be > 0")
	case c.MaxHeaderBytes < 4096:
		return errors.New("--max-header-bytes must be ≥ 4096")
	case c.MaxConns < 0:
		return errors.New("--max-conns must be ≥ 0 (0: from the file limit)")
	case c.MemoryLimit < 0:
		return errors.New("--memory-limit must be ≥ 0")
	case c.GCHeapFloorMB < 0 || c.GCHeapFloorMB > 1<<20:
		return errors.New("--gc-heap-floor must be between 0 and 1048576 MiB")
	case c.S3PartBuffers < 1:
		return errors.New("--s3-part-buffers must be ≥ 1")
	case c.WaitRechecks < 1:
		return errors.New("--wait-rechecks must be ≥ 1")
	case c.MaxInputMemory < 1<<20 || c.MaxDecodeMemory < 1<<20:
		return errors.New("--max-input-memory and --max-decode-memory must be ≥ 1 MiB")
	case c.InputURLMinBytes == 0 || c.InputURLMinBytes < -1:
		return errors.New("--input-url-min-bytes must be ≥ 1, or -1 for never")
	case c.MaxOutputBytes < 1<<20:
		return errors.New("--max-output-bytes must be ≥ 1 MiB")
	case c.OutputDownloadTimeout <= 0:
		return errors.New("--output-download-timeout must be > 0")
	case c.MaxCPUJobs < 1:
		return errors.New("--max-cpu-jobs must be ≥ 1")
	case c.SandboxRenders < 0:
		return errors.New("--sandbox-renders must be ≥ 0")
	case c.Procs < 0:
		return errors.New("--procs must be ≥ 0")
	case c.MetricsRefresh < time.Second:
		return errors.New("--metrics-refresh must be ≥ 1s")
	case c.MetricsToken != "" && len(c.MetricsToken) < 16:
		return errors.New("--metrics-token must be at least 16 characters")
	case c.MaxBody < 1024:
		return errors.New("--max-body must be ≥ 1024")
	case c.MaxJSONBody < 1024:
		return errors.New("--max-json-body must be ≥ 1024")
	case c.MaxBodyMemory < 1<<20:
		return errors.New("--max-body-memory must be ≥ 1 MiB")
	case c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://"):
		return errors.New("--public-url must start with http:// or https://")
	}
	if _, err := httpapi.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	return nil
}

// flags is a FlagSet whose flags fall back to GENGATE_* variables.
type flags struct {
	*flag.FlagSet
	getenv func(string) string
	help   bool // the arguments parsed ask for --help
}

func newFlags(name string, getenv func(string) string, stderr io.Writer) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{FlagSet: fs, getenv: getenv}
	// The whole list of flags answers --help; a bad flag or value gets
	// its error and one line, not the list it would be lost in.
	fs.Usage = func() {
		if f.help {
			fmt.Fprintf(fs.Output(), "Usage of gengate %s:\n", name)
			fs.PrintDefaults()
			return
		}
		fmt.Fprintf(fs.Output(), "run \"gengate %s --help\" for its flags\n", name)
	}
	return f
}

// Parse parses the arguments, noting whether they ask for --help.
func (f *flags) Parse(args []string) error {
	f.help = f.help || wantsHelp(args)
	return f.FlagSet.Parse(args)
}

func envName(flagName string) string {
	return "GENGATE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flags) str(p *string, name, def, usage string) {
	if v := f.getenv(envName(name)); v != "" {
		def = v
	}
	f.StringVar(p, name, def, usage+" ("+envName(name)+")")
}

func (f *flags) dur(p *time.Duration, name string, def time.Duration, usage string) error {
	if v := f.getenv(envName(name)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s: %w", envName(name), err)
		}
		def = d
	}
	f.DurationVar(p, name, def, usage+" ("+envName(name)+")")
	return nil
}

func (f *flags) boolean(p *bool, name string, usage string) error {
	def := false
	if v := f.getenv(envName(name)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s: %w", envName(name), err)
		}
		def = b
	}
	f.BoolVar(p, name, def, usage+" ("+envName(name)+")")
	return nil
}

func (f *flags) integer(p *int, name string, def int, usage string) error {
	if v := f.getenv(envName(name)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s: %w", envName(name), err)
		}
		def = n
	}
	f.IntVar(p, name, def, usage+" ("+envName(name)+")")
	return nil
}

func (f *flags) float(p *float64, name string, def float64, usage string) error {
	if v := f.getenv(envName(name)); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", envName(name), err)
		}
		def = x
	}
	f.Float64Var(p, name, def, usage+" ("+envName(name)+")")
	return nil
}

// storage adds --data and --database, shared by every command.
func (f *flags) storage(data, database *string) {
	f.str(data, "data", "./data", "directory for the SQLite database and output files")
	f.str(database, "database", "", "postgres:// URL to use PostgreSQL instead of SQLite")
}

func parseServeFlags(args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	c := &Config{}
	f := newFlags("serve", getenv, stderr)
	f.str(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.storage(&c.Data, &c.Database)
	f.str(&c.ReviewTerms, "review-terms", "", "comma-separated terms; a prompt containing one is held for review")
	f.str(&c.PublicURL, "public-url", "", "base URL of output files (default: the request's host)")
	f.str(&c.Role, "role", "all", "all, api (HTTP only) or worker (task steps only)")
	f.str(&c.Prices, "prices", "", `JSON file of price overrides: {"prices": {"flux": 5}}`)
	f.str(&c.ConfigFile, "config", "", "YAML file of serve's settings under serve: (by flag name), upstream providers and routes (docs/configuration.md)")
	f.str(&c.AdminAddr, "admin-addr", "", "address of the operator listener serving /metrics and /debug/pprof (keep it private; default: none)")
	f.str(&c.MetricsToken, "metrics-token", "", "also serve /metrics on the public listener to Authorization: Bearer <token> (prefer the environment variable)")
	f.str(&c.WebhookKey, "webhook-key", "", "server key sealing webhook signing secrets and file URL tokens, at least 32 characters (default: made in <data>/webhook.key; prefer the environment variable)")
	f.str(&c.WebhookPreviousKey, "webhook-previous-key", "", "a rotated-out server key, which still opens what it sealed while gengate server-key rotate re-seals it under --webhook-key (with <data>/webhook.key: its second line instead)")
	f.str(&c.WebhookRetryDelays, "webhook-retry-delays", "", "comma-separated delays after each failed webhook attempt, e.g. 1s,1s,5s (default: 5s,30s,2m,10m,30m,1h, then 2h eleven times)")
	f.str(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDR prefixes of the proxies in front: only from them are X-Forwarded-For and Forwarded believed, and the client's address then counts for sign-in limits and logs (default: none, the peer is the client)")
	f.str(&c.Storage, "storage", "", "output storage: a directory or s3://bucket[/prefix]?endpoint=host:port (default: <data>/files)")
	errs := []error{
		f.dur(&c.SyncWait, "sync-wait", gengate.DefaultSyncWait, "longest a generate call waits before answering 202"),
		f.dur(&c.PollWait, "poll-wait", httpapi.DefaultPollWait, "how long POST on a statusUrl waits for its task before answering 202 (longer only with Prefer: wait=N, up to --sync-wait)"),
		f.dur(&c.SandboxDelay, "sandbox-delay", 0, "latency the sandbox engine adds to every task"),
		f.dur(&c.ShutdownGrace, "shutdown-grace", 30*time.Second, "how long in-flight requests and task steps may finish after SIGTERM"),
		f.dur(&c.ProviderCheck, "provider-check-timeout", 10*time.Second, "how long each provider's check at start may take (0: no checks)"),
		f.dur(&c.ProviderRecheck, "provider-recheck", time.Minute, "how often each provider is checked again, so /readyz shows its state now (0: only at start)"),
		f.dur(&c.WorkerStale, "worker-stale", 30*time.Second, "a worker process not seen for this long counts as gone in /readyz (workers beat every sixth of it)"),
		f.dur(&c.RegistryCheck, "registry-check-interval", 6*time.Hour, "how often each provider's routes are checked against its model registry, at start and then at this interval (0: never)"),
		f.dur(&c.TaskLease, "task-lease", 20*time.Second, "how long a worker holds a task step before another may take it over"),
		f.dur(&c.UploadRetention, "upload-retention", gengate.DefaultUploadRetention, "how long files uploaded to /api/v1/files are kept"),
		f.boolean(&c.AllowPrivate, "allow-private-inputs", "allow input URLs, and provider output URLs on hosts other than the provider's, on loopback and private networks"),
		f.integer(&c.Workers, "workers", defaultWorkers, "task steps working with their upstreams at once in this process (as many more may be waiting for their last write to commit)"),
		f.integer(&c.S3PartBuffers, "s3-part-buffers", blob.DefaultPartBuffers, "outputs stored to S3 storage at once, each holding one 8 MiB part buffer (memory at most this × 8 MiB whatever --workers is); more wait their turn"),
		f.dur(&c.WebhookTimeout, "webhook-timeout", webhook.DefaultTimeout, "longest one webhook delivery attempt may take (connect, send, answer)"),
		f.dur(&c.WebhookOverlap, "webhook-secret-overlap", gengate.DefaultWebhookOverlap, "how long a rotated-out webhook secret still signs deliveries beside the new one"),
		f.dur(&c.WebhookLease, "webhook-lease", 0, "how long a claimed webhook attempt may run before another process may send the event again (default: --webhook-timeout plus 30s)"),
		f.integer(&c.MaxWebhookEndpoints, "max-webhook-endpoints", gengate.DefaultMaxWebhookEndpoints, "webhook endpoints one account may have; over it: 409 CONFLICT"),
		f.integer(&c.WebhookWorkers, "webhook-workers", gengate.DefaultWebhookWorkers, "webhook deliveries this process runs at once"),
		f.integer(&c.WebhookAccountWorkers, "webhook-account-workers", gengate.DefaultWebhookAccountWorkers, "webhook deliveries of one account run at once over every process, so that one account's slow receivers leave the other workers to the other accounts"),
		f.integer(&c.MaxWebhookEventsPerEndpoint, "max-webhook-events-per-endpoint", gengate.DefaultMaxWebhookEventsPerEndpoint, "webhook events one endpoint keeps, delivered or not; a new one deletes the oldest beyond it, with their attempts"),
		f.size(&c.MaxBody, "max-body", 32<<20, "largest body of POST /api/v1/generate and POST /api/v1/quote in bytes, decoded as it arrives"),
		f.size(&c.MaxJSONBody, "max-json-body", httpapi.DefaultMaxJSONBody, "largest small JSON body (sign-in, keys, webhooks, admin, /v1/images/generations) in bytes"),
		f.size(&c.MaxBodyMemory, "max-body-memory", httpapi.DefaultMaxBodyMemory, "memory the request bodies being read may hold together, in bytes, reserved before a body is read; over it: 503 OVERLOADED with Retry-After"),
		f.dur(&c.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "longest a client may take to send a request's headers"),
		f.dur(&c.ReadTimeout, "read-timeout", 60*time.Second, "longest a client may take to send a whole request, headers and body (a slow or endless body is cut off); waits for results are not reads"),
		f.dur(&c.IdleTimeout, "idle-timeout", 30*time.Second, "how long an idle keep-alive connection stays open"),
		f.size(&c.MaxHeaderBytes, "max-header-bytes", 64<<10, "largest request header block in bytes"),
		f.integer(&c.MaxConns, "max-conns", 0, "open client connections at most; more wait to be accepted (0: the file limit, raised to its hard limit at start, less a reserve of a quarter of it, at most 1024)"),
		f.size(&c.MemoryLimit, "memory-limit", 0, "soft limit of the process's memory in bytes: the garbage collector works harder as it nears it (0: none, or GOMEMLIMIT's)"),
		f.sizeMiB(&c.GCHeapFloorMB, "gc-heap-floor", 64, "MiB the heap may grow to before the garbage collector runs, however little of it is live: fewer collections when little is kept (0: the collector's own goal, GOGC's); --memory-limit still applies"),
		f.integer(&c.WaitRechecks, "wait-rechecks", gengate.MaxRechecks, "safety rereads per second of all waiting generate calls together (each rereads every 2s below this)"),
		f.size(&c.MaxInputMemory, "max-input-memory", fetch.DefaultMaxInputMemory, "most memory one input image may take to decode, in bytes, estimated from its header; over it: 400 INPUT_DECODE_TOO_LARGE"),
		f.size(&c.MaxOutputBytes, "max-output-bytes", gengate.DefaultMaxOutputBytes, "largest output file in bytes, enforced as it streams from the upstream; over it the task fails with UPSTREAM_ERROR, refunded"),
		f.dur(&c.OutputDownloadTimeout, "output-download-timeout", upstream.DefaultDownloadTimeout, "longest one output download from a provider into storage may take; past it the download is cut off, nothing is kept, and the task fails with UPSTREAM_ERROR, refunded"),
		f.size(&c.InputURLMinBytes, "input-url-min-bytes", gengate.DefaultInputURLMinBytes, "inputs of at least this many bytes go to fal and Replicate as a URL instead of a data: URI (presigned by S3 storage, or signed by gengate under --public-url with local storage; local storage without --public-url always sends data: URIs), and to the Gemini API's image models through its Files API instead of inline (-1: never)"),
		f.integer(&c.MaxCPUJobs, "max-cpu-jobs", builtin.DefaultMaxJobs, "builtin image operations (remove-bg, upscale, ...) admitted and run at once by this process; over it: 503 OVERLOADED"),
		f.integer(&c.SandboxRenders, "sandbox-renders", 0, "sandbox tasks whose outputs this process renders at once; more wait for a place (0: as many as processors)"),
		f.integer(&c.Procs, "procs", 0, "threads running Go code at once, GOMAXPROCS (0: the GOMAXPROCS environment variable if set, else twice the processors with SQLite, whose fsyncs block threads, and the processors with PostgreSQL)"),
		f.size(&c.MaxDecodeMemory, "max-decode-memory", fetch.DefaultMaxDecodeMemory, "memory all inputs being fetched and decoded at once may take, in bytes; over it: 503 OVERLOADED"),
		f.dur(&c.MetricsRefresh, "metrics-refresh", 10*time.Second, "how old the task counts of /metrics may get before a scrape counts again"),
		f.float(&c.RateLimit, "rate-limit", 0, "generate calls per second per API key (0: no limit)"),
		f.dur(&c.DBWait, "db-wait", sqlstore.DefaultConnWait, "longest a request that reads the database waits for a free PostgreSQL connection before 503 OVERLOADED, nothing read or written"),
		f.integer(&c.DBConns, "db-conns", sqlstore.DefaultPostgresConns, "most PostgreSQL connections this process opens at once, besides one for LISTEN"),
		f.dur(&c.DBBatchTimeout, "db-batch-timeout", sqlstore.DefaultBatchTimeout, "longest one shared database batch may take (the SQLite writer's batch, a PostgreSQL batch of task creations, a work notification) before it is given up and its callers get an error; bounds a connection that stopped answering"),
		f.dur(&c.DBBatchWait, "db-batch-wait", sqlstore.DefaultBatchWait, "longest a PostgreSQL batch of task creations waits for the callers of the previous batch (one commit for more tasks); 0 sends each batch at once"),
		f.integer(&c.SQLiteBatch, "sqlite-batch", sqlstore.DefaultSQLiteBatch, "most writes SQLite commits together in one transaction (one fsync); 1 commits each alone"),
		f.dur(&c.SQLiteBatchWait, "sqlite-batch-wait", sqlstore.DefaultSQLiteBatchWait, "how long the SQLite writer, finding more than one write queued or having just committed several, waits for more before it begins a batch (fewer commits under load); a lone write on an idle server never waits; 0: never"),
		f.sizeMiB(&c.SQLiteWALMB, "sqlite-wal-mb", sqlstore.DefaultSQLiteWALMB, "MiB of SQLite WAL past which the writer finishes a checkpoint between two batches so that the WAL starts over (checkpoints otherwise run off the writer)"),
		f.dur(&c.KeyRefresh, "key-refresh", gengate.DefaultKeyRefresh, "longest a key revoked or changed by another process may still be accepted from this process's memory"),
		f.integer(&c.KeyCache, "key-cache", gengate.DefaultKeyCacheSize, "most API keys this process keeps in memory (0: read the key from the database on every request)"),
		f.integer(&c.RateBurst, "rate-burst", 0, "calls a key may make at once under --rate-limit (default: the rate, rounded up)"),
		f.float(&c.FreeRateLimit, "free-rate-limit", gengate.DefaultFreeRate, "calls of free models (cost 0) per second per account, whatever keys it calls with (0: no limit); over it 429 RATE_LIMITED"),
		f.integer(&c.FreeRateBurst, "free-rate-burst", gengate.DefaultFreeBurst, "free-model calls an account may make at once under --free-rate-limit"),
		f.integer(&c.MaxKeys, "max-keys", gengate.DefaultMaxKeys, "most active (unrevoked) API keys an account may make through the API; over it 409 KEY_LIMIT_REACHED"),
	}
	errs = append(errs, c.Accounts.add(f), c.Replicate.add(f), c.Billing.add(f))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	f.BoolVar(&c.PrintConfig, "print-config", false, "print every setting with where it came from (flag, env, file, default), secrets masked, and exit")
	if err := f.Parse(args); err != nil {
		return nil, err
	}
	if f.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	var err error
	if c.File, err = loadFileConfig(c.ConfigFile); err != nil {
		return nil, err
	}
	if c.Settings, err = layerSettings(f, &c.File.Serve, c.ConfigFile); err != nil {
		return nil, err
	}
	// With --print-config the settings are printed even when invalid,
	// before the error.
	if err := c.Accounts.validate(); err != nil {
		return c, err
	}
	if err := c.Replicate.validate(c); err != nil {
		return c, err
	}
	if err := c.Billing.validate(); err != nil {
		return c, err
	}
	return c, c.Validate()
}
