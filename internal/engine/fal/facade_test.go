package fal

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gengate/gengate"
)

// TestInverseUndoesTheTable: for every catalog model with a fal route,
// each value of each option the engine sends, read back by Inverse from
// the body the engine would send to the endpoint it picks (through JSON,
// as the facade receives it), gives the gengate fields it came from: a
// custom image_size the ratio it was made for (within 2%), options the
// body states without being asked (num_images 1, a Seedream size's
// resolution) the model's defaults.
func TestInverseUndoesTheTable(t *testing.T) {
	c, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range c.Models() {
		for _, rt := range m.Routes {
			if rt.Engine != "fal" {
				continue
			}
			for _, job := range jobsOf(m, rt) {
				req, err := plan(job)
				if err != nil {
					continue // a value this endpoint cannot do: nothing to read back
				}
				data, _ := json.Marshal(req.body)
				var input map[string]any
				_ = json.Unmarshal(data, &input)
				fields, names, err := Inverse(req.endpoint, input)
				if err != nil {
					t.Errorf("%s %v: %v (body %s)", req.endpoint, job.Options, err, data)
					continue
				}
				for k, v := range fields {
					got := fmt.Sprint(v)
					want, asked := job.Options[k]
					switch {
					case strings.HasPrefix(k, "inputs.") || k == "imageUrl" || k == "image" || k == "mask" ||
						k == "personImage" || k == "clothImage" || k == "swapImage" || k == "inputImage":
						if _, ok := job.Inputs[k]; !ok {
							t.Errorf("%s: input %s read back, none sent", req.endpoint, k)
						}
					case k == "prompt":
						if got != job.Prompt {
							t.Errorf("%s: prompt %q", req.endpoint, got)
						}
					case k == "aspectRatio" && names[k] == "image_size" && asked:
						if !sameRatio(got, fmt.Sprint(want)) {
							t.Errorf("%s: aspect ratio %s read back as %s (%s)", req.endpoint, want, got, data)
						}
					case asked:
						if got != fmt.Sprint(want) {
							t.Errorf("%s %v: %s (from %s) read back as %s", req.endpoint, job.Options, k, names[k], got)
						}
					case k == "numOutputs" && got == "1":
						// num_images is always sent; one output every model makes
					default:
						f, _ := m.Field(k)
						if fmt.Sprint(f.Default) != got {
							t.Errorf("%s %v: %s=%s (from %s) read back, not asked and not its default %v", req.endpoint, job.Options, k, got, names[k], f.Default)
						}
					}
				}
				checked++
			}
		}
	}
	if checked < 80 {
		t.Errorf("only %d jobs checked", checked)
	}
	if _, _, err := Inverse("fal-ai/flux/schnell", map[string]any{"prompt": "a", "num_inference_steps": 4}); gengate.ErrorCode(err) != gengate.EInvalid {
		t.Errorf("a parameter the endpoint lacks: %v", err)
	}
}

func sameRatio(a, b string) bool {
	r := func(s string) float64 {
		x, y, _ := strings.Cut(s, ":")
		xf, _ := strconv.ParseFloat(x, 64)
		yf, _ := strconv.ParseFloat(y, 64)
		return xf / yf
	}
	return math.Abs(math.Log(r(a)/r(b))) < 0.02
}

// jobsOf returns one job per value of each enum or small int option of
// the model (the others left out), with every input given.
func jobsOf(m *gengate.Model, rt gengate.Route) []gengate.Job {
	base := func() gengate.Job {
		j := gengate.Job{Route: rt, ModelID: m.ID, Type: m.Type, Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
		for _, f := range m.Inputs {
			if f.Kind == "text" {
				j.Prompt = "a lighthouse"
			} else if f.Required {
				j.Inputs[f.Name] = gengate.Input{ContentType: "image/png", Data: []byte("x")}
			}
		}
		return j
	}
	var jobs []gengate.Job
	for _, o := range m.Options {
		values := o.Values
		if o.Kind == "int" && o.Max != nil && *o.Max <= 12 {
			values = nil
			for n := int64(1); n <= int64(*o.Max); n++ {
				values = append(values, n)
			}
		}
		for _, v := range values {
			j := base()
			j.Options[o.Name] = v
			switch o.Name {
			case "aspectRatio":
				j.AspectRatio = fmt.Sprint(v)
			case "outputFormat":
				j.OutputFormat = fmt.Sprint(v)
			case "numOutputs":
				j.NumOutputs = int(v.(int64))
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}
