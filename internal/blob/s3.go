package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/gengate/gengate"
)

// S3 is a gengate.Blobs in a bucket of an S3-compatible object store
// (AWS S3, MinIO, versitygw, ...). Keys follow the same rules as Local's and
// live under an optional prefix inside the bucket. A PUT of one object is
// atomic in S3, so like Local a reader never sees half a file.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string // "" or ends in "/"
	// parts holds one token per PartSize buffer PutStream may hold at
	// once (SetPartBuffers; DefaultPartBuffers).
	parts chan struct{}
}

var (
	_ Store         = (*S3)(nil)
	_ gengate.Blobs = (*S3)(nil)

	_ gengate.Presigner      = (*S3)(nil)
	_ gengate.BlobLister     = (*S3)(nil)
	_ gengate.PartialSweeper = (*S3)(nil)
)

// S3Config says where an S3 store lives and how to sign in to it.
type S3Config struct {
	// Endpoint is host[:port], such as "s3.amazonaws.com" or
	// "127.0.0.1:9000".
	Endpoint string
	// Secure selects https.
	Secure bool
	// Region, such as "us-east-1"; empty lets the client find out.
	Region string
	// PathStyle, if set, says whether to address the bucket as
	// endpoint/bucket (true; most self-hosted servers need it) or as
	// bucket.endpoint (false). Nil picks virtual hosts for AWS and Google
	// endpoints and paths for the rest.
	PathStyle *bool
	Bucket    string
	// Prefix, if not empty, is put before every key inside the bucket.
	Prefix string

	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// NewS3 connects to the bucket, creating it when it does not exist yet.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("storage: s3 needs a bucket")
	}
	if cfg.Endpoint == "" {
		return nil, errors.New("storage: s3 needs an endpoint")
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if checkKey(prefix) != nil {
			return nil, fmt.Errorf("storage: bad s3 prefix %q", cfg.Prefix)
		}
		prefix += "/"
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle != nil {
		lookup = minio.BucketLookupDNS
		if *cfg.PathStyle {
			lookup = minio.BucketLookupPath
		}
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
		Secure:       cfg.Secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("storage: s3 endpoint %q: %w", cfg.Endpoint, err)
	}
	s := &S3{client: client, bucket: cfg.Bucket, prefix: prefix, parts: make(chan struct{}, DefaultPartBuffers)}
	if err := s.ensureBucket(ctx, cfg.Region); err != nil {
		return nil, fmt.Errorf("storage: s3 bucket %q at %s: %w", cfg.Bucket, cfg.Endpoint, describe(err))
	}
	return s, nil
}

func (s *S3) ensureBucket(ctx context.Context, region string) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil || ok {
		return err
	}
	err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region})
	if code := minio.ToErrorResponse(err).Code; code == minio.BucketAlreadyOwnedByYou {
		return nil // made by someone else just now, or listed late
	}
	return err
}

// describe turns a refusal of the credentials into a hint. The S3 errors
// carry no secret (requests are signed in headers), so the text is kept.
func describe(err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.AccessDenied, "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken":
		return fmt.Errorf("access refused; check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN): %w", err)
	}
	return err
}

// checkKey applies Local's key rules: a relative slash-separated path with
// no empty, "." or ".." parts and no backslashes.
func checkKey(key string) error {
	if key == "" || path.Clean("/"+key) != "/"+key || strings.Contains(key, "\\") {
		return fmt.Errorf("blob: bad key %q", key)
	}
	return nil
}

func (s *S3) object(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Put writes data under key, replacing what was there, with its content
// type.
func (s *S3) Put(ctx context.Context, key string, data []byte, contentType string) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return fmt.Errorf("blob: put %s: %w", key, describe(err))
	}
	return nil
}

// PartSize is the size of the parts PutStream uploads (S3 allows 5 MiB
// to 5 GiB, and 10,000 parts: objects up to 80 GB). One part is held in
// memory per stream.
const PartSize = 8 << 20

// DefaultPartBuffers is how many streams PutStream stores at once unless
// SetPartBuffers says otherwise: 16 × PartSize = 128 MiB of part buffers.
const DefaultPartBuffers = 16

// SetPartBuffers bounds the streams PutStream stores at once, each holding
// one PartSize buffer, to n (at least 1): the memory of stored outputs is
// then at most n × PartSize whatever the number of task steps; a stream
// beyond it waits for one to finish (or its context to end) before it
// reads a byte. Call it before the store is used.
func (s *S3) SetPartBuffers(n int) {
	s.parts = make(chan struct{}, max(n, 1))
}

