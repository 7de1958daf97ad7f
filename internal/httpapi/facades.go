package httpapi

// What the provider-compatible APIs (replicate.go, falproxy.go) share: the
// index from a provider's model names to the catalog's models, the
// mapping of a caller's input onto a gengate generate body, and the key
// from the Authorization header.

import (
	"errors"
	"io"
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

// readFacadeBody decodes a provider-compatible API's JSON body through the
// door (body.go: the route declares bodyStream with generate's cap): as it
// is read, members keep refuses skipped unheld, the values kept decoded
// once (a data: URI input is held as one string, as generate holds it).
// An empty body is a nil map.
func readFacadeBody(r *http.Request, keep func(parent, name string) bool) (map[string]any, error) {
	opened, err := openBody(r)
	if err != nil {
		return nil, err
	}
	body := &bodyReader{r: opened}
	m, err := gengate.DecodeJSONObject(body, keep)
	switch {
	case err != nil && body.err == io.EOF && body.n == 0:
		return nil, nil
	case err != nil && body.err != nil && body.err != io.EOF:
		return nil, bodyError(r, body.err)
	case err != nil:
		return nil, err
	}
	return m, nil
}

// facadeRequest validates a generate body made by generateBody, as the
// generate decoder would its JSON (gengate.Catalog.RequestOf: the values
// are not written out and read again).
func (a *api) facadeRequest(body map[string]any) (*gengate.Request, error) {
	return a.svc.Catalog.RequestOf(body)
}

// inputFilter decides, member by member as a body is read, which inputs
// of a facade model are kept: those the model's mapping knows. An unknown
// one is skipped unheld (a padded body holds nothing), its name kept, up
// to gengate.MaxFieldErrors of them, so that the mapping still refuses it
// by name; past that many the request is refused anyway and nothing more
// is asked. A filter without a model (the model is named later in the
// body) keeps everything.
type inputFilter struct {
	fm      facadeModel
	inverse InverseFunc
	snake   map[string]string
	known   map[string]bool
	unknown []string
}

func newInputFilter(fm facadeModel, inverse InverseFunc) *inputFilter {
	f := &inputFilter{fm: fm, inverse: inverse, known: map[string]bool{}}
	if fm.model != nil && (fm.upstream == "" || inverse == nil) {
		f.snake = snakeNames(fm.model)
	}
	return f
}

// probeValue is the value an input name is asked about with: the mapping
// judges a name before its value, so only an unknown name is refused as
// UNKNOWN_FIELD.
type probeValue struct{}

func (f *inputFilter) keep(name string) bool {
	if f.fm.model == nil || f.known[name] {
		return true
	}
	if slices.Contains(f.unknown, name) || len(f.unknown) >= gengate.MaxFieldErrors {
		return false
	}
	known := false
	if f.snake != nil {
		_, known = f.snake[name]
	} else {
		_, _, err := f.inverse(f.fm.upstream, map[string]any{name: probeValue{}})
		var e *gengate.Error
		known = true
		if errors.As(err, &e) {
			for _, fe := range e.Fields {
				if fe.Field == name && fe.Code == gengate.FieldUnknown {
					known = false
				}
			}
		}
	}
	if known {
		f.known[name] = true
	} else {
		f.unknown = append(f.unknown, name)
	}
	return known
}

// restore puts the unknown names skipped back into input, with a small
// value, for the mapping to refuse them by name.
func (f *inputFilter) restore(input map[string]any) map[string]any {
	if len(f.unknown) > 0 && input == nil {
		input = map[string]any{}
	}
	for _, n := range f.unknown {
		input[n] = false
	}
	return input
}
