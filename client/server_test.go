package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/fetch"
	"github.com/gengate/gengate/internal/httpapi"
	"github.com/gengate/gengate/internal/sqlstore"
	"github.com/gengate/gengate/internal/worker"
)

// server is a real gengate in process: SQLite in a temporary directory,
// the sandbox engine, workers and the HTTP API on loopback.
type server struct {
	URL   string
	store *sqlstore.DB
	svc   *gengate.Service
	stop  func()
}

type serverOpts struct {
	syncWait     time.Duration // default 2m
	sandboxDelay time.Duration
	reviewTerms  []string
}

func startServer(dir string, o serverOpts) (*server, error) {
	if o.syncWait == 0 {
		o.syncWait = 2 * time.Minute
	}
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, "", dir)
	if err != nil {
		return nil, err
	}
	blobs, err := blob.NewLocal(filepath.Join(dir, "files"))
	if err != nil {
		return nil, err
	}
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.DiscardHandler)
	events := gengate.NewEvents()
	svc := &gengate.Service{
		Store: store, Catalog: catalog, Engines: map[string]gengate.Engine{"sandbox": sandbox.New(o.sandboxDelay)},
		Blobs: blobs, Fetcher: fetch.New(fetch.Config{}), Events: events, Log: log, SyncWait: o.syncWait,
		ReviewTerms: o.reviewTerms, Owner: "client-test", Lease: 5 * time.Second,
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Config{Tasks: store}, log))
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.Run(wctx, svc, events, worker.Config{}, log)
	}()
	return &server{URL: srv.URL, store: store, svc: svc, stop: func() {
		srv.Close()
		cancel()
		<-done
		store.Close()
	}}, nil
}

func newServer(t *testing.T, o serverOpts) *server {
	t.Helper()
	s, err := startServer(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// account creates an account with credits and returns its id and key.
func (s *server) account(credits int) (string, string, error) {
	ctx := context.Background()
	now := time.Now()
	acct := &gengate.Account{ID: gengate.NewID(), Name: "client test", CreatedAt: now}
	if err := s.store.CreateAccount(ctx, acct, credits); err != nil {
		return "", "", err
	}
	secret, key := gengate.NewAPIKey(acct.ID, "client test", now)
	return acct.ID, secret, s.store.CreateAPIKey(ctx, key)
}

func (s *server) mustAccount(t *testing.T, credits int) (string, string) {
	t.Helper()
	id, key, err := s.account(credits)
	if err != nil {
		t.Fatal(err)
	}
	return id, key
}

func (s *server) balance(t *testing.T, accountID string) int {
	t.Helper()
	a, err := s.store.FindAccount(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}

// serverURL and apiKey are a gengate on loopback for the examples, started
// by TestMain.
var serverURL, apiKey string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gengate-client-example")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := startServer(dir, serverOpts{})
	if err == nil {
		_, apiKey, err = s.account(1000)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverURL = s.URL
	code := m.Run()
	s.stop()
	os.RemoveAll(dir)
	os.Exit(code)
}
