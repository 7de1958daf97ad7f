package replicate

import (
	"slices"
	"strings"
	"testing"

	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestTableMatchesSchemas re-reads the table of every model whose
// published schema the fake holds, beyond the catalog's values: each
// parameter the table sends is in the schema, and each value it can send
// is in the parameter's enum.
func TestTableMatchesSchemas(t *testing.T) {
	for name, sc := range replicatetest.Schemas {
		sp, ok := specs[name]
		if !ok {
			t.Errorf("%s: a schema for a model the table does not know", name)
			continue
		}
		names := sc.Names()
		check := func(field string, jpg bool) {
			o, ok := parseOpt(field)
			if !ok || o.param == "-" {
				return
			}
			for _, p := range []string{o.param} {
				if p == "width,height" {
					continue
				}
				if !slices.Contains(names, p) {
					t.Errorf("%s: the table sends %s, which the schema lacks", name, p)
					continue
				}
				enum := sc.Enum(p)
				if enum == nil || o.any || o.hi > 0 {
					continue
				}
				for _, ours := range o.order {
					v := o.values[ours]
					if jpg && v == "jpeg" {
						v = "jpg" // Replicate's spelling, sent by the engine
					}
					if !slices.Contains(enum, v) {
						t.Errorf("%s: the table sends %s %q, the schema only %v", name, p, v, enum)
					}
				}
			}
		}
		if sp.sizeParam == "size" {
			for key, size := range sp.sizes {
				if enum := sc.Enum("size"); !slices.Contains(enum, size) {
					t.Errorf("%s: the table sends size %s for %s, the schema only %v", name, size, key, enum)
				}
			}
		} else if sp.sizeParam != "" {
			for _, p := range strings.Split(sp.sizeParam, ",") {
				if !slices.Contains(names, p) {
					t.Errorf("%s: the table sends %s, which the schema lacks", name, p)
				}
			}
		}
		check(sp.aspect, false)
		check(sp.format, true)
		check(sp.resolution, false)
		check(sp.duration, false)
		check(sp.scale, false)
		for _, f := range []string{sp.seed, sp.audio} {
			if f != "" && !slices.Contains(names, f) {
				t.Errorf("%s: the table sends %s, which the schema lacks", name, f)
			}
		}
		if !sp.noPrompt && !slices.Contains(names, "prompt") {
			t.Errorf("%s: the table sends a prompt, which the schema lacks", name)
		}
		for _, in := range parseInputs(sp.in) {
			if !slices.Contains(names, in.param) {
				t.Errorf("%s: the table sends input %s, which the schema lacks", name, in.param)
			}
		}
	}
}