// PutStream copies r to its end under key and returns the bytes written.
// It holds one PartSize buffer, taken from the SetPartBuffers bound
// (waiting while every buffer is in use). A stream of one part or less is one PUT; a longer one is a multipart
// upload, one part read and sent at a time, completed only after r's
// last byte: until then no object exists under key (an older one stays),
// and one that fails (r's error, the server's, ctx ended) is aborted.
// A crash mid-stream leaves an incomplete upload, invisible to readers,
// which SweepPartial aborts once it is old.
func (s *S3) PutStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	name, err := s.object(key)
	if err != nil {
		return 0, err
	}
	select {
	case s.parts <- struct{}{}:
		defer func() { <-s.parts }()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	buf := make([]byte, PartSize)
	n, err := io.ReadFull(r, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		_, err = s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(buf[:n]), int64(n),
			minio.PutObjectOptions{ContentType: contentType})
		if err != nil {
			return 0, fmt.Errorf("blob: put %s: %w", key, describe(err))
		}
		return int64(n), nil
	}
	if err != nil {
		return 0, err
	}
	core := minio.Core{Client: s.client}
	id, err := core.NewMultipartUpload(ctx, s.bucket, name, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return 0, fmt.Errorf("blob: start upload of %s: %w", key, describe(err))
	}
	done := false
	defer func() {
		if !done {
			// Best effort: SweepPartial aborts what this leaves.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			core.AbortMultipartUpload(actx, s.bucket, name, id)
			cancel()
		}
	}()
	var parts []minio.CompletePart
	var total int64
	for num := 1; n > 0; num++ {
		p, err := core.PutObjectPart(ctx, s.bucket, name, id, num, bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			return total, fmt.Errorf("blob: upload part %d of %s: %w", num, key, describe(err))
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
		total += int64(n)
		n, err = io.ReadFull(r, buf)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return total, err
		}
	}
	if _, err := core.CompleteMultipartUpload(ctx, s.bucket, name, id, parts, minio.PutObjectOptions{ContentType: contentType}); err != nil {
		return total, fmt.Errorf("blob: complete upload of %s: %w", key, describe(err))
	}
	done = true
	return total, nil
}

// SweepPartial aborts the multipart uploads under the store's prefix that
// were started before the time (left by a crash mid-stream), and returns
// how many it aborted.
func (s *S3) SweepPartial(ctx context.Context, before time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	core := minio.Core{Client: s.client}
	n := 0
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix, true) {
		if u.Err != nil {
			return n, fmt.Errorf("blob: list incomplete uploads: %w", describe(u.Err))
		}
		if !u.Initiated.Before(before) {
			continue
		}
		if err := core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil && !isNoSuchUpload(err) {
			return n, fmt.Errorf("blob: abort upload of %s: %w", u.Key, describe(err))
		}
		n++
	}
	return n, ctx.Err()
}

func isNoSuchUpload(err error) bool {
	return minio.ToErrorResponse(err).Code == "NoSuchUpload"
}

// Get reads the object under key; a missing one is an ENotFound error, as
// with Local.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	var data []byte
	if err == nil {
		data, err = io.ReadAll(obj)
		obj.Close()
	}
	if isNotFound(err) {
		return nil, gengate.Errorf(gengate.ENotFound, "no file")
	}
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: %w", key, describe(err))
	}
	return data, nil
}

// Open opens the object under key for streaming: reads after a seek are
// ranged GETs from the offset, so a range or a HEAD of /files costs no
// more than the bytes asked for. A missing object is an ENotFound error.
func (s *S3) Open(ctx context.Context, key string) (gengate.BlobFile, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	var info minio.ObjectInfo
	if err == nil {
		info, err = obj.Stat()
		if err != nil {
			obj.Close()
		}
	}
	if isNotFound(err) {
		return nil, gengate.Errorf(gengate.ENotFound, "no file")
	}
	if err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", key, describe(err))
	}
	return &s3File{Object: obj, info: info}, nil
}

type s3File struct {
	*minio.Object
	info minio.ObjectInfo
}

func (f *s3File) Size() int64        { return f.info.Size }
func (f *s3File) ModTime() time.Time { return f.info.LastModified }

func isNotFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == minio.NoSuchKey || (r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket)
}

// Delete removes the object under key; a missing one is no error.
func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	err = s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("blob: delete %s: %w", key, describe(err))
	}
	return nil
}

// List returns the keys under prefix whose objects were last written before
// the time, in lexical order.
func (s *S3) List(ctx context.Context, prefix string, before time.Time) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine on an early return
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{
		Prefix: s.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("blob: list %s: %w", prefix, describe(obj.Err))
		}
		if strings.HasSuffix(obj.Key, "/") {
			continue // a directory marker some servers report
		}
		if obj.LastModified.Before(before) {
			keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
		}
	}
	return keys, ctx.Err()
}

// PresignGet returns a URL anyone can GET the object under key with until
// expiry passes (at most 7 days). It does not check that the object exists.
func (s *S3) PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error) {
	name, err := s.object(key)
	if err != nil {
		return "", err
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, name, expiry, nil)
	if err != nil {
		return "", fmt.Errorf("blob: presign %s: %w", key, err)
	}
	return u.String(), nil
}
