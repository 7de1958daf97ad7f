package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/gengate/gengate"
)

// Store is what both stores do: gengate.Blobs plus the List that the purge
// job uses to find orphaned files.
type Store interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
	PutStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	// SweepPartial removes what writes cut short by a crash left behind
	// (temporary files, incomplete multipart uploads) that began before
	// the time.
	SweepPartial(ctx context.Context, before time.Time) (int, error)
	Get(ctx context.Context, key string) ([]byte, error)
	Open(ctx context.Context, key string) (gengate.BlobFile, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string, before time.Time) ([]string, error)
}

var _ Store = (*Local)(nil)

// openTimeout bounds the bucket check (and creation) Open makes.
const openTimeout = 30 * time.Second

// Open returns the store a spec names:
//
//   - "" → a Local store in defaultDir;
//   - "/some/dir" or "file:///some/dir" → a Local store there;
//   - "s3://bucket[/prefix]?endpoint=host:port&region=r&secure=false&pathStyle=true"
//     → an S3 store; every parameter is optional (endpoint defaults to
//     s3.amazonaws.com, secure to true, region to AWS_REGION or
//     AWS_DEFAULT_REGION, pathStyle to what suits the endpoint). The
//     credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and,
//     if set, AWS_SESSION_TOKEN, read through getenv (nil reads nothing).
//     The bucket is created if it does not exist.
//
// Errors start with "storage:" and never hold a secret.
func Open(spec, defaultDir string, getenv func(string) string) (Store, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if !strings.Contains(spec, "://") {
		dir := spec
		if dir == "" {
			dir = defaultDir
		}
		if dir == "" {
			return nil, errors.New("storage: no directory given")
		}
		return newLocal(dir)
	}
	u, err := url.Parse(spec)
	if err != nil {
		// url.Error quotes the whole spec, which may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) && !strings.Contains(spec, "@") {
			err = ue.Err
		} else {
			err = errors.New("malformed")
		}
		return nil, fmt.Errorf("storage: bad storage url: %v", err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("storage: file url needs an absolute path (file:///dir), not host %q", u.Host)
		}
		if u.Path == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, errors.New("storage: file url must be file:///dir, without parameters")
		}
		return newLocal(u.Path)
	case "s3":
		cfg, err := parseS3(u, getenv)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		return NewS3(ctx, cfg)
	default:
		return nil, fmt.Errorf("storage: unknown scheme %q; use a directory, file:///dir or s3://bucket", u.Scheme)
	}
}

// ParseS3URL reads an s3:// URL as Open does (the same parameters and
// AWS_* credentials through getenv) without connecting; the replica of
// serve --replicate is named by the same URL form.
func ParseS3URL(spec string, getenv func(string) string) (S3Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	u, err := url.Parse(spec)
	if err != nil || u.Scheme != "s3" {
		return S3Config{}, errors.New("storage: want s3://bucket[/prefix]?endpoint=host:port&region=r&secure=true&pathStyle=true")
	}
	return parseS3(u, getenv)
}

func newLocal(dir string) (Store, error) {
	l, err := NewLocal(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return l, nil
}

func parseS3(u *url.URL, getenv func(string) string) (S3Config, error) {
	var cfg S3Config
	if u.User != nil {
		return cfg, errors.New("storage: s3 url must not hold credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Host == "" {
		return cfg, errors.New("storage: s3 url needs a bucket (s3://bucket[/prefix])")
	}
	if u.Port() != "" {
		return cfg, fmt.Errorf("storage: s3 url names a bucket, not a server (%q); give the server as ?endpoint=host:port", u.Host)
	}
	if err := s3utils.CheckValidBucketNameStrict(u.Host); err != nil {
		return cfg, fmt.Errorf("storage: bad s3 bucket name %q: %v", u.Host, err)
	}
	if u.Fragment != "" {
		return cfg, errors.New("storage: s3 url must not have a #fragment")
	}
	cfg.Bucket = u.Host
	cfg.Prefix = strings.Trim(u.Path, "/")
	if cfg.Prefix != "" && checkKey(cfg.Prefix) != nil {
		return cfg, fmt.Errorf("storage: bad s3 prefix %q", u.Path)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return cfg, fmt.Errorf("storage: bad s3 url parameters: %v", err)
	}
	cfg.Endpoint, cfg.Secure = "s3.amazonaws.com", true
	for _, name := range slices.Sorted(maps.Keys(q)) {
		vals := q[name]
		if len(vals) != 1 {
			return cfg, fmt.Errorf("storage: s3 url parameter %s given %d times", name, len(vals))
		}
		v := vals[0]
		switch name {
		case "endpoint":
			if v == "" || strings.ContainsAny(v, "/@?#") {
				return cfg, fmt.Errorf("storage: s3 endpoint %q must be host[:port] (use secure=false for plain http)", v)
			}
			cfg.Endpoint = v
		case "region":
			cfg.Region = v
		case "secure":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return cfg, fmt.Errorf("storage: s3 url parameter secure=%q is not true or false", v)
			}
			cfg.Secure = b
		case "pathStyle":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return cfg, fmt.Errorf("storage: s3 url parameter pathStyle=%q is not true or false", v)
			}
			cfg.PathStyle = &b
		default:
			return cfg, fmt.Errorf("storage: unknown s3 url parameter %q (want endpoint, region, secure, pathStyle)", name)
		}
	}
	if cfg.Region == "" {
		cfg.Region = getenv("AWS_REGION")
	}
	if cfg.Region == "" {
		cfg.Region = getenv("AWS_DEFAULT_REGION")
	}
	cfg.AccessKeyID = getenv("AWS_ACCESS_KEY_ID")
	cfg.SecretAccessKey = getenv("AWS_SECRET_ACCESS_KEY")
	cfg.SessionToken = getenv("AWS_SESSION_TOKEN")
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return cfg, errors.New("storage: s3 needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set")
	}
	return cfg, nil
}
