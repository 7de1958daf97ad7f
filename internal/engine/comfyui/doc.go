// Package comfyui is the gengate engine for a self-hosted ComfyUI server
// (COMFYUI_URL, e.g. http://gpu-box:8188). ComfyUI has no authentication of
// its own; when Config.APIKey is set it is sent as "Authorization: Bearer"
// for a server behind an authenticating proxy.
//
// A route's upstream id names a workflow template embedded from
// workflows/<id>.json: a ComfyUI API-format graph ({"<node id>":
// {"class_type", "inputs"}}) whose job-dependent values are whole-string
// placeholders ("{{prompt}}", "{{seed}}", "{{width}}", ...; see spec). The
// table in workflows.go says what each template can do, so Validate and
// Submit share one mapping. A route's Params override node inputs by
// "<node id>.<input>" (e.g. {"1.unet_name": "flux1-schnell-fp8.safetensors"}),
// so an operator can point a template at the model files their server has.
//
// Submit uploads input images with POST /upload/image (as server.py reads
// it: the file under "image", "overwrite" "true", "type" "input"; the
// file part read from the input as it is sent) and names the answered
// subfolder/name in LoadImage, then queues the graph with POST /prompt
// {"prompt", "client_id", "prompt_id"}, where prompt_id is gengate's task id: the upstream id is
// that id, and Check needs nothing else, in any process. Check reads GET
// /history/{id} ({} until the prompt has finished); while it is empty, GET
// /queue says whether the prompt is running or waiting (and how many wait
// before it, which lengthens the next delay). Finished, a status_str
// "error" is a Failed task with the execution_error message; otherwise
// every saved file of the job's kind is downloaded with GET /view. A prompt
// in neither queue nor history is lost (ComfyUI keeps both in memory, so a
// restart loses them): Failed. Cancel deletes a waiting prompt (POST /queue
// {"delete": [id]}) or interrupts a running one (POST /interrupt
// {"prompt_id": id}).
//
// Because gengate chooses the prompt id, Submit can tell whether ComfyUI
// has a prompt: it looks the id up (GET /queue, then GET /history/{id}:
// in this order a prompt that finishes between the reads is still found)
// before posting, so a Submit that runs again after a Busy answer (say, a
// proxy's 502 on a request it did pass on) attaches to the queued prompt
// instead of running it twice; and when the POST was sent but its answer
// lost, it looks again: found, the prompt was accepted; absent, it may
// still arrive, so the outcome stays ambiguous (a plain error), and the
// service looks for it once more later (Find) before holding the task for
// review; it never posts the prompt a second time. Servers older than
// client-chosen prompt ids (2025) make their own id, which Submit then
// keeps, and these look-ups find nothing.
//
// Failures: a 400 on POST /prompt (the graph failed validation) is Refused,
// UPSTREAM_REJECTED_INPUT, except when it is the server's set-up (a node
// type or model file it lacks, a graph without outputs): UPSTREAM_ERROR.
// ComfyUI has no content policy; a workflow's safety-checker node fails
// with an execution error, which is CONTENT_POLICY only when its text says
// so (NSFW, unsafe content), else UPSTREAM_ERROR like any node failure.
//
// Outputs: SaveImage writes PNG only, so a job asking for JPEG gets its
// PNGs converted here; WebP is refused. The Wan template saves MP4 through
// CreateVideo + SaveVideo (format "mp4", codec "h264").
//
// The server needs these core nodes (ComfyUI of mid-2025 or later, for
// SaveVideo, CreateVideo, TextEncodeQwenImageEdit, CFGNorm): UNETLoader,
// CheckpointLoaderSimple, DualCLIPLoader, CLIPLoader, VAELoader,
// CLIPTextEncode, ConditioningZeroOut, EmptySD3LatentImage,
// EmptyHunyuanLatentVideo, ModelSamplingAuraFlow, ModelSamplingSD3,
// CFGNorm, KSampler, VAEDecode, VAEEncode, LoadImage,
// ImageScaleToTotalPixels, TextEncodeQwenImageEdit, SaveImage,
// CreateVideo, SaveVideo; and the model files the templates name
// (flux1-schnell, sd3.5_large_fp8_scaled, z_image_turbo_bf16,
// qwen_image_edit_fp8_e4m3fn, wan2.1_t2v_14B_fp8_scaled with their text
// encoders and VAEs), or route Params naming others. Wan 2.5 has no open
// weights: the wan-2-5-t2v template runs a Wan 2.1/2.2 text-to-video model.
//
// Sources followed: ComfyUI's server.py and execution.py
// (comfyanonymous/ComfyUI: the routes, the client-chosen prompt_id, the
// validate_prompt error shapes, the history entry and its status messages,
// targeted /interrupt), api_schemas/README.md (the /prompt request),
// comfy_extras/nodes_video.py and comfy_api's PreviewVideo (SaveVideo's
// file is listed under "images" with "animated"), the ComfyUI example
// workflows and Comfy-Org workflow templates for the node sets and settings
// of Flux schnell, SD 3.5, Z-Image Turbo, Qwen-Image-Edit and Wan text to
// video.
package comfyui
