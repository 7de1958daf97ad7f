package googletest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gengate/gengate/internal/engine/schematest"
)

// Vertex AI request schemas, one per JSON object of each method's body.
// Field names are those go-genai's Vertex converters write
// (github.com/googleapis/go-genai@6fd3e65e, 2026-08-21: models.go
// generateImagesConfigToVertex, generateVideosConfigToVertex,
// generateVideosParametersToVertex, imageToVertex, imageConfigToVertex,
// generateContentConfigToVertex; operations.go
// fetchPredictOperationParametersToVertex), the enums and ranges those of
// the Vertex AI reference pages named on each schema. Read 2026-11-23.
const (
	genaiSource    = "github.com/googleapis/go-genai@6fd3e65e models.go, types.go (Vertex converters)"
	imagenSource   = genaiSource + "; cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api"
	veoSource      = genaiSource + "; cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation"
	geminiSource   = genaiSource + "; cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/GenerationConfig"
	readOn         = "2026-11-23"
	geminiAspectsS = "1:1|2:3|3:2|3:4|4:3|4:5|5:4|9:16|16:9|21:9"
)

var vertexSchemas = map[string]*schematest.Schema{
	// POST …/models/{gemini image model}:generateContent
	"content.request": {Source: geminiSource, Read: readOn,
		Fields: "contents:any! generationConfig:obj safetySettings:any systemInstruction:obj tools:any toolConfig:obj labels:obj cachedContent:str"},
	"content.content": {Source: geminiSource, Read: readOn, Fields: "role:enum(user|model) parts:any!"},
	"content.part": {Source: geminiSource, Read: readOn,
		Fields: "text:str inlineData:obj fileData:obj thought:bool thoughtSignature:str"},
	"content.blob": {Source: geminiSource, Read: readOn, Fields: "mimeType:str! data:str!"},
	"content.generationConfig": {Source: geminiSource, Read: readOn,
		Fields: "responseModalities:strs temperature:num[0..2] topP:num[0..1] topK:num candidateCount:int[1..8] " +
			"maxOutputTokens:int[1..] seed:int stopSequences:strs imageConfig:obj thinkingConfig:obj",
		Rules: []schematest.Rule{{Field: "responseModalities", Msg: "responseModalities takes TEXT, IMAGE and AUDIO",
			Bad: func(in map[string]any) bool {
				l, _ := in["responseModalities"].([]any)
				for _, m := range l {
					if m != "TEXT" && m != "IMAGE" && m != "AUDIO" {
						return true
					}
				}
				return false
			}}}},
	"content.imageConfig": {Source: geminiSource, Read: readOn,
		Fields: "aspectRatio:enum(" + geminiAspectsS + ") imageSize:enum(1K|2K|4K) personGeneration:enum(ALLOW_ALL|ALLOW_ADULT|ALLOW_NONE) " +
			"prominentPeople:enum(PROMINENT_PEOPLE_UNSPECIFIED|ALLOW_PROMINENT_PEOPLE|BLOCK_PROMINENT_PEOPLE) imageOutputOptions:obj"},
	"content.imageOutputOptions": {Source: geminiSource, Read: readOn,
		Fields: "mimeType:enum(image/png|image/jpeg) compressionQuality:int[0..100]"},

	// POST …/models/{imagen}:predict
	"predict.request":  {Source: imagenSource, Read: readOn, Fields: "instances:any! parameters:obj labels:obj"},
	"predict.instance": {Source: imagenSource, Read: readOn, Fields: "prompt:str[1..]!"},
	"predict.parameters": {Source: imagenSource, Read: readOn,
		Fields: "sampleCount:int[1..4] aspectRatio:enum(1:1|3:4|4:3|9:16|16:9) sampleImageSize:enum(1K|2K) seed:int[0..4294967295] " +
			"addWatermark:bool enhancePrompt:bool negativePrompt:str personGeneration:enum(dont_allow|allow_adult|allow_all) " +
			"safetySetting:enum(block_low_and_above|block_medium_and_above|block_only_high|block_none) includeRaiReason:bool " +
			"includeSafetyAttributes:bool language:enum(auto|en|zh|zh-CN|zh-TW|hi|ja|ko|pt|es) outputOptions:obj storageUri:str guidanceScale:num",
		Rules: []schematest.Rule{{Field: "seed", Msg: "Seed is not supported when addWatermark is true.",
			Bad: func(in map[string]any) bool { _, seeded := in["seed"]; return seeded && in["addWatermark"] != false }}}},
	"predict.outputOptions": {Source: imagenSource, Read: readOn,
		Fields: "mimeType:enum(image/png|image/jpeg) compressionQuality:int[0..100]"},

	// POST …/models/{veo}:predictLongRunning
	"video.request": {Source: veoSource, Read: readOn, Fields: "instances:any! parameters:obj labels:obj"},
	"video.instance": {Source: veoSource, Read: readOn,
		Fields: "prompt:str image:obj lastFrame:obj video:obj referenceImages:any mask:obj",
		Rules: []schematest.Rule{
			{Field: "prompt", Msg: "A prompt or an image is required.", Bad: func(in map[string]any) bool { return in["prompt"] == nil && in["image"] == nil }},
			{Field: "lastFrame", Msg: "lastFrame is only supported with image.", Bad: func(in map[string]any) bool { return in["lastFrame"] != nil && in["image"] == nil }},
		}},
	"video.media": {Source: veoSource, Read: readOn, Fields: "bytesBase64Encoded:str gcsUri:str mimeType:str!",
		Rules: []schematest.Rule{{Field: "bytesBase64Encoded", Msg: "exactly one of bytesBase64Encoded and gcsUri",
			Bad: func(in map[string]any) bool { return (in["bytesBase64Encoded"] == nil) == (in["gcsUri"] == nil) }}}},
	"video.parameters": {Source: veoSource, Read: readOn,
		Fields: "aspectRatio:enum(16:9|9:16) durationSeconds:int[4..8] resolution:enum(720p|1080p) generateAudio:bool " +
			"seed:int[0..4294967295] sampleCount:int[1..4] personGeneration:enum(allow_adult|dont_allow|allow_all) negativePrompt:str " +
			"enhancePrompt:bool compressionQuality:enum(optimized|lossless) resizeMode:enum(pad|crop) storageUri:str pubsubTopic:str fps:int"},

	// POST …/models/{veo}:fetchPredictOperation
	"fetch.request": {Source: genaiSource, Read: readOn, Fields: "operationName:str!"},
}

