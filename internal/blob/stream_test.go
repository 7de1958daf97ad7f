package blob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/blob"
	"github.com/gengate/gengate/internal/blob/s3test"
)

// randomStream is n bytes of seeded noise, made as they are read.
func randomStream(seed byte, n int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{seed}), n)
}

// failingStream gives n bytes, then err.
type failingStream struct {
	r   io.Reader
	err error
}

func (f *failingStream) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

var errUpstreamBroke = errors.New("the upstream broke off")

// streamContract is what PutStream promises on both stores.
var streamContract = []struct {
	name string
	run  func(t *testing.T, s blob.Store)
}{
	{"RoundTrip", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		// 1 KiB (one PUT on S3), exactly one part, and 2.5 parts
		// (multipart, with a short last part).
		for i, size := range []int64{1 << 10, blob.PartSize, blob.PartSize*5/2 + 7} {
			key := "outputs/stream/" + string(rune('a'+i)) + ".mp4"
			n, err := s.PutStream(ctx, key, randomStream(byte(i), size), "video/mp4")
			if err != nil || n != size {
				t.Fatalf("PutStream of %d bytes = %d, %v", size, n, err)
			}
			got, err := s.Get(ctx, key)
			want, _ := io.ReadAll(randomStream(byte(i), size))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Get after PutStream of %d bytes = %d bytes, %v", size, len(got), err)
			}
		}
	}},
	{"FailedStreamLeavesNothing", func(t *testing.T, s blob.Store) {
		ctx := context.Background()
		must(t, s.Put(ctx, "outputs/t/0.mp4", []byte("the older file"), "video/mp4"))
		for _, size := range []int64{100, blob.PartSize*2 + 5} { // before and after the first part
			for _, key := range []string{"outputs/t/0.mp4", "outputs/t/1.mp4"} {
				_, err := s.PutStream(ctx, key, &failingStream{randomStream(1, size), errUpstreamBroke}, "video/mp4")
				if !errors.Is(err, errUpstreamBroke) {
					t.Fatalf("PutStream of a failing stream = %v, want its error", err)
				}
			}
			if got, err := s.Get(ctx, "outputs/t/0.mp4"); err != nil || string(got) != "the older file" {
				t.Fatalf("Get of the key a failed stream overwrote = %q, %v; want the older file", got, err)
			}
			if _, err := s.Get(ctx, "outputs/t/1.mp4"); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Fatalf("Get of the key a failed stream wrote = %v, want NOT_FOUND", err)
			}
			keys, err := s.List(ctx, "", time.Now().Add(time.Minute))
			if err != nil || strings.Join(keys, ",") != "outputs/t/0.mp4" {
				t.Fatalf("List = %q, %v; want only the older file", keys, err)
			}
			// Nothing partial is left either: no temporary file, no
			// incomplete multipart upload.
			if n, err := s.SweepPartial(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
				t.Fatalf("SweepPartial after the failed streams = %d, %v; want 0 left behind", n, err)
			}
		}
	}},
	{"CanceledContextStops", func(t *testing.T, s blob.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.PutStream(ctx, "outputs/c/0.mp4", randomStream(2, blob.PartSize*2), "video/mp4"); err == nil {
			t.Fatal("PutStream with a canceled context succeeded")
		}
		if _, err := s.Get(context.Background(), "outputs/c/0.mp4"); gengate.ErrorCode(err) != gengate.ENotFound {
			t.Fatalf("Get after a canceled PutStream = %v, want NOT_FOUND", err)
		}
	}},
}

// TestPutStreamContract runs streamContract over Local and S3 (on a real
// versitygw).
func TestPutStreamContract(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		for _, c := range streamContract {
			t.Run(c.name, func(t *testing.T) {
				s, err := blob.Open("", t.TempDir(), nil)
				must(t, err)
				c.run(t, s)
			})
		}
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t)
		for _, c := range streamContract {
			t.Run(c.name, func(t *testing.T) { c.run(t, openS3(t, srv, newBucket()+"/p")) })
		}
	})
}

