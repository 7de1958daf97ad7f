// Package s3test runs a real S3 server, versitygw, on loopback for tests.
// It is used only by tests.
//
// The binary is found through GENGATE_VERSITYGW, then PATH, then
// $(go env GOPATH)/bin. Without it tests skip, except under CI=true, where
// they fail. Install it with:
//
//	go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
package s3test

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Install is the command that installs the server.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Server is a running versitygw.
type Server struct {
	Endpoint  string // 127.0.0.1:port
	AccessKey string
	Secret    string
	Region    string
	Dir       string // where the posix backend keeps the buckets
	stop      func()
}

// Stop kills the server before the test ends (an outage); the cleanup
// then does nothing more.
func (s *Server) Stop() { s.stop() }

// Spec returns the s3:// URL blob.Open takes for bucket (or
// "bucket/prefix") on this server. The credentials are not in it: pass
// s.Getenv as Open's getenv.
func (s *Server) Spec(bucket string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {s.Region},
		"secure": {"false"}, "pathStyle": {"true"}}
	return "s3://" + bucket + "?" + q.Encode()
}

// Getenv answers the AWS_* variables with the server's credentials and
// region, and nothing else.
func (s *Server) Getenv(name string) string {
	switch name {
	case "AWS_ACCESS_KEY_ID":
		return s.AccessKey
	case "AWS_SECRET_ACCESS_KEY":
		return s.Secret
	case "AWS_REGION":
		return s.Region
	}
	return ""
}

// Binary returns the versitygw path, or "" when it is not installed.
func Binary() (string, error) {
	if p := os.Getenv("GENGATE_VERSITYGW"); p != "" {
		if !executable(p) {
			return "", fmt.Errorf("GENGATE_VERSITYGW=%s is not an executable file", p)
		}
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	if p := filepath.Join(gopath(), "bin", "versitygw"); executable(p) {
		return p, nil
	}
	return "", nil
}

var gopath = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		return filepath.SplitList(p)[0]
	}
	return build.Default.GOPATH
})

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start runs versitygw on a free loopback port with an empty temporary
// directory, waits until it accepts connections and stops it when the test
// ends. Without the binary it skips the test, or fails it under CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("versitygw not installed (CI needs it): " + Install)
		}
		t.Skip("versitygw not installed: " + Install)
	}
	// Another process may take the free port between our check and the
	// server's bind; then the server exits, and we try another port.
	for attempt := 1; ; attempt++ {
		s, err := start(t, bin)
		if err == nil {
			return s
		}
		if attempt == 3 || !errors.Is(err, errExited) {
			t.Fatal(err)
		}
		t.Log(err, "; retrying")
	}
}

var errExited = errors.New("versitygw exited")

func start(t testing.TB, bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint:  net.JoinHostPort("127.0.0.1", port),
		AccessKey: "testadmin",
		Secret:    "testsecret123",
		Region:    "us-east-1",
		Dir:       t.TempDir(),
	}
	cmd := exec.Command(bin, "--quiet", "--access", s.AccessKey, "--secret", s.Secret,
		"--region", s.Region, "--port", s.Endpoint, "posix", s.Dir)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Kill()
			<-exited
		})
	}
	s.stop = stop

	// Ready when the port accepts a connection while the process still
	// runs (so it is not some other process's port).
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			return nil, fmt.Errorf("%w before it was ready: %s\n%s", errExited, cmd.ProcessState, out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", s.Endpoint, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("versitygw not listening on %s after 30s: %v\n%s", s.Endpoint, err, out.String())
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", out.String())
		}
	})
	return s, nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// syncBuffer collects the server's output, written by exec's copying
// goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
