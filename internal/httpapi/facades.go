package httpapi

// What the provider-compatible APIs (replicate.go, falproxy.go) share: the
// index from a provider's model names to the catalog's models, the
// mapping of a caller's input onto a gengate generate body, and the key
// from the Authorization header.

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gengate/gengate"
)

// InverseFunc maps a provider model's input, in that provider's names for
// the route's upstream model, onto gengate's generate fields; names maps
// each gengate field back to the provider's name it came from (errors
// name what the caller sent). The engines' Inverse functions have this
// type; cmd/gengate wires them.
type InverseFunc func(upstream string, input map[string]any) (fields map[string]any, names map[string]string, err error)

// Facades holds the engines' inverse mappings the provider-compatible
// APIs need. A nil function leaves that API's provider names out: only
// gengate/{modelId} on the Replicate API, and no fal endpoints.
type Facades struct {
	// ReplicateInput is replicate.Inverse; ReplicateVersion returns the
	// model (owner/name) and pinned version a Replicate route runs
	// (replicate.Version).
	ReplicateInput   InverseFunc
	ReplicateVersion func(upstream string) (name, version string)
	// FalInput is fal.Inverse; FalVariants lists a fal route's endpoint
	// and the variant endpoints it switches to (fal.Variants).
	FalInput    InverseFunc
	FalVariants func(endpoint string) []string
}

// facadeModel is one provider model name served by a catalog model.
type facadeModel struct {
	model    *gengate.Model
	upstream string // the route's upstream, "" for gengate/{modelId}
	name     string // the provider's name: owner/name, or a fal endpoint id
	version  string // a Replicate version pin, "" for none
}

// facadeIndex maps provider model names to catalog models.
type facadeIndex struct {
	replicate map[string]facadeModel // owner/name (lower case) → model
	versions  map[string]facadeModel // Replicate version id → model
	canonical map[string]string      // model id → its first Replicate name
	fal       map[string]facadeModel // fal endpoint id → model
}

// newFacadeIndex indexes every Replicate and fal route of the catalog (and
// of the operator's routes): each names the model that serves it. The
// first route naming a provider model wins.
func newFacadeIndex(svc *gengate.Service, f Facades) *facadeIndex {
	ix := &facadeIndex{replicate: map[string]facadeModel{}, versions: map[string]facadeModel{},
		canonical: map[string]string{}, fal: map[string]facadeModel{}}
	for _, m := range svc.Catalog.Models() {
		routes := slices.Clone(m.Routes)
		if o, ok := svc.Routes[m.ID]; ok {
			routes = append(slices.Clone(o), routes...)
		}
		for _, rt := range routes {
			switch rt.Engine {
			case "replicate":
				if f.ReplicateVersion == nil {
					continue
				}
				name, version := f.ReplicateVersion(rt.Upstream)
				fm := facadeModel{model: m, upstream: rt.Upstream, name: name, version: version}
				key := strings.ToLower(name)
				if _, taken := ix.replicate[key]; !taken && name != "" {
					ix.replicate[key] = fm
				}
				if _, taken := ix.versions[version]; !taken && version != "" {
					ix.versions[version] = fm
				}
				if _, ok := ix.canonical[m.ID]; !ok {
					ix.canonical[m.ID] = name
				}
			case "fal":
				if f.FalVariants == nil {
					continue
				}
				for _, ep := range f.FalVariants(strings.Trim(rt.Upstream, "/")) {
					if _, taken := ix.fal[ep]; !taken {
						ix.fal[ep] = facadeModel{model: m, upstream: ep, name: ep}
					}
				}
			}
		}
	}
	return ix
}

// gengateOwner is the Replicate owner under which every catalog model is
// served by its gengate id: gengate/{modelId}.
const gengateOwner = "gengate"

// snakeNames maps the snake_case spelling of each of a model's fields
// ("aspect_ratio", "image_url", "last_frame_url" for inputs.lastFrameUrl)
// to the field: the input names of gengate/{modelId}.
func snakeNames(m *gengate.Model) map[string]string {
	out := map[string]string{}
	for _, f := range m.Fields() {
		out[gengate.SnakeName(strings.TrimPrefix(f.Name, "inputs."))] = f.Name
	}
	return out
}

// generateBody maps a caller's input for fm onto a gengate generate body,
// and returns the names to translate gengate's field errors back with.
func generateBody(fm facadeModel, inverse InverseFunc, input map[string]any) (map[string]any, map[string]string, error) {
	var fields map[string]any
	var names map[string]string
	if fm.upstream == "" || inverse == nil {
		fields, names = map[string]any{}, map[string]string{}
		snake := snakeNames(fm.model)
		var bad []gengate.FieldError
		for _, k := range sortedNames(input) {
			field, ok := snake[k]
			switch {
			case input[k] == nil:
			case !ok:
				bad = append(bad, gengate.FieldError{Field: k, Code: gengate.FieldUnknown, Message: "model " + fm.model.ID + " takes no input " + k})
			default:
				fields[field], names[field] = input[k], k
			}
		}
		if len(bad) > 0 {
			return nil, nil, &gengate.Error{Code: gengate.EInvalid, Fields: bad, Message: "input " + bad[0].Field + ": " + bad[0].Message}
		}
	} else {
		var err error
		fields, names, err = inverse(fm.upstream, input)
		if err != nil {
			return nil, nil, err
		}
	}
	body := map[string]any{"type": fm.model.Type, "modelId": fm.model.ID}
	inputs := map[string]any{}
	for k, v := range fields {
		if sub, ok := strings.CutPrefix(k, "inputs."); ok {
			inputs[sub] = v
			continue
		}
		body[k] = v
	}
	if len(inputs) > 0 {
		body["inputs"] = inputs
	}
	return body, names, nil
}

// renameFields rewrites the field names of a gengate error into the
// caller's names (names: gengate field → caller's name); other names stay.
func renameFields(err error, names map[string]string) error {
	e, ok := err.(*gengate.Error)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	c := *e
	c.Fields = slices.Clone(e.Fields)
	for i, f := range c.Fields {
		if n, ok := names[f.Field]; ok {
			c.Fields[i].Field = n
		}
	}
	if n, ok := names[e.Fields[0].Field]; ok {
		c.Message = "input " + n + ": " + c.Fields[0].Message
	}
	return &c
}

// facadeKey authenticates the key in Authorization ("Bearer <key>", or
// Replicate's older "Token <key>", or fal's "Key <key>") or X-API-Key.
func (a *api) facadeKey(r *http.Request) (*gengate.APIKey, error) {
	secret := r.Header.Get("X-API-Key")
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok {
		switch strings.ToLower(scheme) {
		case "bearer", "token", "key":
			secret = strings.TrimSpace(token)
		}
	}
	return a.svc.Authenticate(r.Context(), secret)
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
