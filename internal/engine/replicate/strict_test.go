package replicate

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestStrictFake sends every Replicate route of the catalog, with its
// defaults and with every allowed value of every option, through the
// strict fake: whatever Validate accepts, Replicate must accept. The fake
// refuses community models without their version and checks the inputs of
// the models whose published schema it holds (replicatetest.Schemas).
func TestStrictFake(t *testing.T) {
	_, e := newEngine(t)
	if n := enginetest.Sweep(t, e, "replicate"); n < 150 {
		t.Errorf("only %d submits accepted", n)
	}
}

// TestCommunityModelsPinned: every community model of the table has the
// version the fake knows, and a route naming its own version (an operator's
// --config) overrides the pin.
func TestCommunityModelsPinned(t *testing.T) {
	for name, version := range replicatetest.Community {
		if got := specs[name].version; got != version {
			t.Errorf("%s pinned to %q, want %q", name, got, version)
		}
	}
	for _, s := range replicatetest.Schemas {
		if err := s.Valid(); err != nil {
			t.Error(err)
		}
	}
	f, e := newEngine(t)
	job := gengate.Job{TaskID: "t", Route: route("nightmareai/real-esrgan"), Type: "image", NumOutputs: 1,
		Options: map[string]any{}, Inputs: map[string]gengate.Input{"imageUrl": pngInput}}
	if _, err := e.Submit(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if got, want := f.LastRequest()["version"], "nightmareai/real-esrgan:"+replicatetest.Community["nightmareai/real-esrgan"]; got != want {
		t.Errorf("version %v, want %s", got, want)
	}
	job.Route = route("nightmareai/real-esrgan:0000")
	if _, err := e.Submit(context.Background(), job); err == nil || !strings.Contains(err.Error(), "422") {
		t.Fatalf("the operator's version was not sent (the fake knows only the pin): %v", err)
	}
}

// TestHailuo1080p: Hailuo 2.3 makes 1080p only at 6 s (10 s only at 768p);
// Validate refuses 1080p at 10 s before any charge.
func TestHailuo1080p(t *testing.T) {
	for _, up := range []string{"minimax/hailuo-2.3", "minimax/hailuo-2.3-fast"} {
		job := videoJob(up, map[string]any{"duration": int64(10), "resolution": "1080p"})
		job.AspectRatio = ""
		job.Inputs = map[string]gengate.Input{"imageUrl": {}}
		enginetest.WantValidate(t, New(Config{}).Validate(job), "duration")
		job.Options["resolution"] = "768p"
		enginetest.WantValidate(t, New(Config{}).Validate(job), "")
	}
}

// TestBackgroundRemoverJPEG: the background remover's format takes jpg.
func TestBackgroundRemoverJPEG(t *testing.T) {
	job := gengate.Job{Route: route("851-labs/background-remover"), Type: "image", NumOutputs: 1, OutputFormat: "jpeg",
		Options: map[string]any{}, Inputs: map[string]gengate.Input{"imageUrl": {}}}
	m := mapJob(job, false)
	if len(m.fields) > 0 || m.input["format"] != "jpg" {
		t.Errorf("input %v, refused %v", m.input, m.fields)
	}
}

// TestFakeRefusesOffSchema: for every model whose schema the fake holds, an
// input naming a field the schema lacks, and missing the fields it
// requires, is answered 422 with Replicate's problem JSON naming each, and
// no prediction is created.
func TestFakeRefusesOffSchema(t *testing.T) {
	f := replicatetest.New(t)
	for name, sc := range replicatetest.Schemas {
		path, body := "/models/"+name+"/predictions", map[string]any{"input": map[string]any{"not_a_field": 1}}
		if v, ok := replicatetest.Community[name]; ok {
			path, body["version"] = "/predictions", name+":"+v
		}
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", f.URL()+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+f.Key())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Title, Detail string
			Status        int
		}
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity || p.Status != 422 || p.Title != "Input validation failed" ||
			!strings.Contains(p.Detail, "input.not_a_field: ") {
			t.Errorf("%s: %d %+v, want 422 naming input.not_a_field", name, resp.StatusCode, p)
		}
		for _, req := range sc.Required() {
			if !strings.Contains(p.Detail, "input."+req+": field required") {
				t.Errorf("%s: %q does not name the missing %s", name, p.Detail, req)
			}
		}
	}
	if n := f.Submissions(); n != 0 {
		t.Errorf("%d predictions created from refused inputs", n)
	}
}