// TestS3PutStreamIsMultipart: a stream longer than a part is stored by a
// multipart upload, one part per PartSize (the ETag of such an object ends
// in "-parts").
func TestS3PutStreamIsMultipart(t *testing.T) {
	srv := s3test.Start(t)
	bucket := newBucket()
	s := openS3(t, srv, bucket)
	ctx := context.Background()
	_, err := s.PutStream(ctx, "outputs/m/0.mp4", randomStream(3, blob.PartSize*5/2), "video/mp4")
	must(t, err)
	info, err := rawS3(t, srv).StatObject(ctx, bucket, "outputs/m/0.mp4", minio.StatObjectOptions{})
	must(t, err)
	if !strings.HasSuffix(info.ETag, "-3") || info.ContentType != "video/mp4" {
		t.Fatalf("object ETag %q, type %q; want a 3-part upload's ETag and video/mp4", info.ETag, info.ContentType)
	}
}

func rawS3(t *testing.T, srv *s3test.Server) *minio.Client {
	t.Helper()
	c, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.Secret, ""),
		Region: srv.Region, BucketLookup: minio.BucketLookupPath})
	must(t, err)
	return c
}

// TestPutStreamKilledMidway: a process killed (SIGKILL) while it streams
// a file leaves nothing a reader sees under the key, and what it did
// leave (a temporary file, an incomplete multipart upload) is removed by
// SweepPartial.
func TestPutStreamKilledMidway(t *testing.T) {
	if os.Getenv("BLOB_STREAM_CHILD_SPEC") != "" {
		t.Skip("the child's work is TestPutStreamChild")
	}
	for _, kind := range []string{"local", "s3"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			var spec string
			var getenv func(string) string
			var started func() bool
			switch kind {
			case "local":
				spec = t.TempDir()
				started = func() bool {
					found := false
					filepath.WalkDir(spec, func(p string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".tmp-") {
							if info, err := d.Info(); err == nil && info.Size() > 4<<20 {
								found = true
							}
						}
						return nil
					})
					return found
				}
			case "s3":
				srv := s3test.Start(t)
				bucket := newBucket()
				spec, getenv = srv.Spec(bucket), srv.Getenv
				openS3(t, srv, bucket) // creates the bucket
				raw := rawS3(t, srv)
				started = func() bool {
					for u := range raw.ListIncompleteUploads(ctx, bucket, "", true) {
						if u.Err == nil {
							return true
						}
					}
					return false
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run", "^TestPutStreamChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "BLOB_STREAM_CHILD_SPEC="+spec)
			if getenv != nil {
				for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
					cmd.Env = append(cmd.Env, k+"="+getenv(k))
				}
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			must(t, cmd.Start())
			deadline := time.Now().Add(2 * time.Minute)
			for !started() {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the child never got mid-stream:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			must(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()

			s, err := blob.Open(spec, "", getenv)
			must(t, err)
			if _, err := s.Get(ctx, "outputs/k/0.mp4"); gengate.ErrorCode(err) != gengate.ENotFound {
				t.Fatalf("Get after the kill = %v, want NOT_FOUND", err)
			}
			if keys, err := s.List(ctx, "", time.Now().Add(time.Minute)); err != nil || len(keys) != 0 {
				t.Fatalf("List after the kill = %q, %v; want nothing", keys, err)
			}
			if n, err := s.SweepPartial(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
				t.Fatalf("SweepPartial of older leftovers = %d, %v; want 0 (the kill was just now)", n, err)
			}
			if n, err := s.SweepPartial(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
				t.Fatalf("SweepPartial = %d, %v; want the 1 write the kill cut short", n, err)
			}
			if n, err := s.SweepPartial(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
				t.Fatalf("second SweepPartial = %d, %v; want 0", n, err)
			}
		})
	}
}

// TestPutStreamChild is the process TestPutStreamKilledMidway kills: it
// streams an endless file into the store it is given.
func TestPutStreamChild(t *testing.T) {
	spec := os.Getenv("BLOB_STREAM_CHILD_SPEC")
	if spec == "" {
		t.Skip("run by TestPutStreamKilledMidway")
	}
	s, err := blob.Open(spec, "", os.Getenv)
	must(t, err)
	_, err = s.PutStream(context.Background(), "outputs/k/0.mp4", rand.NewChaCha8([32]byte{9}), "video/mp4")
	t.Fatalf("an endless PutStream ended: %v", err)
}
