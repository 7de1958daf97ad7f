package openai

import (
	"fmt"

	"github.com/gengate/gengate"
)

// usage is the token count an Images API answer carries (openai-go
// ImagesResponseUsage: input_tokens, output_tokens, total_tokens,
// input_tokens_details.text_tokens and image_tokens).
type usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	Details      *struct {
		TextTokens  int64 `json:"text_tokens"`
		ImageTokens int64 `json:"image_tokens"`
	} `json:"input_tokens_details"`
}

// tokenPrice is a GPT image model's published price per million tokens,
// in USD: text input, image input, image output.
type tokenPrice struct{ text, image, output float64 }

// tokenPrices are OpenAI's published prices of the image models it names
// on its pricing page (platform.openai.com/docs/pricing, "Image tokens"
// and "Text tokens": gpt-image-1 5/10/40, gpt-image-1-mini 2/2.50/8).
// A model not here (gpt-image-2 and its variants, which the page did not
// price per token when this was written) has no known cost.
var tokenPrices = map[string]tokenPrice{
	"gpt-image-1":      {text: 5, image: 10, output: 40},
	"gpt-image-1-mini": {text: 2, image: 2.5, output: 8},
}

// cost prices an Images API answer: its usage tokens × the model's
// published token prices. OpenAI-compatible servers have their own prices,
// which gengate does not know.
func (e *Engine) cost(job gengate.Job, u *usage) *gengate.UpstreamCost {
	model := job.Route.Upstream
	switch {
	case e.compatible:
		return gengate.UnknownCost(e.name + " is an OpenAI-compatible server: gengate knows no price of its")
	case u == nil:
		return gengate.UnknownCost("OpenAI's answer has no usage")
	}
	p, ok := tokenPrices[model]
	if !ok {
		return gengate.UnknownCost("OpenAI publishes no token price gengate knows for " + model)
	}
	text, image := u.InputTokens, int64(0)
	if u.Details != nil {
		text, image = u.Details.TextTokens, u.Details.ImageTokens
	}
	usd := (float64(text)*p.text + float64(image)*p.image + float64(u.OutputTokens)*p.output) / 1e6
	return &gengate.UpstreamCost{Known: true, MicroUSD: gengate.MicroUSD(usd),
		Basis: fmt.Sprintf("%d text + %d image input tokens, %d output tokens at %g/%g/%g USD per 1M (%s)", text, image, u.OutputTokens, p.text, p.image, p.output, model)}
}
