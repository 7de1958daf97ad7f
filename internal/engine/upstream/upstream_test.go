package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

func kindOf(err error) gengate.UpstreamKind {
	var ue *gengate.UpstreamError
	if errors.As(err, &ue) {
		return ue.Kind
	}
	return 0 // ambiguous
}

func TestSubmitClassification(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		header   map[string]string
		body     string
		kind     gengate.UpstreamKind
		code     string
		retry    time.Duration
		contains string
	}{
		{"ok", 200, nil, `{"id":"x"}`, 0, "", 0, ""},
		{"rate limited", 429, map[string]string{"Retry-After": "7"}, `{"detail":"slow down"}`, gengate.Busy, gengate.CodeUpstream, 7 * time.Second, "slow down"},
		// A 5xx or a 408 after the request was sent does not say the work
		// was not taken: ambiguous (a plain error), never sent again.
		{"server error", 500, nil, `oops`, 0, "", 0, "oops"},
		{"unavailable", 503, map[string]string{"Retry-After": "2"}, ``, 0, "", 0, "Service Unavailable"},
		{"request timeout", 408, nil, ``, 0, "", 0, "Request Timeout"},
		{"bad input", 422, nil, `{"detail":[{"loc":["body","image_size"],"msg":"bad size"}]}`, gengate.Refused, gengate.CodeRejectedInput, 0, "image_size: bad size"},
		{"unauthorized", 401, nil, `{"error":{"message":"bad key sk-secret123"}}`, gengate.Refused, gengate.CodeUpstream, 0, "[redacted]"},
		{"openai shape", 400, nil, `{"error":{"message":"Invalid size","type":"invalid_request_error"}}`, gengate.Refused, gengate.CodeRejectedInput, 0, "Invalid size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := &Client{Name: "fake", BaseURL: srv.URL, Secrets: []string{"sk-secret123"}}
			var out struct{ ID string }
			err := c.Submit(context.Background(), Request{Method: "POST", Path: "/x", JSON: map[string]string{"a": "b"}}, &out)
			if tc.kind == 0 && tc.status == 200 {
				if err != nil || out.ID != "x" {
					t.Fatalf("err %v out %+v", err, out)
				}
				return
			}
			var ue *gengate.UpstreamError
			if tc.kind == 0 {
				if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), tc.contains) {
					t.Fatalf("want an ambiguous error with %q, got %v", tc.contains, err)
				}
				return
			}
			if !errors.As(err, &ue) {
				t.Fatalf("want an UpstreamError, got %v", err)
			}
			if ue.Kind != tc.kind || ue.Code != tc.code || ue.RetryAfter != tc.retry || !strings.Contains(ue.Message, tc.contains) {
				t.Fatalf("got %+v", ue)
			}
			if strings.Contains(ue.Message, "sk-secret123") {
				t.Fatal("secret leaked")
			}
		})
	}
}

func TestSubmitConnectionRefusedIsRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := &Client{Name: "fake", BaseURL: "http://" + addr}
	err := c.Submit(context.Background(), Request{Method: "POST", Path: "/x", JSON: map[string]int{}}, nil)
	if kindOf(err) != gengate.Refused {
		t.Fatalf("got %v", err)
	}
}

func TestSubmitResetAfterSendIsAmbiguous(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close() // reset: the request was read, no answer sent
	}))
	defer srv.Close()
	c := &Client{Name: "fake", BaseURL: srv.URL}
	err := c.Submit(context.Background(), Request{Method: "POST", Path: "/x", JSON: map[string]int{}}, nil)
	if err == nil || kindOf(err) != 0 {
		t.Fatalf("a reset after send must be ambiguous, got %v", err)
	}
	// The same while polling is only Busy: reading never starts work.
	if err := c.Poll(context.Background(), Request{Method: "GET", Path: "/x"}, nil); kindOf(err) != gengate.Busy {
		t.Fatalf("poll: got %v", err)
	}
}

