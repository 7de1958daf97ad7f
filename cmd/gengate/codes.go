package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// codesCreate is "gengate codes create --credits N --count C [--expires
// D]": it prints one redemption code a line, and nothing else, so the
// output can go straight to a file. The codes are stored hashed: this is
// the only time they are shown.
func codesCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var credits, count int
	var expires string
	s, _, _, err := openStore(ctx, "codes create", args, getenv, stderr, func(f *flags) {
		f.IntVar(&credits, "credits", 0, "credits each code grants (required)")
		f.IntVar(&count, "count", 1, "how many codes to make (at most 10000)")
		f.StringVar(&expires, "expires", "", "when the codes expire: a duration (720h, 30d) or a date (2027-01-31, RFC 3339); default never")
	})
	if err != nil {
		return err
	}
	defer s.Close()
	if credits < 1 {
		return errors.New("usage: gengate codes create --credits N [--count C] [--expires D]")
	}
	now := time.Now()
	until, err := parseExpiry(expires, now)
	if err != nil {
		return err
	}
	codes, err := cliService(s).CreateCodes(ctx, credits, count, until)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, strings.Join(codes, "\n"))
	return nil
}

// parseExpiry reads --expires: empty for never, a duration from now (Go's
// form, or whole days "30d"), a date (the end of that UTC day), or an RFC
// 3339 time.
func parseExpiry(v string, now time.Time) (time.Time, error) {
	switch {
	case v == "":
		return time.Time{}, nil
	case strings.HasSuffix(v, "d"):
		if n, err := strconv.Atoi(strings.TrimSuffix(v, "d")); err == nil && n > 0 {
			return now.Add(time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(d), nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t.Add(24*time.Hour - time.Millisecond), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--expires %q: want a duration (720h, 30d), a date (2027-01-31) or an RFC 3339 time", v)
}
