package blob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/blob/s3test"
)

var _ gengate.Blobs = blob.Store(nil)

var bucketSeq atomic.Int64

// newBucket returns a bucket name not used before in this test binary.
func newBucket() string {
	return fmt.Sprintf("bucket-%d", bucketSeq.Add(1))
}

func openS3(t *testing.T, srv *s3test.Server, bucketAndPrefix string) *blob.S3 {
	t.Helper()
	s, err := blob.Open(srv.Spec(bucketAndPrefix), "", srv.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*blob.S3)
}

// TestStoreContract runs the same checks over Local and S3 (on a real
// versitygw), so callers see no difference between them.
func TestStoreContract(t *testing.T) {
	kinds := []struct {
		name  string
		setup func(t *testing.T) func(t *testing.T) blob.Store
	}{
		{"local", func(t *testing.T) func(t *testing.T) blob.Store {
			return func(t *testing.T) blob.Store {
				s, err := blob.Open("", t.TempDir(), nil)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		}},
		{"s3", func(t *testing.T) func(t *testing.T) blob.Store {
			srv := s3test.Start(t)
			return func(t *testing.T) blob.Store { return openS3(t, srv, newBucket()) }
		}},
		{"s3-prefix", func(t *testing.T) func(t *testing.T) blob.Store {
			srv := s3test.Start(t)
			return func(t *testing.T) blob.Store { return openS3(t, srv, newBucket()+"/tenant/one") }
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			newStore := k.setup(t)
			for _, c := range contract {
				t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
			}
		})
	}
}

var contract = []struct {
	name string
	run  func(t *testing.T, s blob.Store)
}{
	{"RoundTrip3MiB", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		data := make([]byte, 3<<20)
		rand.NewChaCha8([32]byte{1}).Read(data)
		if err := s.Put(ctx, "outputs/task/0.png", data, "image/png"); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "outputs/task/0.png")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get = %d bytes, %v; want the %d put", len(got), err, len(data))
		}
	}},
	{"OpenSeeksAndSizes", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		data := make([]byte, 1<<20)
		rand.NewChaCha8([32]byte{2}).Read(data)
		must(t, s.Put(ctx, "outputs/task/1.png", data, "image/png"))
		f, err := s.Open(ctx, "outputs/task/1.png")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.Size() != int64(len(data)) || f.ModTime().IsZero() || time.Since(f.ModTime()) > time.Hour {
			t.Fatalf("Size %d, ModTime %v; want %d and about now", f.Size(), f.ModTime(), len(data))
		}
		for _, off := range []int64{700000, 0, int64(len(data)) - 5} {
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 5)
			if _, err := io.ReadFull(f, buf); err != nil || !bytes.Equal(buf, data[off:off+5]) {
				t.Fatalf("read at %d: %v", off, err)
			}
		}
		if end, err := f.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
			t.Fatalf("Seek to end = %d, %v", end, err)
		}
		if _, err := s.Open(ctx, "outputs/none/0.png"); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Fatalf("Open of a missing key: %v, want NOT_FOUND", err)
		}
		if _, err := s.Open(ctx, "../x"); err == nil || gengate.ErrorCode(err) == gengate.ENotFound {
			t.Fatalf("Open of a bad key: %v, want a bad-key error", err)
		}
	}},
	{"Overwrite", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		must(t, s.Put(ctx, "k/v", []byte("a longer first value"), "text/plain"))
		must(t, s.Put(ctx, "k/v", []byte("second"), "text/plain"))
		if got, err := s.Get(ctx, "k/v"); err != nil || string(got) != "second" {
			t.Fatalf("Get = %q, %v; want the second write", got, err)
		}
	}},
	{"EmptyFile", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		must(t, s.Put(ctx, "empty", nil, "application/octet-stream"))
		if got, err := s.Get(ctx, "empty"); err != nil || len(got) != 0 {
			t.Fatalf("Get = %q, %v; want empty", got, err)
		}
	}},
	{"MissingKeyIsNotFound", func(t *testing.T, s blob.Store) {
		_, err := s.Get(context.Background(), "outputs/none/0.png")
		var e *gengate.Error
		if !errors.As(err, &e) || e.Code != gengate.ENotFound || e.Message != "no file" {
			t.Fatalf("Get of a missing key: %#v, want the NOT_FOUND %q Local gives", err, "no file")
		}
	}},
	{"DeleteIsIdempotent", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		must(t, s.Delete(ctx, "never/was"))
		must(t, s.Put(ctx, "a/b/c", []byte("x"), "text/plain"))
		must(t, s.Delete(ctx, "a/b/c"))
		if _, err := s.Get(ctx, "a/b/c"); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Fatalf("Get after Delete: %v, want NOT_FOUND", err)
		}
		must(t, s.Delete(ctx, "a/b/c"))
	}},
	{"BadKeys", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		for _, key := range []string{"", "../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", `a\b`, "a/"} {
			if err := s.Put(ctx, key, []byte("x"), "text/plain"); err == nil {
				t.Errorf("Put(%q) succeeded, want an error", key)
			}
			if _, err := s.Get(ctx, key); err == nil || gengate.ErrorCode(err) == gengate.ENotFound {
				t.Errorf("Get(%q) = %v, want a bad-key error", key, err)
			}
			if err := s.Delete(ctx, key); err == nil {
				t.Errorf("Delete(%q) succeeded, want an error", key)
			}
		}
	}},
	{"ListPrefixAndTime", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		keys := []string{"inputs/a/imageUrl", "inputs/ab/mask", "inputs/b/deep/er/x", "outputs/a/0.png", "inputsx"}
		for _, key := range keys {
			must(t, s.Put(ctx, key, []byte("x"), "image/png"))
		}
		later, earlier := time.Now().Add(time.Minute), time.Now().Add(-time.Minute)
		for _, c := range []struct {
			prefix string
			before time.Time
			want   string
		}{
			{"inputs/", later, "inputs/a/imageUrl,inputs/ab/mask,inputs/b/deep/er/x"},
			{"inputs/a", later, "inputs/a/imageUrl,inputs/ab/mask"},
			{"inputs/a/", later, "inputs/a/imageUrl"},
			{"inputs/b/deep/", later, "inputs/b/deep/er/x"},
			{"", later, "inputs/a/imageUrl,inputs/ab/mask,inputs/b/deep/er/x,inputsx,outputs/a/0.png"},
			{"nothing/", later, ""},
			{"inputs/", earlier, ""},
			{"", earlier, ""},
		} {
			got, err := s.List(ctx, c.prefix, c.before)
			if err != nil || strings.Join(got, ",") != c.want {
				t.Errorf("List(%q, %s) = %q, %v; want %q", c.prefix, c.before.Format(time.TimeOnly), got, err, c.want)
			}
		}
	}},
	{"ListEmpty", func(t *testing.T, s blob.Store) {
		if got, err := s.List(context.Background(), "inputs/", time.Now().Add(time.Minute)); err != nil || len(got) != 0 {
			t.Fatalf("List on an empty store = %v, %v; want none, nil", got, err)
		}
	}},
	{"ConcurrentPuts", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		const n = 24
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				errs[i] = s.Put(ctx, fmt.Sprintf("conc/%02d/out.bin", i), bytes.Repeat([]byte{byte(i)}, 1000+i), "application/octet-stream")
			})
		}
		wg.Wait()
		must(t, errors.Join(errs...))
		keys, err := s.List(ctx, "conc/", time.Now().Add(time.Minute))
		if err != nil || len(keys) != n {
			t.Fatalf("List = %d keys, %v; want %d", len(keys), err, n)
		}
		for i := range n {
			got, err := s.Get(ctx, keys[i])
			if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 1000+i)) {
				t.Fatalf("Get(%s) = %d bytes, %v", keys[i], len(got), err)
			}
		}
	}},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestS3PresignGetKeepsContentType(t *testing.T) {
	srv := s3test.Start(t)
	s := openS3(t, srv, newBucket()+"/pre")
	ctx := context.Background()
	data := bytes.Repeat([]byte("webp"), 5000)
	must(t, s.Put(ctx, "outputs/t/0.webp", data, "image/webp"))
	u, err := s.PresignGet(ctx, "outputs/t/0.webp", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(u, srv.Secret) {
		t.Fatalf("presigned URL holds the secret: %s", u)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("GET presigned = %s, %d bytes, %v", resp.Status, len(body), err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "image/webp" {
		t.Errorf("Content-Type = %q, want image/webp", ct)
	}
	// The URL is signed for GET only, and for that object only.
	bad := strings.Replace(u, "0.webp", "1.webp", 1)
	resp2, err := http.Get(bad)
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusForbidden {
		t.Errorf("GET of another key with the signature = %s, want 403", resp2.Status)
	}
}

func TestS3PrefixesKeepStoresApart(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	bucket := newBucket()
	a, b, whole := openS3(t, srv, bucket+"/a"), openS3(t, srv, bucket+"/b/c"), openS3(t, srv, bucket)
	must(t, a.Put(ctx, "k", []byte("in a"), "text/plain"))
	must(t, b.Put(ctx, "k", []byte("in b"), "text/plain"))
	if got, err := a.Get(ctx, "k"); err != nil || string(got) != "in a" {
		t.Fatalf("a.Get = %q, %v", got, err)
	}
	if got, err := b.List(ctx, "", time.Now().Add(time.Minute)); err != nil || strings.Join(got, ",") != "k" {
		t.Fatalf("b.List = %q, %v; want [k]", got, err)
	}
	if got, err := whole.List(ctx, "", time.Now().Add(time.Minute)); err != nil || strings.Join(got, ",") != "a/k,b/c/k" {
		t.Fatalf("whole-bucket List = %q, %v", got, err)
	}
	must(t, a.Delete(ctx, "k"))
	if got, err := b.Get(ctx, "k"); err != nil || string(got) != "in b" {
		t.Fatalf("b.Get after a.Delete = %q, %v", got, err)
	}
}

func TestOpenCreatesBucketOnce(t *testing.T) {
	srv := s3test.Start(t)
	bucket := newBucket()
	s1 := openS3(t, srv, bucket)
	if fi, err := os.Stat(filepath.Join(srv.Dir, bucket)); err != nil || !fi.IsDir() {
		t.Fatalf("bucket directory after Open: %v", err)
	}
	must(t, s1.Put(context.Background(), "k", []byte("v"), "text/plain"))
	// Opening an existing bucket (ours) neither fails nor empties it.
	s2 := openS3(t, srv, bucket)
	if got, err := s2.Get(context.Background(), "k"); err != nil || string(got) != "v" {
		t.Fatalf("Get through a second Open = %q, %v", got, err)
	}
	// Many processes starting at once all get the bucket.
	bucket = newBucket()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = blob.Open(srv.Spec(bucket), "", srv.Getenv) })
	}
	wg.Wait()
	must(t, errors.Join(errs...))
}

