package faltest

import "github.com/gengate/gengate/internal/engine/schematest"

// The fal endpoints' input schemas, as fal publishes them in its official
// JavaScript client's generated endpoint types (fal-js, which fal generates
// from each endpoint's OpenAPI schema): field names, types, enums and
// required fields from the newest snapshot that has the endpoint, ranges
// (the TypeScript types carry none) from the zod schemas generated beside
// them. Every endpoint the engine's table can send to has one, so the fake
// refuses what fal would refuse, with fal's 422 {"detail": [...]}.
//
// The fal-js types list sync_mode on most endpoints; gengate never sends it
// (it uses the queue), so it is left out and refused like any unknown field.
// fal ignores fields a schema does not name, which would drop an option
// silently: the fake refuses them instead, so such a mapping cannot pass.
const (
	srcJSAug = "github.com/fal-ai/fal-js@381105e138b85502b528fb8f6c16d909e30e462a (2026-08-02) libs/client/src/types/endpoints.ts; ranges from @53241327 libs/client/src/types/{image,video}/zod.gen.ts"
	srcJSApr = "github.com/fal-ai/fal-js@b498a0c45cdb543439c82a0b996b6cd50ab33b2a (2026-04-29) libs/client/src/types/endpoints.ts; ranges from @53241327 libs/client/src/types/{image,video}/zod.gen.ts"
	srcJSFeb = "github.com/fal-ai/fal-js@53241327a7e17ad9f964eb904a9769299cccaf58 (2026-02-03) libs/client/src/types/{image,video}/types.gen.ts and zod.gen.ts"
	read     = "2026-11-23"
)

