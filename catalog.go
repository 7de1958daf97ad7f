package gengate

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

//go:embed catalog.json
var catalogJSON []byte

// Model is one entry of the catalog: what a model is, what it accepts and
// what it costs. The catalog is data (catalog.json, embedded); docs/pricing.md
// explains its price rules.
type Model struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"` // "image" or "video"
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Credits     int       `json:"credits"` // cost of one request with default settings
	Pricing     PriceRule `json:"pricing"`
	// Inputs are the prompt and input files; Options are the settings.
	Inputs  []Field `json:"inputs"`
	Options []Field `json:"options"`
	// LatencySeconds is the typical time to a result; it sets Retry-After.
	LatencySeconds int `json:"latencySeconds"`
	// DeadlineSeconds is how long a task may take before it is stopped and
	// refunded; 0 means the default for the model's type.
	DeadlineSeconds int `json:"deadlineSeconds,omitempty"`
	// Legacy marks models kept from an older listing (face-swap).
	Legacy bool `json:"legacy,omitempty"`
	// Routes names the upstreams that can serve the model, tried in order,
	// for engines that are configured. The sandbox serves every model.
	Routes []Route `json:"routes,omitempty"`
}

// Field describes one request field a model takes.
type Field struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"` // text, image, video, enum, int, number, bool
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
	// Values lists the allowed values of an enum (strings) or int field.
	Values    []any    `json:"values,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MaxLength int      `json:"maxLength,omitempty"`
	Default   any      `json:"default,omitempty"`
}

// Field kinds beyond the input kinds.
const (
	KindEnum   = "enum"
	KindInt    = "int"
	KindNumber = "number"
	KindBool   = "bool"
)

// PriceRule says how a model's cost varies with its settings:
//
//	cost = ceil(Credits × units × Π multipliers)
//
// where units is 1 for Unit "request", numOutputs for "output", and
// duration ÷ default duration for "second" (the option named by
// DurationOption); each multiplier is looked up by an option's value.
type PriceRule struct {
	Unit           string                        `json:"unit"`
	DurationOption string                        `json:"durationOption,omitempty"`
	Multipliers    map[string]map[string]float64 `json:"multipliers,omitempty"`
	Note           string                        `json:"note,omitempty"`
}

// Price units.
const (
	PerRequest = "request"
	PerOutput  = "output"
	PerSecond  = "second"
)

// Route names an upstream that can serve a model.
type Route struct {
	Engine   string `json:"engine"`
	Upstream string `json:"upstream"`
	// Params are extra upstream parameters an operator configured for the
	// route (sent as given, after the mapped options).
	Params map[string]any `json:"params,omitempty"`
	// Test says the route was taken because a test key made the task: the
	// sandbox, charging nothing (testkeys.go).
	Test bool `json:"test,omitempty"`
}

// Varies reports whether the model's cost depends on its settings.
func (m *Model) Varies() bool {
	return m.Pricing.Unit != PerRequest || len(m.Pricing.Multipliers) > 0
}

// Fields returns the model's inputs followed by its options.
func (m *Model) Fields() []Field {
	return append(append(make([]Field, 0, len(m.Inputs)+len(m.Options)), m.Inputs...), m.Options...)
}

// Field returns the input or option named name.
func (m *Model) Field(name string) (Field, bool) {
	for _, fields := range [2][]Field{m.Inputs, m.Options} {
		for i := range fields {
			if fields[i].Name == name {
				return fields[i], true
			}
		}
	}
	return Field{}, false
}

// Catalog is the set of models the service knows.
type Catalog struct {
	models []*Model
	byID   map[string]*Model
	// fields holds every field name any model takes, to tell an option a
	// model cannot do (UNSUPPORTED_MODEL_OPTION) from a field nobody knows.
	fields map[string]bool
}

// DefaultCatalog returns the embedded catalog.
func DefaultCatalog() (*Catalog, error) { return ParseCatalog(catalogJSON) }

// ParseCatalog reads a catalog from its JSON form and checks it.
func ParseCatalog(data []byte) (*Catalog, error) {
	var doc struct {
		Models []*Model `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := &Catalog{byID: map[string]*Model{}, fields: map[string]bool{}}
	for _, m := range doc.Models {
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("catalog: model %q: %w", m.ID, err)
		}
		if c.byID[m.ID] != nil {
			return nil, fmt.Errorf("catalog: model %q listed twice", m.ID)
		}
		c.byID[m.ID] = m
		c.models = append(c.models, m)
		for _, f := range m.Fields() {
			c.fields[f.Name] = true
		}
	}
	return c, nil
}

// Models returns the models in catalog order.
func (c *Catalog) Models() []*Model { return c.models }

// Model returns the model with the given id.
func (c *Catalog) Model(id string) (*Model, bool) {
	m, ok := c.byID[id]
	return m, ok
}

// PriceOverrides maps a model id to its new default credits; the model's
// price rule scales from there. Operators load them from a config file.
type PriceOverrides map[string]int

