package httpapi

import (
	"net/http/httptest"
	"testing"
)

func TestLogPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/files/8fK2mQ0aZ9xYwV7uT6sR5pO4nM3lK2jH.png", "/files/<redacted>.png"},
		{"/files/anything", "/files/<redacted>"},
		{"/files/a.b.mp4?x=1", "/files/<redacted>.b.mp4"},
		{"/api/generation/jobs/3f2b8c1e-0000-4000-8000-000000000001", "/api/generation/jobs/3f2b8c1e-0000-4000-8000-000000000001"},
		{"/api/v1/generate?token=8fK2mQ0aZ9xYwV7uT6sR5pO4", "/api/v1/generate"},
		{"/signin/8fK2mQ0aZ9xYwV7uT6sR5pO4nM3lK2jH", "/signin/<redacted>"},
		{"/keys/gg_live_abc", "/keys/<redacted>"},
		{"/api/v1/models", "/api/v1/models"},
		{"/docs/a_long_path_segment_without_digits", "/docs/a_long_path_segment_without_digits"},
	} {
		r := httptest.NewRequest("GET", "http://x"+tc.in, nil)
		if got := logPath(r); got != tc.want {
			t.Errorf("logPath(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