// Schemas holds the input schema of every fal endpoint gengate can call,
// by endpoint id.
var Schemas = map[string]*schematest.Schema{
	"fal-ai/flux/dev":                                        {Source: srcJSAug, Read: read, Fields: `acceleration:enum(none|regular|high) enable_safety_checker:bool guidance_scale:num[1..20] image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) num_images:int[1..4] num_inference_steps:int[1..50] output_format:enum(jpeg|png) prompt:str! seed:int`},
	"fal-ai/flux/schnell":                                    {Source: srcJSAug, Read: read, Fields: `acceleration:enum(none|regular|high) enable_safety_checker:bool guidance_scale:num[1..20] image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) num_images:int[1..4] num_inference_steps:int[1..12] output_format:enum(jpeg|png) prompt:str! seed:int`},
	"fal-ai/flux-2-pro":                                      {Source: srcJSAug, Read: read, Fields: `enable_safety_checker:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) output_format:enum(jpeg|png) prompt:str! safety_tolerance:enum(1|2|3|4|5) seed:int`},
	"fal-ai/flux-2-pro/edit":                                 {Source: srcJSAug, Read: read, Fields: `enable_safety_checker:bool image_size:size(auto|square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) image_urls:urls! output_format:enum(jpeg|png) prompt:str! safety_tolerance:enum(1|2|3|4|5) seed:int`},
	"fal-ai/flux-pro/kontext/text-to-image":                  {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(21:9|16:9|4:3|3:2|1:1|2:3|3:4|9:16|9:21) enhance_prompt:bool guidance_scale:num[1..20] num_images:int[1..4] output_format:enum(jpeg|png) prompt:str! safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/flux-pro/kontext":                                {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(21:9|16:9|4:3|3:2|1:1|2:3|3:4|9:16|9:21) enhance_prompt:bool guidance_scale:num[1..20] image_url:url! num_images:int[1..4] output_format:enum(jpeg|png) prompt:str! safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/nano-banana":                                     {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(21:9|16:9|3:2|4:3|5:4|1:1|4:5|3:4|2:3|9:16) limit_generations:bool num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/nano-banana/edit":                                {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|21:9|16:9|3:2|4:3|5:4|1:1|4:5|3:4|2:3|9:16) image_urls:urls! limit_generations:bool num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/nano-banana-pro":                                 {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|21:9|16:9|3:2|4:3|5:4|1:1|4:5|3:4|2:3|9:16) enable_web_search:bool limit_generations:bool num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! resolution:enum(1K|2K|4K) safety_tolerance:enum(1|2|3|4|5|6) seed:int system_prompt:str`},
	"fal-ai/nano-banana-pro/edit":                            {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|21:9|16:9|3:2|4:3|5:4|1:1|4:5|3:4|2:3|9:16) enable_web_search:bool image_urls:urls! limit_generations:bool num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! resolution:enum(1K|2K|4K) safety_tolerance:enum(1|2|3|4|5|6) seed:int system_prompt:str`},
	"fal-ai/nano-banana-2":                                   {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|21:9|16:9|3:2|4:3|5:4|1:1|4:5|3:4|2:3|9:16|4:1|1:4|8:1|1:8) enable_web_search:bool limit_generations:bool num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! resolution:enum(0.5K|1K|2K|4K) safety_tolerance:enum(1|2|3|4|5|6) seed:int system_prompt:str thinking_level:enum(minimal|high)`},
	"fal-ai/nano-banana-2/edit":                              {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|21:9|16:9|3:2|4:3|5:4|1:1|4:5|3:4|2:3|9:16|4:1|1:4|8:1|1:8) audio_url:url enable_web_search:bool image_urls:urls limit_generations:bool num_images:int[1..4] output_format:enum(jpeg|png|webp) pdf_url:url prompt:str! resolution:enum(0.5K|1K|2K|4K) safety_tolerance:enum(1|2|3|4|5|6) seed:int system_prompt:str thinking_level:enum(minimal|high) video_url:url`},
	"fal-ai/z-image/turbo":                                   {Source: srcJSAug, Read: read, Fields: `acceleration:enum(none|regular|high) enable_prompt_expansion:bool enable_safety_checker:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) num_images:int[1..4] num_inference_steps:int[1..8] output_format:enum(jpeg|png|webp) prompt:str! seed:int`},
	"fal-ai/imagen4/preview/ultra":                           {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(1:1|16:9|9:16|4:3|3:4) num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! resolution:enum(1K|2K) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/imagen4/preview/fast":                            {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(1:1|16:9|9:16|4:3|3:4) num_images:int[1..4] output_format:enum(jpeg|png|webp) prompt:str! safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/ideogram/v3":                                     {Source: srcJSAug, Read: read, Fields: `color_palette:any expand_prompt:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) image_urls:urls negative_prompt:str num_images:int[1..8] prompt:str! rendering_speed:enum(TURBO|BALANCED|QUALITY) seed:int style:enum(AUTO|GENERAL|REALISTIC|DESIGN) style_codes:strs style_preset:enum(80S_ILLUSTRATION|90S_NOSTALGIA|ABSTRACT_ORGANIC|ANALOG_NOSTALGIA|ART_BRUT|ART_DECO|ART_POSTER|AURA|AVANT_GARDE|BAUHAUS|BLUEPRINT|BLURRY_MOTION|BRIGHT_ART|C4D_CARTOON|CHILDRENS_BOOK|COLLAGE|COLORING_BOOK_I|COLORING_BOOK_II|CUBISM|DARK_AURA|DOODLE|DOUBLE_EXPOSURE|DRAMATIC_CINEMA|EDITORIAL|EMOTIONAL_MINIMAL|ETHEREAL_PARTY|EXPIRED_FILM|FLAT_ART|FLAT_VECTOR|FOREST_REVERIE|GEO_MINIMALIST|GLASS_PRISM|GOLDEN_HOUR|GRAFFITI_I|GRAFFITI_II|HALFTONE_PRINT|HIGH_CONTRAST|HIPPIE_ERA|ICONIC|JAPANDI_FUSION|JAZZY|LONG_EXPOSURE|MAGAZINE_EDITORIAL|MINIMAL_ILLUSTRATION|MIXED_MEDIA|MONOCHROME|NIGHTLIFE|OIL_PAINTING|OLD_CARTOONS|PAINT_GESTURE|POP_ART|RETRO_ETCHING|RIVIERA_POP|SPOTLIGHT_80S|STYLIZED_RED|SURREAL_COLLAGE|TRAVEL_POSTER|VINTAGE_GEO|VINTAGE_POSTER|WATERCOLOR|WEIRD|WOODBLOCK_PRINT)`},
	"fal-ai/stable-diffusion-v35-large":                      {Source: srcJSAug, Read: read, Fields: `controlnet:any enable_safety_checker:bool guidance_scale:num[0..20] image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) ip_adapter:any loras:any negative_prompt:str num_images:int[1..4] num_inference_steps:int[1..50] output_format:enum(jpeg|png) prompt:str! seed:int`},
	"fal-ai/bytedance/seedream/v4.5/text-to-image":           {Source: srcJSAug, Read: read, Fields: `enable_safety_checker:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9|auto_2K|auto_4K) max_images:int[1..6] num_images:int[1..6] prompt:str! seed:int`},
	"fal-ai/bytedance/seedream/v4.5/edit":                    {Source: srcJSAug, Read: read, Fields: `enable_safety_checker:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9|auto_2K|auto_4K) image_urls:urls! max_images:int[1..6] num_images:int[1..6] prompt:str! seed:int`},
	"fal-ai/bytedance/seedream/v5/lite/text-to-image":        {Source: srcJSApr, Read: read, Fields: `enable_safety_checker:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9|auto_2K|auto_3K) max_images:num num_images:int[1..4] prompt:str!`},
	"fal-ai/bytedance/seedream/v5/lite/edit":                 {Source: srcJSApr, Read: read, Fields: `enable_safety_checker:bool image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9|auto_2K|auto_3K) image_urls:urls! max_images:num num_images:int[1..4] prompt:str!`},
	"fal-ai/birefnet/v2":                                     {Source: srcJSAug, Read: read, Fields: `image_url:url! mask_only:bool model:any operating_resolution:enum(1024x1024|2048x2048|2304x2304) output_format:enum(webp|png|gif) output_mask:bool refine_foreground:bool`},
	"fal-ai/bria/background/remove":                          {Source: srcJSAug, Read: read, Fields: `image_url:url!`},
	"fal-ai/bria/background/replace":                         {Source: srcJSAug, Read: read, Fields: `fast:bool image_url:url! negative_prompt:str num_images:int[1..4] prompt:str ref_image_url:url refine_prompt:bool seed:int[0..2147483647]`},
	"fal-ai/object-removal/mask":                             {Source: srcJSAug, Read: read, Fields: `image_url:url! mask_expansion:int[0..50] mask_url:url! model:enum(low_quality|medium_quality|high_quality|best_quality)`},
	"fal-ai/bria/eraser":                                     {Source: srcJSAug, Read: read, Fields: `image_url:url! mask_type:enum(manual|automatic) mask_url:url! preserve_alpha:bool`},
	"fal-ai/esrgan":                                          {Source: srcJSAug, Read: read, Fields: `face:bool image_url:url! model:enum(RealESRGAN_x4plus|RealESRGAN_x2plus|RealESRGAN_x4plus_anime_6B|RealESRGAN_x4_v3|RealESRGAN_x4_wdn_v3|RealESRGAN_x4_anime_v3) output_format:enum(png|jpeg) scale:num[1..8] tile:int`},
	"fal-ai/image-apps-v2/photo-restoration":                 {Source: srcJSAug, Read: read, Fields: `aspect_ratio:any enhance_resolution:bool fix_colors:bool image_url:url! remove_scratches:bool`},
	"fal-ai/qwen-image-edit":                                 {Source: srcJSAug, Read: read, Fields: `acceleration:enum(none|regular|high) enable_safety_checker:bool guidance_scale:num[0..20] image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) image_url:url! negative_prompt:str num_images:int[1..4] num_inference_steps:int[2..50] output_format:enum(jpeg|png) prompt:str! seed:int`},
	"fal-ai/qwen-image-edit-plus":                            {Source: srcJSAug, Read: read, Fields: `acceleration:enum(none|regular) enable_safety_checker:bool guidance_scale:num[0..20] image_size:size(square_hd|square|portrait_4_3|portrait_16_9|landscape_4_3|landscape_16_9) image_urls:urls! negative_prompt:str num_images:int[1..4] num_inference_steps:int[2..100] output_format:enum(jpeg|png) prompt:str! seed:int`},
	"fal-ai/image-apps-v2/virtual-try-on":                    {Source: srcJSAug, Read: read, Fields: `aspect_ratio:any clothing_image_url:url! person_image_url:url! preserve_pose:bool`},
	"fal-ai/kling/v1-5/kolors-virtual-try-on":                {Source: srcJSAug, Read: read, Fields: `garment_image_url:url! human_image_url:url!`},
	"fal-ai/fashn/tryon/v1.6":                                {Source: srcJSAug, Read: read, Fields: `category:enum(tops|bottoms|one-pieces|auto) garment_image:url! garment_photo_type:enum(auto|model|flat-lay) mode:enum(performance|balanced|quality) model_image:url! moderation_level:enum(none|permissive|conservative) num_samples:int[1..4] output_format:enum(png|jpeg) seed:int segmentation_free:bool`},
	"half-moon-ai/ai-face-swap/faceswapimage":                {Source: srcJSFeb, Read: read, Fields: `enable_occlusion_prevention:bool source_face_url:url! target_image_url:url!`},
	"fal-ai/sora-2/text-to-video":                            {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(9:16|16:9) character_ids:strs delete_video:bool detect_and_block_ip:bool duration:enum(4|8|12|16|20) model:enum(sora-2|sora-2-2025-12-08|sora-2-2025-10-06) prompt:str! resolution:str`},
	"fal-ai/sora-2/image-to-video":                           {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(auto|9:16|16:9) character_ids:strs delete_video:bool detect_and_block_ip:bool duration:enum(4|8|12|16|20) image_url:url! model:enum(sora-2|sora-2-2025-12-08|sora-2-2025-10-06) prompt:str! resolution:enum(auto|720p)`},
	"fal-ai/veo3.1":                                          {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool negative_prompt:str prompt:str! resolution:enum(720p|1080p|4k) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3.1/image-to-video":                           {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool image_url:url! negative_prompt:str prompt:str! resolution:enum(720p|1080p|4k) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3.1/first-last-frame-to-video":                {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) first_frame_url:url! generate_audio:bool last_frame_url:url! negative_prompt:str prompt:str! resolution:enum(720p|1080p|4k) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3.1/fast":                                     {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool negative_prompt:str prompt:str! resolution:enum(720p|1080p|4k) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3.1/fast/image-to-video":                      {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(auto|16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool image_url:url! negative_prompt:str prompt:str! resolution:enum(720p|1080p|4k) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3.1/fast/first-last-frame-to-video":           {Source: srcJSFeb, Read: read, Fields: `aspect_ratio:enum(auto|16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) first_frame_url:url! generate_audio:bool last_frame_url:url! negative_prompt:str prompt:str! resolution:enum(720p|1080p|4k) seed:int`},
	"fal-ai/veo3":                                            {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool negative_prompt:str prompt:str! resolution:enum(720p|1080p) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3/image-to-video":                             {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(auto|16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool image_url:url! negative_prompt:str prompt:str! resolution:enum(720p|1080p) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3/fast":                                       {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool negative_prompt:str prompt:str! resolution:enum(720p|1080p) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/veo3/fast/image-to-video":                        {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(auto|16:9|9:16) auto_fix:bool duration:enum(4s|6s|8s) generate_audio:bool image_url:url! negative_prompt:str prompt:str! resolution:enum(720p|1080p) safety_tolerance:enum(1|2|3|4|5|6) seed:int`},
	"fal-ai/kling-video/v2.1/standard/image-to-video":        {Source: srcJSFeb, Read: read, Fields: `cfg_scale:num[0..1] duration:enum(5|10) image_url:url! negative_prompt:str prompt:str!`},
	"fal-ai/kling-video/v2.1/master/text-to-video":           {Source: srcJSFeb, Read: read, Fields: `aspect_ratio:enum(16:9|9:16|1:1) cfg_scale:num[0..1] duration:enum(5|10) negative_prompt:str prompt:str!`},
	"fal-ai/kling-video/v2.1/master/image-to-video":          {Source: srcJSFeb, Read: read, Fields: `cfg_scale:num[0..1] duration:enum(5|10) image_url:url! negative_prompt:str prompt:str!`},
	"fal-ai/kling-video/v2.6/standard/motion-control":        {Source: srcJSFeb, Read: read, Fields: `character_orientation:enum(image|video)! image_url:url! keep_original_sound:bool prompt:str video_url:url!`},
	"fal-ai/minimax/hailuo-2.3/standard/text-to-video":       {Source: srcJSFeb, Read: read, Fields: `duration:enum(6|10) prompt:str! prompt_optimizer:bool`},
	"fal-ai/minimax/hailuo-2.3/standard/image-to-video":      {Source: srcJSFeb, Read: read, Fields: `duration:enum(6|10) image_url:url! prompt:str! prompt_optimizer:bool`},
	"fal-ai/minimax/hailuo-2.3/pro/text-to-video":            {Source: srcJSAug, Read: read, Fields: `prompt:str! prompt_optimizer:bool`},
	"fal-ai/minimax/hailuo-2.3/pro/image-to-video":           {Source: srcJSAug, Read: read, Fields: `image_url:url! prompt:str! prompt_optimizer:bool`},
	"fal-ai/minimax/hailuo-2.3-fast/standard/image-to-video": {Source: srcJSFeb, Read: read, Fields: `duration:enum(6|10) image_url:url! prompt:str! prompt_optimizer:bool`},
	"fal-ai/bytedance/seedance/v1/pro/fast/text-to-video":    {Source: srcJSFeb, Read: read, Fields: `aspect_ratio:enum(21:9|16:9|4:3|1:1|3:4|9:16) camera_fixed:bool duration:enum(2|3|4|5|6|7|8|9|10|11|12) enable_safety_checker:bool prompt:str! resolution:enum(480p|720p|1080p) seed:int`},
	"fal-ai/bytedance/seedance/v1/pro/fast/image-to-video":   {Source: srcJSFeb, Read: read, Fields: `aspect_ratio:enum(21:9|16:9|4:3|1:1|3:4|9:16|auto) camera_fixed:bool duration:enum(2|3|4|5|6|7|8|9|10|11|12) enable_safety_checker:bool image_url:url! prompt:str! resolution:enum(480p|720p|1080p) seed:int`},
	"fal-ai/pixverse/v5/text-to-video":                       {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(16:9|4:3|1:1|3:4|9:16) duration:enum(5|8) negative_prompt:str prompt:str! resolution:enum(360p|540p|720p|1080p) seed:int style:enum(anime|3d_animation|clay|comic|cyberpunk)`},
	"fal-ai/pixverse/v5/image-to-video":                      {Source: srcJSAug, Read: read, Fields: `duration:enum(5|8) image_url:url! negative_prompt:str prompt:str! resolution:enum(360p|540p|720p|1080p) seed:int style:enum(anime|3d_animation|clay|comic|cyberpunk)`},
	"fal-ai/wan-25-preview/text-to-video":                    {Source: srcJSAug, Read: read, Fields: `aspect_ratio:enum(16:9|9:16|1:1) audio_url:url duration:enum(5|10) enable_prompt_expansion:bool enable_safety_checker:bool negative_prompt:str prompt:str! resolution:enum(480p|720p|1080p) seed:int`},
	"fal-ai/wan-25-preview/image-to-video":                   {Source: srcJSAug, Read: read, Fields: `audio_url:url duration:enum(5|10) enable_prompt_expansion:bool enable_safety_checker:bool image_url:url! negative_prompt:str prompt:str! resolution:enum(480p|720p|1080p) seed:int`},
	"wan/v2.6/text-to-video":                                 {Source: srcJSApr, Read: read, Fields: `aspect_ratio:enum(16:9|9:16|1:1|4:3|3:4) audio_url:url duration:enum(5|10|15) enable_prompt_expansion:bool enable_safety_checker:bool multi_shots:bool negative_prompt:str prompt:str! resolution:enum(720p|1080p) seed:int`},
	"wan/v2.6/image-to-video":                                {Source: srcJSAug, Read: read, Fields: `audio_url:url duration:enum(5|10|15) enable_prompt_expansion:bool enable_safety_checker:bool image_url:url! multi_shots:bool negative_prompt:str prompt:str! resolution:enum(720p|1080p) seed:int`}}

func init() {
	// Rules the schemas state in their descriptions.
	pixels := func(lo, hi int) func(map[string]any) bool {
		return func(in map[string]any) bool {
			w, h, ok := schematest.Size(in["image_size"])
			return ok && (w*h < lo || w*h > hi)
		}
	}
	// Seedream 5 Lite's endpoints under their newer ids (fal-js@381105e,
	// 2026-08-02, endpoints.ts: bytedance/seedream/v5/lite/text-to-image
	// and /edit, the same inputs).
	for _, e := range []string{"text-to-image", "edit"} {
		old := Schemas["fal-ai/bytedance/seedream/v5/lite/"+e]
		Schemas["bytedance/seedream/v5/lite/"+e] = &schematest.Schema{Source: srcJSAug, Read: old.Read,
			Fields: old.Fields, Open: old.Open, Rules: append([]schematest.Rule(nil), old.Rules...)}
	}
	// "Total pixels must be between 2560x1440 and 3072x3072."
	for _, e := range []string{"fal-ai/bytedance/seedream/v5/lite/text-to-image", "fal-ai/bytedance/seedream/v5/lite/edit",
		"bytedance/seedream/v5/lite/text-to-image", "bytedance/seedream/v5/lite/edit"} {
		Schemas[e].Rules = append(Schemas[e].Rules, schematest.Rule{Field: "image_size",
			Msg: "total pixels must be between 2560x1440 and 3072x3072", Bad: pixels(2560*1440, 3072*3072)})
	}
	// "Width and height must be between 1920 and 4096, or total number of
	// pixels must be between 2560*1440 and 4096*4096."
	for _, e := range []string{"fal-ai/bytedance/seedream/v4.5/text-to-image", "fal-ai/bytedance/seedream/v4.5/edit"} {
		in4K := pixels(2560*1440, 4096*4096)
		Schemas[e].Rules = append(Schemas[e].Rules, schematest.Rule{Field: "image_size",
			Msg: "width and height must be between 1920 and 4096, or total pixels between 2560*1440 and 4096*4096",
			Bad: func(in map[string]any) bool {
				w, h, ok := schematest.Size(in["image_size"])
				sides := w >= 1920 && w <= 4096 && h >= 1920 && h <= 4096
				return ok && !sides && in4K(in)
			}})
	}
	// "1080p videos are limited to 5 seconds."
	for _, e := range []string{"fal-ai/pixverse/v5/text-to-video", "fal-ai/pixverse/v5/image-to-video"} {
		Schemas[e].Rules = append(Schemas[e].Rules, schematest.Rule{Field: "duration",
			Msg: "1080p videos are limited to 5 seconds",
			Bad: func(in map[string]any) bool { return in["resolution"] == "1080p" && in["duration"] == "8" }})
	}
	// "Either ref_image_url or bg_prompt has to be provided but not both."
	Schemas["fal-ai/bria/background/replace"].Rules = append(Schemas["fal-ai/bria/background/replace"].Rules, schematest.Rule{
		Field: "prompt", Msg: "either ref_image_url or prompt has to be provided but not both",
		Bad: func(in map[string]any) bool { _, p := in["prompt"]; _, r := in["ref_image_url"]; return p == r }})
}
