package comfyui

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream"
)

var _ gengate.RegistryChecker = (*Engine)(nil)

// CheckRegistry asks the ComfyUI server whether it has every node type
// each route's workflow template uses (gengate.RegistryChecker): GET
// /object_info/{node_class} for each distinct class_type, which server.py
// answers with that node's info, or {} when no installed node has that
// name. A workflow with a node type the server lacks cannot run there
// (every prompt would fail validation), so its route is unknown, naming
// the missing types; an upstream id that names no template is unknown
// too. A node the server marks deprecated still runs, so it changes
// nothing. ComfyUI publishes no price.
func (e *Engine) CheckRegistry(ctx context.Context, ids []string) (map[string]gengate.RouteStatus, error) {
	out := map[string]gengate.RouteStatus{}
	uses := map[string][]string{}
	need := map[string]bool{}
	for _, id := range ids {
		g, err := loadTemplate(id)
		if _, ok := templates[id]; !ok || err != nil {
			out[id] = gengate.RouteStatus{State: gengate.RouteUnknown, Reason: "comfyui: gengate has no workflow template named " + id}
			continue
		}
		for _, c := range nodeClasses(g) {
			uses[id] = append(uses[id], c)
			need[c] = true
		}
	}
	has := map[string]bool{}
	for _, c := range sortedKeys(need) {
		var ans map[string]any
		if err := e.client.Poll(ctx, upstream.Request{Method: http.MethodGet, Path: "/object_info/" + url.PathEscape(c)}, &ans); err != nil {
			return nil, err
		}
		_, has[c] = ans[c]
	}
	for id, cs := range uses {
		var missing []string
		for _, c := range cs {
			if !has[c] {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			out[id] = gengate.RouteStatus{State: gengate.RouteLive}
			continue
		}
		out[id] = gengate.RouteStatus{State: gengate.RouteUnknown,
			Reason: "the ComfyUI server has no node type " + strings.Join(missing, ", ") + " (GET /object_info), which workflow " + id + " uses"}
	}
	return out, nil
}

// nodeClasses returns the distinct class_type of a template's nodes, sorted.
func nodeClasses(g map[string]any) []string {
	seen := map[string]bool{}
	for _, n := range g {
		if node, ok := n.(map[string]any); ok {
			if ct, ok := node["class_type"].(string); ok && ct != "" {
				seen[ct] = true
			}
		}
	}
	cs := make([]string, 0, len(seen))
	for c := range seen {
		cs = append(cs, c)
	}
	sort.Strings(cs)
	return cs
}