func TestSubmitUnreadableSuccessIsAmbiguous(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{not json") }))
	defer srv.Close()
	c := &Client{Name: "fake", BaseURL: srv.URL}
	var out struct{ ID string }
	if err := c.Submit(context.Background(), Request{Method: "POST", Path: "/x"}, &out); err == nil || kindOf(err) != 0 {
		t.Fatalf("got %v", err)
	}
}

func TestOutputChecks(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	if o, err := Output(png, "image"); err != nil || o.Ext != "png" {
		t.Fatalf("png: %+v %v", o, err)
	}
	if _, err := Output(png, "video"); kindOf(err) != gengate.Failed {
		t.Fatalf("png as video: %v", err)
	}
	if _, err := Output([]byte("<html>expired</html>"), "image"); kindOf(err) != gengate.Failed {
		t.Fatalf("html as image: %v", err)
	}
	mp4 := append([]byte{0, 0, 0, 0x18}, []byte("ftypisom0000")...)
	if o, err := Output(mp4, "video"); err != nil || o.Ext != "mp4" {
		t.Fatalf("mp4: %+v %v", o, err)
	}
}

func TestDownloadStatuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			w.WriteHeader(404)
		case "/busy":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(503)
		default:
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		}
	}))
	defer srv.Close()
	c := &Client{Name: "fake", BaseURL: srv.URL}
	if _, err := c.Download(context.Background(), srv.URL+"/ok.png", "image"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Download(context.Background(), "/busy", "image"); kindOf(err) != gengate.Busy {
		t.Fatalf("busy: %v", err)
	}
	if _, err := c.Download(context.Background(), "/gone", "image"); kindOf(err) != gengate.Failed {
		t.Fatalf("gone: %v", err)
	}
}

func TestClean(t *testing.T) {
	got := Clean(`auth "Bearer abc.def" failed for key=XYZ123&x=1 and r8_token`, "r8_token")
	for _, leak := range []string{"abc.def", "XYZ123", "r8_token"} {
		if strings.Contains(got, leak) {
			t.Fatalf("%q leaks %q", got, leak)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := RetryAfter("12", now); d != 12*time.Second {
		t.Fatal(d)
	}
	if d := RetryAfter(now.Add(5*time.Second).Format(http.TimeFormat), now); d != 5*time.Second {
		t.Fatal(d)
	}
	if d := RetryAfter("soon", now); d != 0 {
		t.Fatal(d)
	}
}

// TestSubmitProviderRules: a provider's NotAccepted rule makes an answer
// Busy (fal's ingress errors), and its Resend rule sends a submit again in
// the same call, at most MaxResends times (openai-go's 5xx).
func TestSubmitProviderRules(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path == "/ingress" {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	post := Request{Method: "POST", Path: "/ingress", JSON: map[string]string{"a": "b"}}

	c := &Client{Name: "fake", BaseURL: srv.URL}
	if err := c.Submit(context.Background(), post, nil); kindOf(err) != 0 || calls != 1 {
		t.Fatalf("no rule: %v after %d calls, want ambiguous after 1", err, calls)
	}
	calls = 0
	c.NotAccepted = func(status int, hdr http.Header) bool { return status == http.StatusBadGateway }
	if err := c.Submit(context.Background(), post, nil); kindOf(err) != gengate.Busy || calls != 1 {
		t.Fatalf("not accepted: %v after %d calls, want busy after 1", err, calls)
	}

	calls = 0
	c.Resend = func(status int, hdr http.Header) bool { return status >= 500 }
	c.MaxResends, c.ResendDelay = 2, time.Millisecond
	post.Path = "/other"
	if err := c.Submit(context.Background(), post, nil); kindOf(err) != 0 || calls != 3 {
		t.Fatalf("resend: %v after %d calls, want ambiguous after 3", err, calls)
	}
}
