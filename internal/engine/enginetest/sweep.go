package enginetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// SweepJobs returns the jobs the strict-fake table test sends for model m
// on route r: every option at its default, then each allowed value of each
// option with the others at their defaults; each once with the required
// inputs only and once with every input. Inputs hold a small real PNG (an
// MP4 header for video inputs). Options are laid out as the service lays
// them out (aspectRatio, numOutputs, outputFormat also in Options).
func SweepJobs(m *gengate.Model, r gengate.Route) []Case {
	base := gengate.Job{TaskID: "sweep", ModelID: m.ID, Type: m.Type, Route: r, NumOutputs: 1,
		Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
	all := map[string]gengate.Input{}
	for _, f := range m.Inputs {
		var in gengate.Input
		switch f.Kind {
		case string(gengate.KindText):
			base.Prompt = "a red fox in the snow"
			continue
		case string(gengate.KindVideo):
			in = gengate.Input{Data: upstreamtest.MP4(), ContentType: "video/mp4"}
		default:
			in = gengate.Input{Data: upstreamtest.Picture(64, 48, 90, 0), ContentType: "image/png", Width: 64, Height: 48}
		}
		all[f.Name] = in
		if f.Required {
			base.Inputs[f.Name] = in
		}
	}
	defaults := map[string]any{}
	for _, f := range m.Options {
		if f.Default != nil {
			defaults[f.Name] = f.Default
			if n, ok := f.Default.(float64); ok && (f.Kind == gengate.KindInt || f.Name == "numOutputs") {
				defaults[f.Name] = int64(n) // as the service parses it
			}
		}
	}
	var cases []Case
	add := func(name string, opts map[string]any) {
		for _, every := range []bool{false, true} {
			j := base
			j.Options = map[string]any{}
			j.Inputs = map[string]gengate.Input{}
			for k, v := range base.Inputs {
				j.Inputs[k] = v
			}
			if every {
				if len(all) == len(base.Inputs) {
					continue
				}
				for k, v := range all {
					j.Inputs[k] = v
				}
				name += " +inputs"
			}
			for k, v := range opts {
				switch k {
				case "aspectRatio":
					j.AspectRatio, _ = v.(string)
				case "outputFormat":
					j.OutputFormat, _ = v.(string)
				case "numOutputs":
					n, _ := v.(int64)
					if f, ok := v.(float64); ok {
						n = int64(f)
					}
					j.NumOutputs = int(n)
				}
				j.Options[k] = v
			}
			j.TaskID = fmt.Sprintf("5e1f0c9a-0000-4000-8000-%012d", len(cases)+1) // one task per case
			cases = append(cases, Case{Name: name, Job: j})
		}
	}
	add("defaults", defaults)
	for _, f := range m.Options {
		for _, v := range allowed(f) {
			if v == defaults[f.Name] {
				continue
			}
			opts := map[string]any{}
			for k, d := range defaults {
				opts[k] = d
			}
			opts[f.Name] = v
			add(fmt.Sprintf("%s=%v", f.Name, v), opts)
		}
	}
	return cases
}

// allowed lists the values of an option the sweep sends: every enum value,
// every value of a small integer range, the ends of a large one.
func allowed(f gengate.Field) []any {
	if len(f.Values) > 0 {
		out := make([]any, len(f.Values))
		for i, v := range f.Values {
			if n, ok := v.(float64); ok && f.Kind == gengate.KindInt {
				v = int64(n)
			}
			out[i] = v
		}
		return out
	}
	switch f.Kind {
	case gengate.KindBool:
		return []any{false, true}
	case gengate.KindInt:
		if f.Min == nil || f.Max == nil {
			return nil
		}
		lo, hi := int64(*f.Min), int64(*f.Max)
		if hi-lo <= 32 {
			var out []any
			for n := lo; n <= hi; n++ {
				out = append(out, n)
			}
			return out
		}
		return []any{lo, hi}
	case gengate.KindNumber:
		if f.Min == nil || f.Max == nil {
			return nil
		}
		return []any{*f.Min, *f.Max}
	}
	return nil
}

// Sweep sends every SweepJobs case of every catalog route of engine name
// through eng, which is configured against a strict fake: a case Validate
// accepts must be accepted by the fake (Submit succeeds); a case Validate
// refuses is an option the route cannot do, refused before any charge.
// Each route must take its defaults (with the required inputs, or with
// every input for routes that need one the model makes optional).
// It returns how many submits the fake accepted.
func Sweep(t *testing.T, eng gengate.Engine, name string) int {
	t.Helper()
	cat, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := eng.(gengate.Validator)
	sent := 0
	for _, m := range cat.Models() {
		for _, r := range m.Routes {
			if r.Engine != name {
				continue
			}
			took := false
			for _, c := range SweepJobs(m, r) {
				if v != nil {
					if err := v.Validate(c.Job); err != nil {
						continue
					}
				}
				if slices.Contains([]string{"defaults", "defaults +inputs"}, c.Name) {
					took = true
				}
				if _, err := eng.Submit(context.Background(), c.Job); err != nil {
					t.Errorf("%s on %s %s, %s: Validate accepted, the provider refused: %v", m.ID, name, r.Upstream, c.Name, err)
					continue
				}
				sent++
			}
			if !took {
				t.Errorf("%s on %s %s: Validate refuses the model's defaults", m.ID, name, r.Upstream)
			}
		}
	}
	return sent
}
