package fal

import (
	"slices"
	"strconv"
	"testing"

	"github.com/gengate/gengate/internal/engine/fal/faltest"
)

// TestTableMatchesSchemas re-reads the whole table against fal's published
// schemas, beyond what the catalog offers today: every aspect ratio,
// duration, resolution and output format the table says an endpoint takes
// is in that endpoint's enum, and the table sends no field the schema
// lacks (num_images, seed, generate_audio).
func TestTableMatchesSchemas(t *testing.T) {
	for endpoint, sp := range models {
		sc, ok := faltest.Schemas[endpoint]
		if !ok {
			continue // TestSchemasCoverTable reports it
		}
		names := sc.Names()
		has := func(f string) bool { return slices.Contains(names, f) }
		within := func(field string, values []string) {
			enum := sc.Enum(field)
			if enum == nil {
				if len(values) > 0 && !has(field) {
					t.Errorf("%s: the table sends %s, which the schema lacks", endpoint, field)
				}
				return
			}
			for _, v := range values {
				if !slices.Contains(enum, v) {
					t.Errorf("%s: the table takes %s %q, the schema only %v", endpoint, field, v, enum)
				}
			}
		}
		if sp.size == sizeAspect {
			within("aspect_ratio", sp.ratios)
		}
		if sp.size == sizeImage || sp.size == sizeSeedream {
			if !has("image_size") {
				t.Errorf("%s: the table sends image_size, which the schema lacks", endpoint)
			}
		}
		if sp.resParam != "" {
			within(sp.resParam, sp.res)
		}
		within("output_format", sp.formats)
		var durs []string
		for _, d := range sp.durs {
			switch sp.dur {
			case durStr:
				durs = append(durs, strconv.FormatInt(d, 10))
			case durSecs:
				durs = append(durs, strconv.FormatInt(d, 10)+"s")
			}
		}
		if sp.dur == durStr || sp.dur == durSecs {
			within("duration", durs)
		}
		for field, sends := range map[string]bool{"num_images": sp.images > 0, "seed": sp.seed, "generate_audio": sp.audio, "prompt": !sp.noPrompt} {
			if sends && !has(field) {
				t.Errorf("%s: the table sends %s, which the schema lacks", endpoint, field)
			}
		}
		for _, param := range sp.in {
			if !has(param) {
				t.Errorf("%s: the table sends input %s, which the schema lacks", endpoint, param)
			}
		}
		for field := range sp.fixed {
			if !has(field) {
				t.Errorf("%s: the table sends %s, which the schema lacks", endpoint, field)
			}
		}
	}
}