// vertexModels are the publisher models the fake serves, with the method
// each takes (the Vertex AI model pages: Imagen 4, Veo 3 and 3.1, Gemini
// 2.5 Flash Image and the Gemini 3 image previews).
var vertexModels = map[string]string{
	"gemini-2.5-flash-image": "generateContent", "gemini-3-pro-image-preview": "generateContent",
	"gemini-3.1-flash-image-preview": "generateContent",
	"imagen-4.0-generate-001":        "predict", "imagen-4.0-ultra-generate-001": "predict", "imagen-4.0-fast-generate-001": "predict",
	"veo-3.0-generate-001": "predictLongRunning", "veo-3.0-fast-generate-001": "predictLongRunning",
	"veo-3.1-generate-001": "predictLongRunning", "veo-3.1-fast-generate-001": "predictLongRunning",
	"veo-3.1-lite-generate-001": "predictLongRunning",
}

// checker collects the problems of a body, object by object, in Google's
// wording ("Invalid JSON payload received. Unknown name …", "Invalid value
// at …").
type checker struct{ problems []string }

func (c *checker) obj(at, schema string, v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			c.problems = append(c.problems, fmt.Sprintf("Invalid value at '%s': Proto field is not repeating, cannot start list.", at))
		}
		return nil
	}
	for _, p := range vertexSchemas[schema].Check(m) {
		field := strings.TrimPrefix(at+"."+p.Field, ".")
		switch p.Kind {
		case "extra":
			c.problems = append(c.problems, fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", p.Field, at))
		case "missing":
			c.problems = append(c.problems, fmt.Sprintf("* %s: field is required", field))
		default:
			c.problems = append(c.problems, fmt.Sprintf("Invalid value at '%s' (%s): %s", field, p.Kind, p.Msg))
		}
	}
	return m
}

