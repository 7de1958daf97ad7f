package gengate

import (
	"context"
	"log/slog"
	"time"
)

// LogInfo writes an info line to l as l.InfoContext(ctx, msg, ...) would,
// for the lines written on every request (a submit writes two): the
// attributes are typed (no []any to convert) and no caller's frame is
// looked up (runtime.Callers), which only a handler with AddSource would
// print; gengate's handlers have none. The line's bytes are the same.
func LogInfo(ctx context.Context, l *slog.Logger, msg string, attrs ...slog.Attr) {
	h := l.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}
