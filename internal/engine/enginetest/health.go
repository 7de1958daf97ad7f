package enginetest

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/gengate/gengate"
)

// HealthChecker is an engine that checks at start that its provider
// answers and takes its key.
type HealthChecker interface {
	CheckHealth(ctx context.Context) error
}

// Health checks an engine's CheckHealth against its fake: with the key the
// fake takes it is healthy; with another key it is refused with the status
// the provider gives a wrong key (wrongKeyStatus); at an address where
// nothing listens it is unreachable (an UpstreamError with no status).
func Health(t *testing.T, fake interface {
	URL() string
	Key() string
}, newEngine func(key, baseURL string) HealthChecker, wrongKeyStatus int) {
	t.Helper()
	ctx := context.Background()
	if err := newEngine(fake.Key(), fake.URL()).CheckHealth(ctx); err != nil {
		t.Errorf("right key: %v", err)
	}
	var ue *gengate.UpstreamError
	err := newEngine("wrong-key-0000", fake.URL()).CheckHealth(ctx)
	if !errors.As(err, &ue) || ue.Status != wrongKeyStatus {
		t.Errorf("wrong key: %v, want status %d", err, wrongKeyStatus)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	err = newEngine(fake.Key(), closed).CheckHealth(ctx)
	if !errors.As(err, &ue) || ue.Status != 0 {
		t.Errorf("closed address: %v, want an upstream error with no status", err)
	}
}