func TestS3WrongSecret(t *testing.T) {
	srv := s3test.Start(t)
	const wrong = "not-the-secret-42"
	for _, bucket := range []string{newBucket(), "existing-one"} {
		if bucket == "existing-one" {
			openS3(t, srv, bucket)
		}
		getenv := func(k string) string {
			if k == "AWS_SECRET_ACCESS_KEY" {
				return wrong
			}
			return srv.Getenv(k)
		}
		start := time.Now()
		_, err := blob.Open(srv.Spec(bucket), "", getenv)
		if err == nil {
			t.Fatalf("Open(%s) with a wrong secret succeeded", bucket)
		}
		msg := err.Error()
		t.Logf("Open(%s) with a wrong secret: %v (%v)", bucket, msg, time.Since(start).Round(time.Millisecond))
		if strings.Contains(msg, wrong) || strings.Contains(msg, srv.Secret) {
			t.Errorf("error holds a secret: %s", msg)
		}
		for _, want := range []string{"storage:", bucket, "AWS_SECRET_ACCESS_KEY"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not mention %q", msg, want)
			}
		}
	}
}

func TestS3UnreachableEndpoint(t *testing.T) {
	// Nothing listens on port 1. The client retries (a store starting
	// beside its server wants that), so bound it with the context; Open
	// itself allows 30s. The error names the endpoint and holds no secret.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := blob.NewS3(ctx, blob.S3Config{Endpoint: "127.0.0.1:1", Bucket: "bucket", Region: "us-east-1",
		AccessKeyID: "id", SecretAccessKey: "sekrit"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "sekrit") {
		t.Fatalf("NewS3 of an unreachable endpoint: %v", err)
	}
	t.Log(err)
}

func TestS3ListStopsOnCanceledContext(t *testing.T) {
	srv := s3test.Start(t)
	s := openS3(t, srv, newBucket())
	must(t, s.Put(context.Background(), "a/b", []byte("x"), "text/plain"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.List(ctx, "", time.Now().Add(time.Minute)); err == nil {
		t.Fatal("List with a canceled context succeeded")
	}
	if _, err := s.Get(ctx, "a/b"); err == nil || gengate.ErrorCode(err) == gengate.ENotFound {
		t.Fatalf("Get with a canceled context = %v, want a context error", err)
	}
}
