package openai

import (
	"testing"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
)

// TestStrictFake sends every OpenAI route of the catalog, with its
// defaults and with every allowed value of every option, through the fake
// (which checks parameter names, n, quality, output_format and each
// model's sizes as openai-go documents them): whatever Validate accepts,
// OpenAI must accept.
func TestStrictFake(t *testing.T) {
	e, srv := newFake(t)
	srv.ShrinkImages(8)
	if n := enginetest.Sweep(t, e, "openai"); n < 40 {
		t.Errorf("only %d submits accepted", n)
	}
}

// TestGPTImage2Sizes: gpt-image-2 takes free-form sizes, so gengate offers
// 16:9, 9:16, 4:3 and 3:4 on it, and on the 2.5 variants, mapped the same
// way; gpt-image-1.5 keeps the three standard sizes.
func TestGPTImage2Sizes(t *testing.T) {
	e, srv := newFake(t)
	for _, ar := range []string{"16:9", "9:16", "4:3", "3:4"} {
		for _, model := range []string{"gpt-image-2", "gpt-image-2.5-flare", "gpt-image-2.5-sunburst"} {
			job := gengate.Job{TaskID: "t", Route: gengate.Route{Engine: "openai", Upstream: model}, Type: "image",
				Prompt: "a fox", AspectRatio: ar, NumOutputs: 1, OutputFormat: "png", Options: map[string]any{}}
			if _, err := enginetest.RunJob(t, e, job); err != nil {
				t.Fatalf("%s %s: %v", model, ar, err)
			}
			if got := srv.LastRequest()["size"]; got != gptImage2.sizes[ar] {
				t.Errorf("%s %s sent size %v", model, ar, got)
			}
		}
		job := gengate.Job{TaskID: "t", Route: gengate.Route{Engine: "openai", Upstream: "gpt-image-1.5"}, Type: "image",
			Prompt: "a fox", AspectRatio: ar, NumOutputs: 1, OutputFormat: "png", Options: map[string]any{}}
		enginetest.WantValidate(t, e.Validate(job), "aspectRatio")
	}
}
