// Package google holds the engines that run gengate's Google models: Engine
// on the Gemini API (https://generativelanguage.googleapis.com/v1beta),
// with the API key in the x-goog-api-key header, and Vertex on Vertex AI
// (vertex.go), with OAuth access tokens from a service account key or
// Application Default Credentials (vertex_auth.go). Both map a job with
// the one table of models.go and read the same answers; the differences
// are listed under "Vertex AI" below.
//
// # Methods
//
// Gemini image models ("nano-banana": gemini-2.5-flash-image,
// gemini-3-pro-image-preview, gemini-3.1-flash-image-preview) are
// POST /models/{model}:generateContent with
//
//	{"contents": [{"role": "user", "parts": [{"text": prompt}, {"inlineData": {"mimeType", "data"}}...]}],
//	 "generationConfig": {"responseModalities": ["IMAGE"], "imageConfig": {"aspectRatio", "imageSize"}}}
//
// (an input marked Large, past --input-url-min-bytes, is uploaded through
// the Files API first and sent as {"fileData": {"mimeType", "fileUri"}}:
// files.go) and answer synchronously with candidates whose parts hold the
// image as inlineData (base64). Thought parts (Gemini 3 Pro Image's interim drafts)
// are skipped. A promptFeedback.blockReason, or no image with a finish
// reason such as SAFETY, IMAGE_SAFETY or PROHIBITED_CONTENT, is a
// CONTENT_POLICY failure; no image for any other reason is UPSTREAM_ERROR.
// generateContent has no output format setting on the Gemini API (the
// imageOutputOptions of Vertex AI are not offered there), so the engine
// re-encodes a PNG answer as JPEG, or the reverse, with the standard
// library when the job asks for the other; WebP it cannot write, and
// Validate refuses it.
//
// Imagen 4 is POST /models/{model}:predict with {"instances": [{prompt}],
// "parameters": {sampleCount, aspectRatio, sampleImageSize (Standard and
// Ultra: 1K, 2K), outputOptions: {mimeType}, includeRaiReason: true}},
// answered synchronously with {"predictions": [{bytesBase64Encoded,
// mimeType} | {raiFilteredReason}]}. Every image filtered is
// CONTENT_POLICY.
//
// For these two synchronous methods Submit returns the outputs at once and
// hands Check nothing to poll; an answer lost after the request was sent
// is ambiguous (the task goes to review, since Google documents no
// idempotency key).
//
// Veo is POST /models/{model}:predictLongRunning with {"instances":
// [{prompt, image?: {bytesBase64Encoded, mimeType}, lastFrame?: {...}}],
// "parameters": {aspectRatio, durationSeconds, resolution}}, answered with
// a google.longrunning.Operation whose name ("models/…/operations/…") is
// the upstream id. Check reads GET /{name} until "done", then downloads
// every response.generateVideoResponse.generatedSamples[].video.uri (a
// file on the API host, fetched with the key) or decodes inline video
// bytes. An operation error is Failed (UPSTREAM_REJECTED_INPUT for
// INVALID_ARGUMENT, CONTENT_POLICY for a safety text); done with no
// sample and raiMediaFilteredCount > 0 is CONTENT_POLICY. Cancel is
// POST /{name}:cancel, best effort.
//
// # Options
//
// Each model's values live in one table (models.go), keyed by upstream id
// prefix; Validate and Submit share the mapping. The Gemini API takes no
// seed for Imagen or Veo, and no generateAudio for Veo (Veo 3 always makes
// sound), so a seed, or generateAudio false, is refused on those models
// rather than dropped; Veo makes 720p and 1080p (go-genai: "720p and 1080p
// are supported"; a 4k job is refused, and goes to another route), and its
// 1080p videos are 8 seconds long only.
// Upstream ids the table does not know (an operator's own route) get a
// generic mapping by method ("veo…", "imagen…", else generateContent)
// that sends what maps and refuses only what cannot work. A route's params
// are merged last into generationConfig (Gemini) or parameters (Imagen,
// Veo), except top-level request fields such as safetySettings.
//
// The catalog's Veo upstream ids are the Gemini API's names:
// veo-3.1-generate-preview and veo-3.1-fast-generate-preview (the Veo 3.1
// models are previews there), veo-3.0-generate-001 and
// veo-3.0-fast-generate-001. Vertex AI names Veo 3.1 veo-3.1-generate-001;
// the table matches both spellings by prefix. Imagen 4's :predict is
// Vertex-AI-only in the official go-genai SDK (2026-08), so the catalog no
// longer routes Imagen here by default; the mapping stays for operator
// routes (docs/providers.md).
//
// # Vertex AI
//
// Vertex calls the same methods under
// /v1/projects/{project}/locations/{location}/publishers/google/models/{model}
// with Authorization: Bearer, and sends what only Vertex AI takes
// (go-genai's converters name them "only supported in … Agent Platform
// mode"): Veo's seed and generateAudio (required by Veo 3: true unless the
// job says), Imagen's seed (only on routes whose params set addWatermark
// false: Vertex AI takes no seed on watermarked images), and the Gemini
// image models' output format (imageConfig.imageOutputOptions.mimeType).
// Vertex AI has no Files API: inputs stay inline, and the Gemini image
// models' inputs are held to VertexInlineMax by Validate, before any charge.
// A Veo operation is named
// projects/…/publishers/google/models/{model}/operations/{id} and read by
// POST {model}:fetchPredictOperation {"operationName"}; done, its
// response.videos[] hold the video inline (bytesBase64Encoded) or, when
// the route sets storageUri, a gs:// URI read through Cloud Storage's JSON
// API with the same token. Token endpoint errors are the credentials'
// refusal (Refused, with the endpoint's status) or Busy (429, 5xx).
//
// # Errors
//
// Error answers are google.rpc.Status: {"error": {"code", "message",
// "status", "details"}}. 429 RESOURCE_EXHAUSTED and 5xx (INTERNAL,
// UNAVAILABLE) are Busy. A bad key (400 with reason API_KEY_INVALID),
// 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, FAILED_PRECONDITION (an
// unsupported location, no billing) and 404 are Refused with
// UPSTREAM_ERROR; other 400 INVALID_ARGUMENT answers are Refused with
// UPSTREAM_REJECTED_INPUT, or Failed with CONTENT_POLICY when the message
// is a safety refusal.
//
// Sources followed: the Gemini API reference and guides as mirrored in
// the stored docs (firebase ImageConfig, geminix V1beta.ImageConfig: the
// aspect ratios and 1K/2K/4K image sizes; generativelanguage v1beta
// PredictLongRunningGeneratedVideoResponse: generatedSamples,
// raiMediaFilteredCount, raiMediaFilteredReasons); the Google Gen AI SDKs'
// Gemini API request converters (googleapis/java-genai and js-genai
// generateImagesConfigToMldev and generateVideosConfigToMldev: sampleCount,
// sampleImageSize, outputOptions.mimeType, includeRaiReason, image and
// lastFrame as {bytesBase64Encoded, mimeType}, and seed and generateAudio
// "not supported in Gemini API"); and /work/shared/research/anchors-apis.md
// §3–4 for the model ids, the operation flow and the Imagen and Veo
// limits.
package google
