// Package openai is the engine for OpenAI's Images and Videos APIs, and
// for servers that speak OpenAI's Images API (LocalAI and similar), which
// NewCompatible serves under the operator's name for them.
//
// # Images
//
// A job without an input image is one POST /images/generations with a JSON
// body {model, prompt, n, size, quality, output_format}; a job with one is
// POST /images/edits as multipart/form-data with the image as an `image[]`
// file part (`image` for compatible servers, the classic DALL·E name they
// implement) and an optional `mask` part. The parts are read from the
// inputs as the request is sent (upstream.Form), with a Content-Length.
// OpenAI's edits take files only (openai-go's ImageEditParams.Image is
// binary), so there is no URL to send for a large input; Sora's JSON
// input_reference {image_url} is not used (its API shut down 2026-09-24). GPT image models answer
// synchronously with {"created", "data": [{"b64_json"}], "usage"}, so
// Submit returns the outputs at once and hands Check nothing to poll.
// Compatible servers may answer with `url` items instead: Submit downloads
// them at once, and when a download fails it returns an upstream id
// holding the URLs ("urls:" and a JSON list) so that Check downloads them
// later without running the paid work again.
//
// GPT image sizes are 1024x1024 (1:1), 1536x1024 (3:2) and 1024x1536
// (2:3); Validate refuses other aspect ratios. Compatible servers, and
// OpenAI model ids this package does not know, get the nearest of the
// DALL·E 3 sizes 1024x1024, 1792x1024 and 1024x1792 (LocalAI takes any
// WxH, DALL·E-style servers take these three); an operator who wants
// another size sets "size" in the route's params, which are merged into
// the request last.
//
// # Videos
//
// Sora 2 is POST /videos (JSON {model, prompt, size, seconds}; multipart
// with an `input_reference` file part when the job has an image), which
// answers with a video object {id, status: queued|in_progress|completed|
// failed, progress, error{code, message}, expires_at}. The upstream id is
// "video:" and the video's id; Check reads GET /videos/{id} and, once it is
// completed, downloads GET /videos/{id}/content. Cancel sends
// DELETE /videos/{id}, the closest the API has to a cancel. sora-2 sizes
// are 1280x720 (16:9) and 720x1280 (9:16); seconds is the string "4", "8"
// or "12".
//
// # Errors
//
// Errors have the shape {"error": {"message", "type", "param", "code"}}.
// A safety refusal (code content_policy_violation or moderation_blocked,
// or a message naming the safety system) is CONTENT_POLICY and Failed,
// not Refused: any other route would refuse the same prompt. A 429 with
// code insufficient_quota is not transient, so it is Refused and the next
// route may take the task; other 429s are Busy. A create answered 408,
// 409, 429 or 5xx is sent again in the same call, at most twice, as
// openai-go sends it (its x-should-retry header decides when present; see
// openaiResends); a 5xx or 408 still there after that may have started the
// work: ambiguous, so the task is held for review, never submitted again
// or sent to the next route. A video that ends
// "failed" is Failed, CONTENT_POLICY when its error code or message is
// about moderation. An output that is gone when Check downloads it (the
// video's expires_at has passed, or the download answers 4xx) is Failed:
// it will not come back.
//
// Every create request carries "Idempotency-Key: gengate-<task id>", the
// same on each attempt: where the API honours it a repeated submit cannot
// start a second paid job, and where it is ignored it is harmless
// (openai-go itself sends none).
//
// Sources followed: OpenAI API reference for images (generate, edit) and
// videos (create, retrieve, content, delete) as summarised in
// /work/shared/research/anchors-apis.md §3, with
// https://developers.openai.com/api/reference/resources/images/methods/generate,
// https://developers.openai.com/api/docs/guides/video-generation, the
// OpenAPI-derived field lists of docs.rs openai-client-base
// (CreateImageRequest, CreateVideoBody, CreateVideoJsonBody) and hexdocs
// ex_openai CreateVideoMultipartBody (sizes, seconds 4/8/12 as strings),
// docs.newapi.pro's copy of the create-video reference (video object and
// error shape), and the OpenAI Python SDK (Idempotency-Key on retries).
package openai
