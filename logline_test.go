package gengate

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
)

// TestLogInfoSameLine: LogInfo writes the bytes InfoContext writes with
// the same attributes (the time left out), and nothing below the level.
func TestLogInfoSameLine(t *testing.T) {
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	for _, tc := range []struct {
		name  string
		args  []any
		attrs []slog.Attr
	}{
		{"none", nil, nil},
		{"task created", []any{"jobId", "0193-ab", "model", "flux", "cost", 4, "status", StatusQueued},
			[]slog.Attr{slog.String("jobId", "0193-ab"), slog.String("model", "flux"), slog.Int("cost", 4), slog.String("status", string(StatusQueued))}},
		{"request, more than five", []any{"requestId", "req_1", "method", "POST", "path", "/api/v1/generate", "status", 202, "ms", int64(3), "parked", true},
			[]slog.Attr{slog.String("requestId", "req_1"), slog.String("method", "POST"), slog.String("path", "/api/v1/generate"),
				slog.Int("status", 202), slog.Int64("ms", 3), slog.Bool("parked", true)}},
		{"escapes", []any{"path", "/a\"b<c>\n"}, []slog.Attr{slog.String("path", "/a\"b<c>\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got bytes.Buffer
			slog.New(slog.NewJSONHandler(&want, noTime)).InfoContext(context.Background(), "msg", tc.args...)
			LogInfo(context.Background(), slog.New(slog.NewJSONHandler(&got, noTime)), "msg", tc.attrs...)
			if got.String() != want.String() {
				t.Errorf("LogInfo wrote\n%s\nInfoContext\n%s", got.String(), want.String())
			}
		})
	}
	var buf bytes.Buffer
	LogInfo(context.Background(), slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), "below", slog.Int("n", 1))
	if buf.Len() != 0 {
		t.Errorf("a line below the level was written: %s", buf.String())
	}
}
