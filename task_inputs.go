package gengate

import (
	"fmt"
	"strings"
)

// maxKeptInputURL is the longest input URL a task record keeps whole.
const maxKeptInputURL = 2048

// inputURLs is what a task record keeps of the URLs its inputs came from:
// http(s) URLs whole (up to 2 KiB), data: URLs only as their media type
// and size, so that a record never carries the file itself.
func inputURLs(req *Request) map[string]string {
	out := make(map[string]string, len(req.InputURLs))
	for name, u := range req.InputURLs {
		out[name] = describeInputURL(u)
	}
	return out
}

func describeInputURL(u string) string {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		mt, _, _ := strings.Cut(rest, ",")
		mt, _, _ = strings.Cut(mt, ";")
		return fmt.Sprintf("data:%s;%d bytes", mt, len(u))
	}
	if len(u) > maxKeptInputURL {
		return u[:maxKeptInputURL]
	}
	return u
}
