package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // decoders for the outputs the tests download
	"image/png"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "golang.org/x/image/webp"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/engine/builtin"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/sqlstore/sqltest"
	"github.com/gengate/gengate/internal/worker"
)

// stackOpts chooses how a test stack is built.
type stackOpts struct {
	dialect       string        // "sqlite" (default) or "postgres"
	noWorkers     bool          // do not run worker.Run (startWorkers may, later): no step runs
	sandboxDelay  time.Duration // latency of the sandbox engine
	syncWait      time.Duration // Service.SyncWait; default 2m (slow machines under -race)
	keyRefresh    time.Duration // the key cache's bound (serve --key-refresh); 0 for the default
	reviewTerms   []string
	allowPrivate  bool  // fetch inputs from loopback too
	maxInputBytes int64 // fetch.Config.MaxBytes; 0 for the default
	rateLimit     float64
	rateBurst     int
	accounts      httpapi.AccountsConfig // the account area's settings
	logTo         io.Writer              // where the stack logs (text), besides GENGATE_TEST_LOG
	publicURL     string
	db            *sqlstore.DB  // an open database to use (shared with another stack, as another process would)
	blobs         gengate.Blobs // default: a Local store in a temporary directory
	fetch         fetch.Config  // the fetcher's other limits
	builtinJobs   int           // above 0: the builtin engine too, with this --max-cpu-jobs
	metricsToken  string        // serves /metrics on the public handler behind it
	maxBody       int64         // httpapi.Config.MaxBody; 0 for the default
	maxBodyMemory int64         // httpapi.Config.MaxBodyMemory; 0 for the default
	maxJSONBody   int64         // httpapi.Config.MaxJSONBody; 0 for the default
	pollWait      time.Duration // httpapi.Config.PollWait; 0 for the default
	waiting       *httpapi.Waiting
	// engines are provider engines besides the sandbox (and builtin);
	// with them the service routes models to providers.
	engines map[string]gengate.Engine
}

// stack is the real gengate stack, in process: a fresh database, a blob
// directory, the sandbox engine, the fetcher, the workers and the HTTP API
// on a loopback listener.
type stack struct {
	t     testing.TB
	URL   string
	store *sqlstore.DB
	svc   *gengate.Service
	files string // the blob directory
}