func (c *checker) list(at string, v any, min, max int) []any {
	l, ok := v.([]any)
	if !ok || len(l) < min || len(l) > max {
		c.problems = append(c.problems, fmt.Sprintf("* %s: expected %d to %d items", at, min, max))
		return nil
	}
	return l
}

func (c *checker) add(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

func (c *checker) message() string {
	sort.Strings(c.problems)
	return strings.Join(c.problems, "\n")
}

// checkVertex checks a body for model's method against the schemas and
// the per-model rules; "" when it is good.
func checkVertex(model, method string, body map[string]any) string {
	c := &checker{}
	switch method {
	case "generateContent":
		req := c.obj("", "content.request", body)
		for i, ct := range c.list("contents", req["contents"], 1, 64) {
			at := fmt.Sprintf("contents[%d]", i)
			cm := c.obj(at, "content.content", ct)
			for j, p := range c.list(at+".parts", cm["parts"], 1, 64) {
				pat := fmt.Sprintf("%s.parts[%d]", at, j)
				pm := c.obj(pat, "content.part", p)
				if b := c.obj(pat+".inlineData", "content.blob", pm["inlineData"]); b != nil {
					checkBase64(c, pat+".inlineData.data", b["data"])
				}
			}
		}
		gen := c.obj("generationConfig", "content.generationConfig", req["generationConfig"])
		ic := c.obj("generationConfig.imageConfig", "content.imageConfig", gen["imageConfig"])
		c.obj("generationConfig.imageConfig.imageOutputOptions", "content.imageOutputOptions", ic["imageOutputOptions"])
		if _, sized := ic["imageSize"]; sized && strings.HasPrefix(model, "gemini-2.5") {
			c.add("Image size is not supported for %s.", model)
		}
	case "predict":
		req := c.obj("", "predict.request", body)
		for i, in := range c.list("instances", req["instances"], 1, 1) {
			c.obj(fmt.Sprintf("instances[%d]", i), "predict.instance", in)
		}
		params := c.obj("parameters", "predict.parameters", req["parameters"])
		c.obj("parameters.outputOptions", "predict.outputOptions", params["outputOptions"])
		if _, sized := params["sampleImageSize"]; sized && strings.Contains(model, "fast") {
			c.add("sampleImageSize is not supported for %s.", model)
		}
	case "predictLongRunning":
		req := c.obj("", "video.request", body)
		for i, in := range c.list("instances", req["instances"], 1, 1) {
			at := fmt.Sprintf("instances[%d]", i)
			im := c.obj(at, "video.instance", in)
			for _, k := range []string{"image", "lastFrame", "video"} {
				if b := c.obj(at+"."+k, "video.media", im[k]); b != nil && b["bytesBase64Encoded"] != nil {
					checkBase64(c, at+"."+k+".bytesBase64Encoded", b["bytesBase64Encoded"])
				}
			}
		}
		params := c.obj("parameters", "video.parameters", req["parameters"])
		checkVeo(c, model, params)
	}
	return c.message()
}

// checkVeo checks what depends on the Veo model (the Veo 3 and 3.1 model
// pages on Vertex AI): durations 4, 6 or 8 s; generateAudio required;
// 1080p at 8 s only. The resolution is 720p or 1080p, as go-genai's
// GenerateVideosConfig.Resolution says for both backends ("720p and 1080p
// are supported"): the enum above has no 4k.
func checkVeo(c *checker, model string, params map[string]any) {
	if d, ok := params["durationSeconds"].(float64); ok && d != 4 && d != 6 && d != 8 {
		c.add("The duration %v seconds is not supported by %s.", d, model)
	}
	if _, ok := params["generateAudio"]; !ok {
		c.add("* parameters.generateAudio: generateAudio is required for %s.", model)
	}
	res, _ := params["resolution"].(string)
	if d, ok := params["durationSeconds"].(float64); ok && d != 8 && res == "1080p" {
		c.add("Resolution %s requires a duration of 8 seconds.", res)
	}
}

func checkBase64(c *checker, at string, v any) {
	s, _ := v.(string)
	if s == "" || !isBase64(s) {
		c.add("Invalid value at '%s' (TYPE_BYTES), Base64 decoding failed", at)
	}
}
