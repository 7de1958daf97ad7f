package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestMethodNotAllowed(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(10)
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/api/v1/generate", "POST"},
		{"DELETE", "/api/v1/generate", "POST"},
		{"POST", "/api/v1/models", "GET, HEAD"},
		{"PUT", "/api/generation/jobs/0b6f7a5e-0000-4000-8000-000000000000", "GET, HEAD, POST"},
	} {
		r := s.do(call{Method: c.method, Path: c.path, Key: key})
		wantStatus(t, r, http.StatusMethodNotAllowed)
		if r.JSON["code"] != "METHOD_NOT_ALLOWED" || r.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: code %v, Allow %q; want METHOD_NOT_ALLOWED, %q", c.method, c.path, r.JSON["code"], r.Header.Get("Allow"), c.allow)
		}
	}
	r := s.do(call{Method: "GET", Path: "/api/v2/nothing", Key: key})
	wantStatus(t, r, http.StatusNotFound)
	if r.JSON["code"] != "NOT_FOUND" {
		t.Errorf("unknown path: code %v, want NOT_FOUND", r.JSON["code"])
	}
}

// TestInternalErrorsDoNotLeak breaks the database under a running server:
// the client gets a 500 INTERNAL problem that names the request id but
// carries none of the cause's text.
func TestInternalErrorsDoNotLeak(t *testing.T) {
	s := newStack(t, stackOpts{noWorkers: true})
	_, key := s.account(10)
	if err := s.store.Close(); err != nil { // the writer and the read pool
		t.Fatal(err)
	}
	r := s.do(call{Method: "GET", Path: "/api/v1/models", Key: key})
	wantStatus(t, r, http.StatusInternalServerError)
	detail, _ := r.JSON["detail"].(string)
	if r.JSON["code"] != "INTERNAL" || r.JSON["requestId"] == "" {
		t.Fatalf("body %s: want code INTERNAL and a requestId", r.Body)
	}
	for _, leak := range []string{"sql", "database", "closed"} {
		if strings.Contains(strings.ToLower(detail), leak) {
			t.Errorf("detail %q leaks %q", detail, leak)
		}
	}
}
