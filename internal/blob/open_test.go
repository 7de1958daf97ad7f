package blob

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var creds = env(map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t-value"})

func TestOpenLocal(t *testing.T) {
	def := filepath.Join(t.TempDir(), "default")
	other := filepath.Join(t.TempDir(), "other")
	for _, c := range []struct{ spec, dir string }{
		{"", def},
		{other, other},
		{"file://" + other, other},
		{"file://localhost" + other, other},
	} {
		s, err := Open(c.spec, def, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", c.spec, err)
		}
		if _, ok := s.(*Local); !ok {
			t.Fatalf("Open(%q) = %T, want *Local", c.spec, s)
		}
		if err := s.Put(context.Background(), "x/y", []byte("z"), "text/plain"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(c.dir, "x", "y")); err != nil {
			t.Errorf("Open(%q) stored elsewhere than %s: %v", c.spec, c.dir, err)
		}
		os.RemoveAll(c.dir)
	}
}

func TestParseS3(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		spec   string
		getenv func(string) string
		want   S3Config
	}{
		{"s3://outputs", creds, S3Config{Endpoint: "s3.amazonaws.com", Secure: true, Bucket: "outputs"}},
		{"s3://outputs/gen/gate/?endpoint=127.0.0.1:9000&region=eu-west-1&secure=false&pathStyle=true", creds,
			S3Config{Endpoint: "127.0.0.1:9000", Region: "eu-west-1", PathStyle: &yes, Bucket: "outputs", Prefix: "gen/gate"}},
		{"s3://my.bucket?pathStyle=0&secure=1", creds, S3Config{Endpoint: "s3.amazonaws.com", Secure: true, PathStyle: &no, Bucket: "my.bucket"}},
		{"s3://b-1", env(map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk",
			"AWS_SESSION_TOKEN": "tok", "AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "us-west-2"}),
			S3Config{Endpoint: "s3.amazonaws.com", Secure: true, Bucket: "b-1", Region: "ap-south-1", SessionToken: "tok"}},
		{"s3://b-1", env(map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk", "AWS_DEFAULT_REGION": "us-west-2"}),
			S3Config{Endpoint: "s3.amazonaws.com", Secure: true, Bucket: "b-1", Region: "us-west-2"}},
		{"s3://b-1?region=eu-north-1", env(map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk", "AWS_REGION": "us-west-2"}),
			S3Config{Endpoint: "s3.amazonaws.com", Secure: true, Bucket: "b-1", Region: "eu-north-1"}},
	} {
		u, err := url.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseS3(u, c.getenv)
		if err != nil {
			t.Errorf("parseS3(%q): %v", c.spec, err)
			continue
		}
		if got.AccessKeyID == "" || got.SecretAccessKey == "" {
			t.Errorf("parseS3(%q) read no credentials", c.spec)
		}
		got.AccessKeyID, got.SecretAccessKey = "", ""
		if (got.PathStyle == nil) != (c.want.PathStyle == nil) || got.PathStyle != nil && *got.PathStyle != *c.want.PathStyle {
			t.Errorf("parseS3(%q).PathStyle = %v, want %v", c.spec, got.PathStyle, c.want.PathStyle)
		}
		got.PathStyle, c.want.PathStyle = nil, nil
		if got != c.want {
			t.Errorf("parseS3(%q) = %+v, want %+v", c.spec, got, c.want)
		}
	}
}

// TestOpenBadSpecs checks that Open refuses bad specs before any network
// call, saying what is wrong and never echoing a secret.
func TestOpenBadSpecs(t *testing.T) {
	for _, c := range []struct {
		spec, defaultDir string
		getenv           func(string) string
		want             string
	}{
		{"", "", creds, "storage: no directory given"},
		{"s3://", "", creds, "storage: s3 url needs a bucket"},
		{"s3:///prefix", "", creds, "storage: s3 url needs a bucket"},
		{"s3://bucket", "", nil, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"s3://bucket", "", env(map[string]string{"AWS_ACCESS_KEY_ID": "id"}), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"s3://bucket", "", env(map[string]string{"AWS_SECRET_ACCESS_KEY": "s3cr3t-value"}), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"s3://AKID:s3cr3t-value@bucket", "", creds, "must not hold credentials"},
		{"s3://AKID:s3cr3t-value%zz@bucket", "", creds, "storage: bad storage url"},
		{"s3://bucket:9000", "", creds, "?endpoint=host:port"},
		{"s3://Bad_Bucket", "", creds, "bad s3 bucket name"},
		{"s3://ab", "", creds, "bad s3 bucket name"},
		{"s3://bucket/a//b", "", creds, "bad s3 prefix"},
		{"s3://bucket/a/../b", "", creds, "bad s3 prefix"},
		{"s3://bucket?endpoint=http://127.0.0.1:9000", "", creds, "must be host[:port]"},
		{"s3://bucket?endpoint=", "", creds, "must be host[:port]"},
		{"s3://bucket?secure=maybe", "", creds, `secure="maybe" is not true or false`},
		{"s3://bucket?pathStyle=yes", "", creds, `pathStyle="yes" is not true or false`},
		{"s3://bucket?region=a&region=b", "", creds, "region given 2 times"},
		{"s3://bucket?endpoint=h:1&acl=public", "", creds, `unknown s3 url parameter "acl"`},
		{"s3://bucket?x=%zz", "", creds, "bad s3 url parameters"},
		{"s3://bucket#frag", "", creds, "fragment"},
		{"gs://bucket", "", creds, `unknown scheme "gs"`},
		{"file://relative/dir", "", creds, "absolute path"},
		{"file:///dir?x=1", "", creds, "without parameters"},
	} {
		s, err := Open(c.spec, c.defaultDir, c.getenv)
		if err == nil {
			t.Errorf("Open(%q) = %T, want an error", c.spec, s)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "storage: ") || !strings.Contains(msg, c.want) {
			t.Errorf("Open(%q) error = %q, want it to contain %q", c.spec, msg, c.want)
		}
		if strings.Contains(msg, "s3cr3t") {
			t.Errorf("Open(%q) error holds the secret: %q", c.spec, msg)
		}
	}
}
