package sqlstore

import (
	"encoding/json"
	"testing"

	"github.com/gengate/gengate"
)

// TestEncodeRoute: the stored form of a route is what json.Marshal writes,
// whether the hand-written form or encoding/json makes it.
func TestEncodeRoute(t *testing.T) {
	routes := []gengate.Route{
		{Engine: "sandbox"},
		{Engine: "fal", Upstream: "fal-ai/flux/dev"},
		{Engine: "sandbox", Upstream: "flux", Test: true},
		{Engine: "replicate", Upstream: "black-forest-labs/flux-schnell:abc123"},
		{Engine: "openaicompat", Upstream: `a"quote`},
		{Engine: "comfyui", Upstream: `back\\slash`},
		{Engine: "fal", Upstream: "<tag>&amp"},
		{Engine: "fal", Upstream: "a<b"},
		{Engine: "fal", Upstream: "ünïcode"},
		{Engine: "fal", Upstream: "tab\there\u2028"},
		{Engine: "fal", Upstream: "x", Params: map[string]any{"steps": 4.0, "name": "y"}},
		{Engine: "fal", Upstream: "x", Params: map[string]any{}, Test: true},
	}
	for _, r := range routes {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeRoute(r); got != string(want) {
			t.Errorf("encodeRoute(%+v) = %s, want %s", r, got, want)
		}
	}
	if got := encodeRoute(gengate.Route{}); got != "" {
		t.Errorf("no route stored as %q, want empty", got)
	}
}
