package replicate

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gengate/gengate"
)

// TestInverseUndoesTheTable: for every catalog model with a Replicate
// route, each value of each option (and every input) the engine sends,
// read back by Inverse from the input the engine would send (through
// JSON, as the facade receives it), gives the gengate fields it came from.
func TestInverseUndoesTheTable(t *testing.T) {
	c, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range c.Models() {
		for _, rt := range m.Routes {
			if rt.Engine != "replicate" {
				continue
			}
			for _, job := range jobsOf(m, rt) {
				mp := mapJob(job, false)
				if len(mp.fields) > 0 {
					continue // a value this model cannot send: nothing to read back
				}
				data, _ := json.Marshal(mp.input)
				var input map[string]any
				_ = json.Unmarshal(data, &input)
				fields, names, err := Inverse(rt.Upstream, input)
				if err != nil {
					t.Errorf("%s %v: %v (input %s)", rt.Upstream, job.Options, err, data)
					continue
				}
				want := map[string]any{}
				if job.Prompt != "" {
					want["prompt"] = job.Prompt
				}
				for k, v := range job.Options {
					want[k] = fmt.Sprint(v)
				}
				for k := range job.Inputs {
					want[k] = ""
				}
				// Every input the engine sends is read back (Inverse refuses
				// the others), each as the field it came from.
				for k, v := range fields {
					if fmt.Sprint(v) != want[k] {
						t.Errorf("%s %v: %s (from %s) read back as %v", rt.Upstream, job.Options, k, names[k], v)
					}
				}
				checked++
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d jobs checked", checked)
	}
	if _, _, err := Inverse("black-forest-labs/flux-schnell", map[string]any{"prompt": "a", "go_fast": true}); gengate.ErrorCode(err) != gengate.EInvalid {
		t.Errorf("an input the model lacks: %v", err)
	}
}

// jobsOf returns one job per value of each enum or int option of the
// model (the others at their defaults), with every input given.
func jobsOf(m *gengate.Model, rt gengate.Route) []gengate.Job {
	base := func() gengate.Job {
		j := gengate.Job{Route: rt, ModelID: m.ID, Type: m.Type, Options: map[string]any{}, Inputs: map[string]gengate.Input{}}
		for _, f := range m.Inputs {
			switch {
			case f.Kind == "text":
				j.Prompt = "a lighthouse"
			default:
				j.Inputs[f.Name] = gengate.Input{}
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