// Override applies operator prices to the catalog.
func (c *Catalog) Override(p PriceOverrides) error {
	ids := make([]string, 0, len(p))
	for id := range p {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// Check every entry before changing anything: all or nothing.
	for _, id := range ids {
		if _, ok := c.byID[id]; !ok {
			return fmt.Errorf("price override: unknown model %q", id)
		}
		if p[id] < 0 {
			return fmt.Errorf("price override: model %q: credits must be ≥ 0", id)
		}
	}
	for _, id := range ids {
		m := c.byID[id]
		m.Credits = p[id]
		// The catalog's note quotes the default figures: replace it, so the
		// listing never shows a price beside one it does not charge.
		m.Pricing.Note = fmt.Sprintf("Price set by this server's operator: %d credits with default settings%s.",
			p[id], map[string]string{PerOutput: ", per image", PerSecond: ", in proportion to the duration"}[m.Pricing.Unit])
	}
	return nil
}

func (m *Model) check() error {
	if m.ID == "" {
		return fmt.Errorf("no id")
	}
	if m.Type != "image" && m.Type != "video" {
		return fmt.Errorf("type %q", m.Type)
	}
	if m.Credits < 0 {
		return fmt.Errorf("negative credits")
	}
	switch m.Pricing.Unit {
	case PerRequest, PerOutput:
	case PerSecond:
		f, ok := m.Field(m.Pricing.DurationOption)
		if !ok || f.Default == nil {
			return fmt.Errorf("per-second pricing needs option %q with a default", m.Pricing.DurationOption)
		}
		if d, ok := toFloat(f.Default); !ok || d <= 0 {
			return fmt.Errorf("duration default %v", f.Default)
		}
	default:
		return fmt.Errorf("price unit %q", m.Pricing.Unit)
	}
	for opt, table := range m.Pricing.Multipliers {
		f, ok := m.Field(opt)
		if !ok {
			return fmt.Errorf("multiplier for unknown option %q", opt)
		}
		for val, factor := range table {
			if factor <= 0 {
				return fmt.Errorf("multiplier %s=%s is %v; it must be > 0", opt, val, factor)
			}
		}
		if f.Default != nil {
			if _, ok := table[valueKey(f.Default)]; !ok {
				return fmt.Errorf("multiplier table of %q has no entry for its default %v", opt, f.Default)
			}
		}
	}
	for _, f := range m.Fields() {
		switch f.Kind {
		case string(KindText), string(KindImage), string(KindVideo), KindEnum, KindInt, KindNumber, KindBool:
		default:
			return fmt.Errorf("field %q: kind %q", f.Name, f.Kind)
		}
		if f.Kind == KindEnum && len(f.Values) == 0 {
			return fmt.Errorf("field %q: enum without values", f.Name)
		}
		if f.Default != nil && f.Kind != string(KindText) {
			// A default must itself be a value the field accepts.
			v := validator{}
			def := f.Default
			if x, ok := toFloat(def); ok && (f.Kind == KindInt || f.Kind == KindNumber) {
				def = json.Number(strconv.FormatFloat(x, 'f', -1, 64))
			}
			if _, ok := v.check(f, def); !ok {
				return fmt.Errorf("field %q: default %v is not an accepted value", f.Name, f.Default)
			}
		}
	}
	// The catalog's default credits must be what default settings cost.
	if got := m.Quote(m.defaults()); got != m.Credits {
		return fmt.Errorf("default settings cost %d, catalog says %d", got, m.Credits)
	}
	return nil
}

// defaults returns the model's option defaults.
func (m *Model) defaults() map[string]any {
	d := map[string]any{}
	for _, f := range m.Options {
		if f.Default != nil {
			d[f.Name] = normalize(f.Default, f.Kind)
		}
	}
	return d
}

// Quote returns the credits a request with the given options (defaults
// filled in) costs.
func (m *Model) Quote(opts map[string]any) int {
	units := 1.0
	switch m.Pricing.Unit {
	case PerOutput:
		if n, ok := toFloat(opts["numOutputs"]); ok && n > 0 {
			units = n
		}
	case PerSecond:
		f, _ := m.Field(m.Pricing.DurationOption)
		def, _ := toFloat(f.Default)
		if d, ok := toFloat(opts[m.Pricing.DurationOption]); ok && def > 0 {
			units = d / def
		}
	}
	cost := float64(m.Credits) * units
	// Multiply in a fixed order so the result never depends on map order.
	names := make([]string, 0, len(m.Pricing.Multipliers))
	for name := range m.Pricing.Multipliers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v, ok := opts[name]; ok {
			if f, ok := m.Pricing.Multipliers[name][valueKey(v)]; ok {
				cost *= f
			}
		}
	}
	// A tiny tolerance keeps floating-point noise from costing a credit:
	// 50 × 10/6 × 1.2 is 100.00000000000001 in float64, and costs 100.
	return int(math.Ceil(cost - 1e-9))
}

// valueKey is the string form used to look up a value in a multiplier table
// or an allowed-values list.
func valueKey(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// normalize turns a JSON-decoded value into the Go type Job.Options
// promises: string, int64, float64 or bool.
func normalize(v any, kind string) any {
	switch kind {
	case KindInt:
		if f, ok := toFloat(v); ok {
			return int64(f)
		}
	case KindNumber:
		if f, ok := toFloat(v); ok {
			return f
		}
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return f
	}
	return v
}
