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
// the basics (invalidInput): their version pages could not be read for
// this table (2026-11-23): z-image-turbo, ideogram-v3-turbo,
// stable-diffusion-3.5-large, bria/eraser, restore-image, qwen-image-edit,
// qwen-image-edit-plus, seedance-1-pro-fast, veo-3, gen4-turbo,
// pixverse-v5, wan-2.6-i2v, wan-2.5-t2v, wan-2.6-t2v,
// kling-v2.6-motion-control.
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
	"black-forest-labs/flux-dev": {
		Source: "https://replicate.com/black-forest-labs/flux-dev/api (enum values and ranges as listed at cinemasetfree.com/guides/generators/black-forest-labs/flux-dev)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(1:1|16:9|21:9|3:2|2:3|4:5|5:4|3:4|4:3|9:16|9:21) image:url prompt_strength:num[0..1] " +
			"num_outputs:int[1..4] num_inference_steps:int[1..50] guidance:num[0..10] seed:int output_format:enum(webp|jpg|png) " +
			"output_quality:int[0..100] disable_safety_checker:bool go_fast:bool megapixels:enum(1|0.25)",
	},
	"black-forest-labs/flux-schnell": {
		Source: "https://replicate.com/black-forest-labs/flux-schnell/api (enum values and ranges as listed at cinemasetfree.com/guides/generators/black-forest-labs/flux-schnell)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(1:1|16:9|21:9|3:2|2:3|4:5|5:4|3:4|4:3|9:16|9:21) num_outputs:int[1..4] num_inference_steps:int[1..4] " +
			"seed:int output_format:enum(webp|jpg|png) output_quality:int[0..100] disable_safety_checker:bool go_fast:bool megapixels:enum(1|0.25)",
	},
	"black-forest-labs/flux-kontext-pro": {
		Source: "https://replicate.com/black-forest-labs/flux-kontext-pro/versions/569705b35f79b1160d51de1d0e3955626af86c77a034a16e89010dbdde5ad312/api (enums as in api.core.today/v1/models/black-forest-labs/flux-kontext-pro/llms.txt)",
		Read:   read,
		Fields: "prompt:str! input_image:url aspect_ratio:enum(match_input_image|1:1|16:9|9:16|4:3|3:4|3:2|2:3|4:5|5:4|21:9|9:21|2:1|1:2) " +
			"output_format:enum(jpg|png) seed:int safety_tolerance:int[0..6] prompt_upsampling:bool",
		Rules: []schematest.Rule{{Field: "safety_tolerance", Msg: "2 is currently the maximum allowed when input images are used",
			Bad: func(in map[string]any) bool {
				st, _ := in["safety_tolerance"].(float64)
				return in["input_image"] != nil && st > 2
			}}},
	},
	"google/imagen-4-ultra": {
		Source: "https://replicate.com/google/imagen-4-ultra/versions/eb08b03f79ebc3d4b2542baacca07cc1e0729d24ed1730945555409f0ee30e1a/api (aspect ratios: Imagen 4's, as on Google's model card)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(1:1|9:16|16:9|3:4|4:3) output_format:enum(jpg|png) safety_filter_level:enum(block_low_and_above|block_medium_and_above|block_only_high)",
	},
	"google/imagen-4-fast": {
		Source: "https://replicate.com/google/imagen-4-fast/api (fields as in docs.kkiai.com …/create-task-google-imagen-4-fast; aspect ratios: Imagen 4's)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(1:1|9:16|16:9|3:4|4:3) output_format:enum(jpg|png) safety_filter_level:enum(block_low_and_above|block_medium_and_above|block_only_high)",
	},
	"black-forest-labs/flux-2-pro": {
		Source: "https://replicate.com/black-forest-labs/flux-2-pro/versions/285631b5656a1839331cd9af0d82da820e2075db12046d1d061c681b2f206bc6/api (the page gives aspect_ratio, resolution and output_format no enum values, so only their types are checked)",
		Read:   read,
		Fields: "prompt:str! input_images:urls[..8] aspect_ratio:str resolution:str width:int[256..2048] height:int[256..2048] " +
			"safety_tolerance:int[1..5] seed:int output_format:str output_quality:int[0..100]",
	},
	"google/veo-3.1-fast": {
		Source: "https://replicate.com/google/veo-3.1-fast/api (field names, types and the resolution enum as in api.core.today/v1/models/google/veo-3.1-fast/llms.txt; its duration and aspect ratio values disagree with Google's Veo 3.1 (4, 6, 8 s; 16:9, 9:16), so only their types are checked)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:str duration:int image:url last_frame:url negative_prompt:str resolution:enum(720p|1080p) generate_audio:bool seed:int",
	},
	"google/veo-3-fast": {
		Source: "https://replicate.com/google/veo-3-fast/versions/368d4063e21ecf73746b8e6d27989837d97ba07b5eca43a4e5488c852e10c2ec/api (field names and types; the page does not list the enum values, so only types are checked)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:str duration:int image:url negative_prompt:str resolution:str generate_audio:bool seed:int",
	},
	"google/nano-banana": {
		Source: "https://replicate.com/google/nano-banana/versions/f0a9d34b12ad1c1cd76269a844b218ff4e64e128ddaba93e15891f47368958a0/api (enums as in api.core.today/v1/models/google/nano-banana/llms.txt)",
		Read:   read,
		Fields: "prompt:str! image_input:urls aspect_ratio:enum(match_input_image|1:1|2:3|3:2|3:4|4:3|4:5|5:4|9:16|16:9|21:9) output_format:enum(png|jpg)",
	},
	"google/nano-banana-pro": {
		Source: "https://replicate.com/google/nano-banana-pro/versions/f5318740f60d79bf0c480216aaf9ca7614977553170eacd19ff8cbcda2409ac8/api (enums as in api.core.today/v1/models/google/nano-banana-pro/llms.txt)",
		Read:   read,
		Fields: "prompt:str! image_input:urls[..14] aspect_ratio:enum(match_input_image|1:1|2:3|3:2|3:4|4:3|4:5|5:4|9:16|16:9|21:9) " +
			"resolution:enum(1K|2K|4K) output_format:enum(png|jpg) safety_filter_level:enum(block_low_and_above|block_medium_and_above|block_only_high)",
	},
	"bytedance/seedream-4.5": {
		Source: "https://replicate.com/bytedance/seedream-4.5/versions/9fe3b8282dcb9d9063b05e33210a1432801f7c5a6641db944baefcec4886761a/api (enums as in docs.genhub.me/api-reference/seedream-45)",
		Read:   read,
		Fields: "prompt:str! image_input:urls[..14] size:enum(2K|4K|custom) aspect_ratio:enum(match_input_image|1:1|4:3|3:4|16:9|9:16|3:2|2:3|21:9) " +
			"width:int[1024..4096] height:int[1024..4096] sequential_image_generation:enum(disabled|auto) max_images:int[1..15] disable_safety_checker:bool",
	},
	"openai/sora-2": {
		Source: "https://replicate.com/openai/sora-2/versions/c86d0285b42f231a28d35ee4e7ab762c95ce58a4a94b97f8ecfb0424e9ecd367/api (enums as in api.core.today/v1/models/openai/sora-2/llms.txt)",
		Read:   read,
		Fields: "prompt:str! seconds:ienum(4|8|12) aspect_ratio:enum(portrait|landscape) input_reference:url openai_api_key:str",
	},
	"google/veo-3.1": {
		Source: "https://replicate.com/google/veo-3.1/versions/ed5b1767b711dd15d954b162af1e890d27882680f463a85e94f02d604012b972/api (enums as in api.core.today/v1/models/google/veo-3.1/llms.txt)",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(16:9|9:16) duration:ienum(4|6|8) image:url last_frame:url reference_images:urls[..3] " +
			"negative_prompt:str resolution:enum(720p|1080p) generate_audio:bool seed:int",
		Rules: []schematest.Rule{{Field: "reference_images", Msg: "reference images only work with 16:9 aspect ratio and 8-second duration",
			Bad: func(in map[string]any) bool {
				refs, _ := in["reference_images"].([]any)
				return len(refs) > 0 && (in["aspect_ratio"] == "9:16" || (in["duration"] != nil && in["duration"] != 8.0))
			}}},
	},
	"kwaivgi/kling-v2.1": {
		Source: "https://replicate.com/kwaivgi/kling-v2.1/api (fields as in api.core.today/v1/models/kwaivgi/kling-v2.1/llms.txt)",
		Read:   read,
		Fields: "prompt:str! start_image:url! end_image:url mode:enum(standard|pro) duration:ienum(5|10) negative_prompt:str",
		Rules: []schematest.Rule{{Field: "end_image", Msg: "end_image is for pro mode only",
			Bad: func(in map[string]any) bool { _, end := in["end_image"]; return end && in["mode"] != "pro" }}},
	},
	"wan-video/wan-2.5-i2v": {
		Source: "https://replicate.com/wan-video/wan-2.5-i2v/api (fields as in api.core.today/v1/models/wan-video/wan-2.5-i2v/llms.txt)",
		Read:   read,
		Fields: "prompt:str! image:url! duration:int[..10] resolution:enum(480p|720p|1080p) negative_prompt:str audio:url seed:int enable_prompt_expansion:bool",
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
