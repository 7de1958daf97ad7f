// Package fal is the gengate engine for fal.ai, through its queue API only
// (https://queue.fal.run; never the synchronous https://fal.run, which is
// not retried and dies with the connection).
//
// Submit posts the model's input to POST /{endpoint} and keeps
// "<endpoint>|<request_id>" as the upstream id. Check reads
// GET /{owner}/{app}/requests/{id}/status (202 while IN_QUEUE or
// IN_PROGRESS, 200 COMPLETED), then the result at
// GET /{owner}/{app}/requests/{id}, and downloads every output file from
// fal's CDN at once (fal deletes them after their lifetime, which Submit
// sets to a day with X-Fal-Object-Lifecycle-Preference). Cancel is
// PUT /{owner}/{app}/requests/{id}/cancel. fal's own queue retries (429,
// 503, 504, connection errors; 5xx failures are not billed) stay on.
//
// A completed request whose result is an error answer failed: a model
// validation list {"detail":[{loc,msg,type}]} is the input's fault
// (UPSTREAM_REJECTED_INPUT) unless its type is a content-policy one
// (CONTENT_POLICY, as is an output every image of which fal's safety
// checker flagged); a request error {"detail","error_type"} is
// UPSTREAM_ERROR.
//
// The models table (models.go) maps gengate's options to each endpoint's
// parameters, and picks the endpoint's variant from the job: an input
// image turns text-to-X into image-to-X or /edit, a last frame turns Veo
// 3.1 into first-last-frame-to-video, 1080p turns Hailuo standard into pro.
// With an input image the output follows the image's shape, so the aspect
// ratio is not sent. Inputs go as data: URIs, which fal accepts for every
// file parameter.
//
// Sources followed:
//   - queue protocol: https://docs.fal.ai/model-endpoints/queue,
//     https://fal.ai/docs/api-reference/inference-api,
//     https://fal.ai/docs/inference-api/queue/cancel;
//   - errors and retries: https://fal.ai/docs/model-apis/errors,
//     https://fal.ai/docs/documentation/model-apis/request-errors,
//     https://docs.fal.ai/model-apis/model-endpoints/reliability,
//     https://fal.ai/docs/documentation/deployment/readiness-liveness;
//   - output lifetime: https://docs.fal.ai/documentation/model-apis/media-expiration;
//   - parameters: fal-js libs/client/src/types/{image,video}/types.gen.ts
//     and endpoint-map.ts (via /work/shared/research/anchors-apis.md §4),
//     and fal's model pages for Veo 3.1 first-last-frame (first_frame_url,
//     last_frame_url, duration "4s"/"6s"/"8s"), Kling 2.6 motion control
//     (image_url, video_url, character_orientation), PixVerse v5 (duration
//     "5"/"8", 1080p at 5 s only) and Seedream 4.5 (image_size presets,
//     auto_2K/auto_4K).
package fal
