package replicatetest

import "github.com/gengate/gengate/internal/engine/schematest"

// Community lists the community (not official) models gengate routes to,
// with the version the engine pins. Replicate runs only official models by
// name (POST /v1/models/{owner}/{name}/predictions); a community model
// needs "owner/name:version" on POST /v1/predictions (Replicate changelog,
// 2025-08-05). The fake answers the models endpoint for these with 404, as
// Replicate does for a model it cannot run by name, and a version it does
// not know with 422.
var Community = map[string]string{
	"nightmareai/real-esrgan":     "42fed1c4974146d4d2414e2be2c5277c7fcf05fcc3a73abf41610695738c1d7b",
	"851-labs/background-remover": "a029dff38972b5fda4ec5d75d7d1cd25aeff621d2cf4946a41055d7db66b80bc",
	"codeplugtech/face-swap":      "278a81e7ebb22db98bcba54de985d22cc1abeead2754eb1f2af717247be69b34",
}

const read = "2026-11-23"

// Schemas holds the published input schemas (each model version's
// OpenAPI "Input" object, shown on its replicate.com …/api page) of the
// Replicate models gengate routes to, by owner/name. The fake checks a
// prediction's input against its model's schema and answers 422 with
// Replicate's problem JSON. Models not listed here are checked only for
// the basics (invalidInput); the report of issue 12 lists them.
//
// Cross-field rules a JSON schema cannot state (Hailuo's 1080p only at
// 6 s) fail the prediction on Replicate, after it is paid for; the fake
// refuses them at create instead, so a test sees them at once.
var Schemas = map[string]*schematest.Schema{
	"minimax/hailuo-2.3": {
		Source: "https://replicate.com/minimax/hailuo-2.3/versions/23a02633b5a44780345a59d4d43f8bd510efa239c56f08f29639ff24fa6615e1/api",
		Read:   read,
		Fields: "prompt:str! duration:ienum(6|10) resolution:enum(768p|1080p) prompt_optimizer:bool first_frame_image:url",
		Rules:  []schematest.Rule{hailuo1080p},
	},
	"minimax/hailuo-2.3-fast": {
		Source: "https://replicate.com/minimax/hailuo-2.3-fast/api (same fields as hailuo-2.3, first_frame_image required: image-to-video only)",
		Read:   read,
		Fields: "prompt:str! duration:ienum(6|10) resolution:enum(768p|1080p) prompt_optimizer:bool first_frame_image:url!",
		Rules:  []schematest.Rule{hailuo1080p},
	},
	"nightmareai/real-esrgan": {
		Source: "https://replicate.com/nightmareai/real-esrgan/api (version 42fed1c4…; fields as mirrored in eachlabs.ai/tencent/real-esrgan/real-esrgan/llms.txt)",
		Read:   read,
		Fields: "image:url! scale:num[0..10] face_enhance:bool",
	},
	"851-labs/background-remover": {
		Source: "https://replicate.com/851-labs/background-remover/api (version a029dff3…)",
		Read:   read,
		Fields: "image:url! format:enum(png|jpg|webp) background_type:str threshold:num[0..1] reverse:bool",
	},
	"codeplugtech/face-swap": {
		Source: "https://replicate.com/codeplugtech/face-swap/api (version 278a81e7…)",
		Read:   read,
		Fields: "input_image:url! swap_image:url!",
	},
}

// "10 seconds is only available for 768p resolution"; "1080p supports
// only 6-second duration" (the duration and resolution descriptions).
var hailuo1080p = schematest.Rule{Field: "duration", Msg: "1080p supports only 6-second duration",
	Bad: func(in map[string]any) bool { return in["resolution"] == "1080p" && in["duration"] == 10.0 }}
