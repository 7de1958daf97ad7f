package gengate_test

import (
	"context"
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/openai"
	"github.com/gengate/gengate/internal/engine/openai/openaitest"
)

// TestGPTImage25WideSizes: the GPT Image 2.5 models map aspectRatio as
// gpt-image-2 does (docs/models.md), so the spec's 16:9 and 9:16 are taken
// on their default route and sent to OpenAI as gpt-image-2's free-form
// sizes.
func TestGPTImage25WideSizes(t *testing.T) {
	for _, model := range []string{"gpt-image-2-5-flare", "gpt-image-2-5-sunburst"} {
		for ar, size := range map[string]string{"16:9": "1536x864", "9:16": "864x1536"} {
			t.Run(model+"/"+ar, func(t *testing.T) {
				o := openaitest.New(t)
				eng := openai.New(openai.Config{APIKey: o.Key(), BaseURL: o.URL()})
				d := newEngineDomain(t, "sqlite", map[string]gengate.Engine{"openai": eng})
				d.svc.ProvidersConfigured = true
				out, err := d.svc.Generate(context.Background(), d.key,
					[]byte(`{"type":"image","modelId":"`+model+`","prompt":"a poster","aspectRatio":"`+ar+`"}`), "")
				if err != nil {
					t.Fatalf("generate: %v", err)
				}
				d.step(out.Task.ID)
				got := d.task(out.Task.ID)
				if got.Status != gengate.StatusSucceeded {
					t.Fatalf("task %s: %s %s", got.Status, got.ErrorCode, got.ErrorMessage)
				}
				if s := o.LastRequest()["size"]; s != size {
					t.Errorf("size %v, want %s", s, size)
				}
			})
		}
	}
}
