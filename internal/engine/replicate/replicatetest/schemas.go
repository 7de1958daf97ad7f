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
// Replicate models gengate routes to, by owner/name: every Replicate model
// of the catalog. The fake checks a prediction's input against its model's
// schema and answers 422 with Replicate's problem JSON; models not listed
// here (an operator's own) are checked only for the basics (invalidInput).
//
// replicate.com cannot be reached from the machine these were written on,
// so some schemas were read from copies of Replicate's openapi_schema that
// other projects keep in their code: nodetool-replicate generates one
// Python node per model version from it (field, enum and range, the
// version id in replicate_model_id), and 9router keeps one line per model
// "from each model's Replicate API reference" (name[enum], :i integer,
// :n number, :b boolean, :a array, * required). Each Source says which.
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
		Source: nodetool("image/generate.py") + " (version ccb5e331…); the same enums in " + router9("image") +
			"; field names first read on https://replicate.com/black-forest-labs/flux-2-pro/versions/285631b5656a1839331cd9af0d82da820e2075db12046d1d061c681b2f206bc6/api",
		Read: read,
		Fields: "prompt:str! input_images:urls[..8] aspect_ratio:enum(match_input_image|custom|1:1|16:9|3:2|2:3|4:5|5:4|9:16|3:4|4:3) " +
			"resolution:enum(match_input_image|0.5~MP|1~MP|2~MP|4~MP) width:int[256..2048] height:int[256..2048] " +
			"safety_tolerance:int[1..5] seed:int output_format:enum(webp|jpg|png) output_quality:int[0..100]",
	},
	"google/veo-3.1-fast": {
		Source: nodetool("video/generate.py") + " (version ba987ace…); the same enums in " + router9("video"),
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(16:9|9:16) duration:ienum(4|6|8) image:url last_frame:url negative_prompt:str resolution:enum(720p|1080p) generate_audio:bool seed:int",
	},
	"google/veo-3-fast": {
		Source: router9("video") + "; field names first read on https://replicate.com/google/veo-3-fast/versions/368d4063e21ecf73746b8e6d27989837d97ba07b5eca43a4e5488c852e10c2ec/api",
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(16:9|9:16) duration:ienum(4|6|8) image:url negative_prompt:str resolution:enum(720p|1080p) generate_audio:bool seed:int",
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
		Source: "https://replicate.com/wan-video/wan-2.5-i2v/api (fields as in api.core.today/v1/models/wan-video/wan-2.5-i2v/llms.txt; duration 5 or 10 as in " + router9("video") + ")",
		Read:   read,
		Fields: "prompt:str! image:url! duration:ienum(5|10) resolution:enum(480p|720p|1080p) negative_prompt:str audio:url seed:int enable_prompt_expansion:bool",
	},
	"codeplugtech/face-swap": {
		Source: "https://replicate.com/codeplugtech/face-swap/api (version 278a81e7…)",
		Read:   read,
		Fields: "input_image:url! swap_image:url!",
	},
	"prunaai/z-image-turbo": {
		Source: nodetoolAt("89e3131233346f19cb8efe4aef9d4ec73eebe24d", "image/generate.py") + " (version dcc5bfc0…); prompt required as in " + router9("image"),
		Read:   read,
		Fields: "prompt:str! width:int[64..2048] height:int[64..2048] num_inference_steps:int[1..50] guidance_scale:num[0..20] " +
			"seed:int go_fast:bool output_format:enum(png|jpg|webp) output_quality:int[0..100]",
	},
	"ideogram-ai/ideogram-v3-turbo": {
		Source: nodetool("image/generate.py") + " (version d9b3748f…; the 65 style_preset values are not transcribed, gengate never sends one); the same fields and enums, prompt required, in " + router9("image"),
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(1:3|3:1|1:2|2:1|9:16|16:9|10:16|16:10|2:3|3:2|3:4|4:3|4:5|5:4|1:1) " +
			"resolution:str magic_prompt_option:enum(Auto|On|Off) image:url mask:url " +
			"style_type:enum(None|Auto|General|Realistic|Design) style_reference_images:urls style_preset:str seed:int[..2147483647]",
	},
	"stability-ai/stable-diffusion-3.5-large": {
		Source: nodetool("image/generate.py") + " (version 2fdf9488…: nine aspect ratios, no 3:4 or 4:3); the same fields on https://replicate.com/stability-ai/stable-diffusion-3.5-large/versions/feb36d70a9f2791ed9df99f795ea5684da18f52b5f6b488dfdef635ca19d6bd3/api",
		Read:   read,
		Fields: "prompt:str negative_prompt:str aspect_ratio:enum(16:9|1:1|21:9|2:3|3:2|4:5|5:4|9:16|9:21) cfg:num[1..10] " +
			"image:url prompt_strength:num[0..1] seed:int output_format:enum(webp|jpg|png)",
	},
	"bria/eraser": {
		Source: router9("image") + " (no field marked required there; gengate always sends both images); the same flags on https://replicate.com/bria/genfill/versions/bce52ea4e4b298396203e9f84c12b20879f81495b406f82050e190c698fdb899/api",
		Read:   read,
		Fields: "image:url mask:url sync:bool content_moderation:bool preserve_alpha:bool",
	},
	"flux-kontext-apps/restore-image": {
		Source: router9("image") + "; safety_tolerance 0–2 as on the flux-kontext-apps pages (https://replicate.com/flux-kontext-apps/multi-image-kontext-pro/versions/6d14f9b3d25a9400c4a5e5f0f6842ae7537fefcf68df86dad9533f66204f2bb2/api: \"2 is currently the maximum allowed\")",
		Read:   read,
		Fields: "input_image:url! output_format:enum(jpg|png) safety_tolerance:int[0..2] seed:int",
	},
	"qwen/qwen-image-edit": {
		Source: nodetool("image/generate.py") + " (version a072e0d1…) and, with aspect_ratio, " + router9("image"),
		Read:   read,
		Fields: "prompt:str! image:url! aspect_ratio:enum(1:1|16:9|9:16|4:3|3:4|match_input_image) go_fast:bool seed:int " +
			"output_format:enum(webp|jpg|png) output_quality:int[0..100] disable_safety_checker:bool",
	},
	"qwen/qwen-image-edit-plus": {
		Source: router9("image"),
		Read:   read,
		Fields: "prompt:str! image:urls! aspect_ratio:enum(1:1|16:9|9:16|4:3|3:4|match_input_image) go_fast:bool seed:int " +
			"output_format:enum(webp|jpg|png) output_quality:int[0..100] disable_safety_checker:bool",
	},
	"bytedance/seedance-1-pro-fast": {
		Source: router9("video") + " (duration is an integer there, no range)",
		Read:   read,
		Fields: "prompt:str! image:url duration:int resolution:enum(480p|720p|1080p) aspect_ratio:enum(16:9|4:3|1:1|3:4|9:16|21:9|9:21) " +
			"fps:ienum(24) camera_fixed:bool seed:int",
	},
	"google/veo-3": {
		Source: router9("video"),
		Read:   read,
		Fields: "prompt:str! aspect_ratio:enum(16:9|9:16) duration:ienum(4|6|8) image:url negative_prompt:str resolution:enum(720p|1080p) generate_audio:bool seed:int",
	},
	"runwayml/gen4-turbo": {
		Source: nodetool("video/generate.py") + " (version 6257a44f…)",
		Read:   read,
		Fields: "prompt:str image:url duration:ienum(5|10) aspect_ratio:enum(16:9|9:16|4:3|3:4|1:1|21:9) seed:int",
	},
	"pixverse/pixverse-v5": {
		Source: nodetool("video/generate.py") + " (version 450181c5…: aspect ratios 16:9, 9:16, 1:1 only; effect values not transcribed, gengate never sends one); the same fields, prompt required, in " + router9("video"),
		Read:   read,
		Fields: "prompt:str! image:url last_frame_image:url effect:str quality:enum(360p|540p|720p|1080p) duration:ienum(5|8) " +
			"aspect_ratio:enum(16:9|9:16|1:1) negative_prompt:str seed:int",
		Rules: []schematest.Rule{{Field: "last_frame_image", Msg: "last_frame_image must be used with image",
			Bad: func(in map[string]any) bool { return in["last_frame_image"] != nil && in["image"] == nil }}},
	},
	"wan-video/wan-2.6-i2v": {
		Source: router9("video"),
		Read:   read,
		Fields: "prompt:str! image:url! negative_prompt:str audio:url resolution:enum(720p|1080p) duration:ienum(5|10|15) " +
			"enable_prompt_expansion:bool multi_shots:bool seed:int",
	},
	"wan-video/wan-2.5-t2v": {
		Source: router9("video") + " (size: six values, no square or 4:3)",
		Read:   read,
		Fields: "prompt:str! negative_prompt:str audio:url size:enum(832*480|480*832|1280*720|720*1280|1920*1080|1080*1920) " +
			"duration:ienum(5|10) enable_prompt_expansion:bool seed:int",
	},
	"wan-video/wan-2.6-t2v": {
		Source: router9("video") + " (size: four values, 720p and 1080p only)",
		Read:   read,
		Fields: "prompt:str! negative_prompt:str audio:url size:enum(1280*720|720*1280|1920*1080|1080*1920) " +
			"duration:ienum(5|10|15) enable_prompt_expansion:bool multi_shots:bool seed:int",
	},
	"kwaivgi/kling-v2.6-motion-control": {
		// No copy of v2.6's own schema was found. The closest: the v3
		// motion-control version of the same family, and a public app
		// calling v2.6 on Replicate with exactly these six fields.
		Source: "closest, not v2.6's own: " + nodetool("video/generate.py") + " kwaivgi/kling-v3-motion-control (version 15430b30…); v2.6 called with the same six fields (mode std, image, video, prompt, keep_original_sound, character_orientation) in github.com/Y-allery/yallery-backend@c5095e7e0d89 src/meme/processors/meme-generation.processor.ts",
		Read:   read,
		Fields: "prompt:str image:url! video:url! mode:enum(std|pro) keep_original_sound:bool character_orientation:enum(image|video)",
	},
}

// "10 seconds is only available for 768p resolution"; "1080p supports
// only 6-second duration" (the duration and resolution descriptions).
var hailuo1080p = schematest.Rule{Field: "duration", Msg: "1080p supports only 6-second duration",
	Bad: func(in map[string]any) bool { return in["resolution"] == "1080p" && in["duration"] == 10.0 }}

// nodetool is a file of nodetool-replicate at the commit read.
func nodetool(file string) string {
	return nodetoolAt("d21aa025d60ca4ffec4d1c451a1bb2b6827a44a7", file)
}

func nodetoolAt(commit, file string) string {
	return "github.com/nodetool-ai/nodetool-replicate@" + commit[:12] + " src/nodetool/nodes/replicate/" + file +
		" (generated from the version's openapi_schema)"
}

// router9 is 9router's table of Replicate input schemas for a kind
// ("image" or "video").
func router9(kind string) string {
	return "github.com/devil666dp/9router@ade9d774fab5 open-sse/handlers/" + kind + "Providers/replicate.js SPECS"
}