func newStack(t testing.TB, o stackOpts) *stack {
	t.Helper()
	if o.dialect == "" {
		o.dialect = "sqlite"
	}
	if o.syncWait == 0 {
		o.syncWait = 2 * time.Minute
	}
	store := o.db
	if store == nil {
		store = sqltest.Open(t, o.dialect)
	}
	files := filepath.Join(t.TempDir(), "files")
	var blobs gengate.Blobs = o.blobs
	if blobs == nil {
		local, err := blob.NewLocal(files)
		if err != nil {
			t.Fatal(err)
		}
		blobs = local
	}
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	events := gengate.NewEvents()
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("GENGATE_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if o.logTo != nil {
		log = slog.New(slog.NewTextHandler(o.logTo, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	svc := &gengate.Service{
		Store:       store,
		Catalog:     catalog,
		Engines:     engines(o),
		Blobs:       blobs,
		Fetcher:     fetch.New(fetchConfig(o)),
		Events:      events,
		Log:         log,
		SyncWait:    o.syncWait,
		ReviewTerms: o.reviewTerms,
		Owner:       "test-" + t.Name(),
		Lease:       5 * time.Second,
		// Keys served from memory, as gengate serve does.
		Keys:     gengate.NewKeyCache(store, o.keyRefresh, 0),
		Webhooks: gengate.WebhookSettings{Box: testWebhookBox},
	}
	{
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			svc.Keys.Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	for name, e := range o.engines {
		svc.Engines[name] = e
		svc.ProvidersConfigured = true
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Config{Tasks: store, RateLimit: o.rateLimit, RateBurst: o.rateBurst,
		Accounts: o.accounts, PublicURL: o.publicURL, MetricsToken: o.metricsToken, MaxBody: o.maxBody, Waiting: o.waiting,
		Facades: testFacades, MaxBodyMemory: o.maxBodyMemory, MaxJSONBody: o.maxJSONBody, PollWait: o.pollWait}, log))
	t.Cleanup(srv.Close)
	if !o.noWorkers {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			worker.Run(ctx, svc, events, worker.Config{}, log)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	return &stack{t: t, URL: srv.URL, store: store, svc: svc, files: files}
}

// startWorkers runs n workers for a stack made with noWorkers, until the
// test ends.
func (s *stack) startWorkers(n int) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.Run(ctx, s.svc, s.svc.Events, worker.Config{Concurrency: n}, slog.New(slog.DiscardHandler))
	}()
	s.t.Cleanup(func() { cancel(); <-done })
}

func engines(o stackOpts) map[string]gengate.Engine {
	m := map[string]gengate.Engine{"sandbox": sandbox.New(o.sandboxDelay)}
	if o.builtinJobs > 0 {
		b := builtin.New()
		b.SetMaxJobs(o.builtinJobs)
		m["builtin"] = b
	}
	return m
}

func fetchConfig(o stackOpts) fetch.Config {
	c := o.fetch
	c.AllowPrivate = c.AllowPrivate || o.allowPrivate
	if o.maxInputBytes != 0 {
		c.MaxBytes = o.maxInputBytes
	}
	return c
}

// account creates an account with credits and returns its id and API key.
func (s *stack) account(credits int) (string, string) {
	s.t.Helper()
	ctx := context.Background()
	now := time.Now()
	acct := &gengate.Account{ID: gengate.NewID(), Name: "test", CreatedAt: now}
	if err := s.store.CreateAccount(ctx, acct, credits); err != nil {
		s.t.Fatal(err)
	}
	secret, key := gengate.NewAPIKey(acct.ID, "test", now)
	if err := s.store.CreateAPIKey(ctx, key); err != nil {
		s.t.Fatal(err)
	}
	return acct.ID, secret
}

func (s *stack) balance(accountID string) int {
	s.t.Helper()
	a, err := s.store.FindAccount(context.Background(), accountID)
	if err != nil {
		s.t.Fatal(err)
	}
	return a.Balance
}

// taskCount is the number of task records in the database.
func (s *stack) taskCount() int {
	s.t.Helper()
	var n int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM tasks`).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// fileCount is the number of files in the blob directory (inputs and
// outputs).
func (s *stack) fileCount() int {
	s.t.Helper()
	n := 0
	err := filepath.WalkDir(s.files, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// ledgerCheck checks that the account's ledger sums to its balance and
// returns the entries.
func (s *stack) ledgerCheck(accountID string) []gengate.LedgerEntry {
	s.t.Helper()
	entries, err := s.store.Ledger(context.Background(), accountID)
	if err != nil {
		s.t.Fatal(err)
	}
	sum := 0
	for _, e := range entries {
		sum += e.Amount
	}
	if b := s.balance(accountID); sum != b {
		s.t.Errorf("ledger sums to %d, balance is %d: %+v", sum, b, entries)
	}
	return entries
}

// charges counts the ledger entries of a kind per task.
func charges(entries []gengate.LedgerEntry, kind string) map[string]int {
	m := map[string]int{}
	for _, e := range entries {
		if e.Kind == kind {
			m[e.TaskID]++
		}
	}
	return m
}

// response is an HTTP response read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

func (r response) String() string {
	return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Body))
}

// str returns a string member of the JSON body.
func (r response) str(name string) string { s, _ := r.JSON[name].(string); return s }

// num returns a number member of the JSON body, or -1.
func (r response) num(name string) int {
	f, ok := r.JSON[name].(float64)
	if !ok {
		return -1
	}
	return int(f)
}

// call is one request. Body may be a string, []byte or any value to encode
// as JSON; nil sends no body. Header holds extra headers, "Content-Type"
// defaulting to application/json when there is a body.
type call struct {
	Method string
	Path   string
	Key    string // sent as Authorization: Bearer unless Header sets X-API-Key
	Body   any
	Header map[string]string
}

var client = &http.Client{Timeout: 3 * time.Minute}

func (s *stack) send(c call) (response, error) {
	var body io.Reader
	switch b := c.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		body = bytes.NewReader(data)
	}
	url := c.Path
	if strings.HasPrefix(url, "/") {
		url = s.URL + url
	}
	req, err := http.NewRequest(c.Method, url, body)
	if err != nil {
		return response{}, err
	}
	if c.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	if msg := validateAnswer(req, resp, data); msg != "" {
		s.t.Errorf("%s %s answered %d, which the OpenAPI document does not describe (add it to internal/httpapi/openapi.go): %s\n%s", c.Method, c.Path, resp.StatusCode, msg, data)
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(data, &r.JSON); err != nil {
			return r, fmt.Errorf("%s %s: body is not a JSON object: %v: %s", c.Method, c.Path, err, data)
		}
	}
	return r, nil
}

func (s *stack) do(c call) response {
	s.t.Helper()
	r, err := s.send(c)
	if err != nil {
		s.t.Fatalf("%s %s: %v", c.Method, c.Path, err)
	}
	return r
}

// generate posts a generation request.
func (s *stack) generate(key string, body any, header map[string]string) response {
	s.t.Helper()
	return s.do(call{Method: "POST", Path: "/api/v1/generate", Key: key, Body: body, Header: header})
}

var async = map[string]string{"Prefer": "respond-async"}

func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
}

// wantProblem checks an RFC 9457 problem response with the status and code.
func wantProblem(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	for _, m := range []string{"type", "title", "detail", "code", "requestId"} {
		if s, ok := r.JSON[m].(string); !ok || s == "" {
			t.Errorf("problem member %q missing or empty: %s", m, r.Body)
		}
	}
	if r.num("status") != status {
		t.Errorf("problem status %v, want %d", r.JSON["status"], status)
	}
	if got := r.str("code"); got != code {
		t.Errorf("code %q, want %q: %s", got, code, r.Body)
	}
	if id := r.Header.Get("X-Request-Id"); id == "" || id != r.str("requestId") {
		t.Errorf("X-Request-Id %q, requestId %q", id, r.str("requestId"))
	}
}

// fieldCode returns errors[0].code of a problem body.
func fieldCode(r response) string {
	errs, _ := r.JSON["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// wantAccepted checks a 202 task response and returns its jobId.
func wantAccepted(t *testing.T, r response) string {
	t.Helper()
	wantStatus(t, r, http.StatusAccepted)
	id := r.str("jobId")
	if !isUUID(id) {
		t.Fatalf("jobId %q is not a UUID: %s", id, r.Body)
	}
	if st := r.str("status"); st != "processing" {
		t.Errorf("status %q, want processing", st)
	}
	url := "/api/generation/jobs/" + id
	if got := r.str("statusUrl"); got != url {
		t.Errorf("statusUrl %q, want %q", got, url)
	}
	if got := r.Header.Get("Location"); got != url {
		t.Errorf("Location %q, want %q", got, url)
	}
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" || strings.Trim(ra, "0123456789") != "" {
		t.Errorf("Retry-After %q, want a positive number of seconds", ra)
	}
	for _, m := range []string{"images", "video"} {
		if _, ok := r.JSON[m]; ok {
			t.Errorf("a 202 carries %q: %s", m, r.Body)
		}
	}
	return id
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
	}
	return true
}

// images returns the images member of a 200 result.
func images(t *testing.T, r response) []string {
	t.Helper()
	raw, ok := r.JSON["images"].([]any)
	if !ok {
		t.Fatalf("no images array: %s", r.Body)
	}
	urls := make([]string, len(raw))
	for i, u := range raw {
		urls[i], _ = u.(string)
	}
	return urls
}

// download fetches an output URL (no API key: the token is the secret).
func download(t *testing.T, url string) ([]byte, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	return data, resp.Header.Get("Content-Type")
}

// wantImage downloads an image URL and checks its format and aspect ratio.
func wantImage(t *testing.T, url, format string, aw, ah int) {
	t.Helper()
	data, ct := download(t, url)
	cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s does not decode as an image: %v", url, err)
	}
	if got != format {
		t.Errorf("%s is %s, want %s", url, got, format)
	}
	if ct != "image/"+format {
		t.Errorf("%s Content-Type %q, want image/%s", url, ct, format)
	}
	want := float64(aw) / float64(ah)
	if r := float64(cfg.Width) / float64(cfg.Height); math.Abs(r-want)/want > 0.02 {
		t.Errorf("%s is %dx%d, not %d:%d", url, cfg.Width, cfg.Height, aw, ah)
	}
}

// wantVideo downloads a video URL and checks it is an MP4.
func wantVideo(t *testing.T, url string) {
	t.Helper()
	data, ct := download(t, url)
	if len(data) < 12 || string(data[4:8]) != "ftyp" {
		t.Fatalf("%s is not an MP4 (%d bytes, starts %q)", url, len(data), data[:min(len(data), 12)])
	}
	if ct != "video/mp4" {
		t.Errorf("%s Content-Type %q, want video/mp4", url, ct)
	}
}

func jobPath(id string) string { return "/api/generation/jobs/" + id }

// forEachDialect runs f on SQLite and on PostgreSQL.
func forEachDialect(t *testing.T, f func(t *testing.T, dialect string)) {
	for _, d := range sqltest.Dialects {
		t.Run(d, func(t *testing.T) { f(t, d) })
	}
}

// testPNG returns a real w×h PNG.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dataURL(contentType string, data []byte) string {
	return "data:" + contentType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// serveBytes runs a loopback HTTP server answering every request with data.
func serveBytes(t *testing.T, contentType string, data []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}
