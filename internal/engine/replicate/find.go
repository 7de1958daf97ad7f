package replicate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

// findPages bounds how many pages of the prediction list (100 each) Find
// reads: 500 predictions since the task was created.
const findPages = 5

var _ gengate.Finder = (*Engine)(nil)

// listed is a prediction as the list of predictions gives it.
type listed struct {
	ID        string         `json:"id"`
	Model     string         `json:"model"`
	Version   string         `json:"version"`
	Source    string         `json:"source"`
	Input     map[string]any `json:"input"`
	CreatedAt time.Time      `json:"created_at"`
}

// Find looks for the prediction a create whose outcome is unknown may have
// made (gengate.Finder). Replicate takes no client-chosen id, so it reads
// the list of recent predictions (GET /v1/predictions: the most recent
// first, 100 a page; at most findPages pages, back to since) for one made
// through the API by the job's model (and version) whose input has every
// value the create sent other than files (data: URIs and URLs, which
// Replicate may keep in another form). One such prediction is the job's;
// none means no create reached Replicate; more than one (the same request
// sent for two tasks at once) cannot be told apart: a definite error, so
// the task goes to review.
func (e *Engine) Find(ctx context.Context, job gengate.Job, since time.Time) (string, error) {
	m := mapJob(job, false)
	if err := unsupported(m); err != nil {
		return "", gengate.Errorf(gengate.EFailed, "replicate: %s", gengate.ErrorMessage(err))
	}
	routeInput(m.input, job.Route.Params)
	want := comparable(m.input)
	name, version := upstreamModel(job.Route.Upstream)
	var found []string
	next := "/predictions"
	for page := 0; page < findPages && next != ""; page++ {
		var ans struct {
			Next    *string  `json:"next"`
			Results []listed `json:"results"`
		}
		if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: next}, &ans); err != nil {
			return "", err
		}
		older := false
		for _, p := range ans.Results {
			if !p.CreatedAt.IsZero() && p.CreatedAt.Before(since) {
				older = true
				continue
			}
			if p.Model != name || (version != "" && p.Version != version) || (p.Source != "" && p.Source != "api") {
				continue
			}
			if sameInput(want, p.Input) {
				found = append(found, p.ID)
			}
		}
		next = ""
		if ans.Next != nil && !older {
			next = *ans.Next
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		if strings.ContainsAny(found[0], "/?#") || found[0] == "" {
			return "", gengate.Errorf(gengate.EFailed, "replicate: listed prediction has a malformed id %q", found[0])
		}
		return found[0], nil
	}
	return "", gengate.Errorf(gengate.EFailed, "replicate lists %d predictions with this task's input (%s): which one is this task's cannot be told",
		len(found), strings.Join(found, ", "))
}

// comparable keeps the values of an input a listed prediction must have
// too: all but files (empty in a mapping made without data) and URLs.
func comparable(in map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range in {
		switch v := v.(type) {
		case string:
			if v == "" || strings.HasPrefix(v, "data:") || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
				continue
			}
		case []any:
			continue // lists here are lists of files
		}
		out[k] = v
	}
	return out
}

// sameInput reports whether got has every value of want, compared as
// JSON values (numbers as numbers).
func sameInput(want, got map[string]any) bool {
	for k, w := range want {
		g, ok := got[k]
		if !ok || !sameJSON(w, g) {
			return false
		}
	}
	return true
}

func sameJSON(a, b any) bool {
	norm := func(v any) any {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		var out any
		if json.Unmarshal(raw, &out) != nil {
			return string(raw)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
