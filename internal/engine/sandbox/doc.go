// Package sandbox is the engine that lets gengate run offline and free: it
// serves every model with deterministic placeholders instead of calling a
// provider.
//
// Images are PNG, JPEG or WebP files of the requested size and count, painted
// with a pattern whose colours derive from the model, the prompt and the
// output's index, and stamped with "SANDBOX PLACEHOLDER - NOT AI OUTPUT", the
// model id and the prompt. Videos are real MP4 files (H.264 Constrained
// Baseline) showing a moving pattern marked "SANDBOX", exactly as long as the
// job's duration, in its aspect ratio, at its resolution class scaled down
// by videoScaleDown (docs/models.md). The same job always gives
// byte-identical files, so tests can compare them.
//
// Nothing the package makes is, or may be presented as, the output of an AI
// model. An optional delay makes the engine answer through Check, like a
// queued upstream provider, so the polling path can be exercised end to end.
//
// The H.264 stream comes from a small encoder in this package that codes
// every macroblock as I_PCM (raw samples) or P_Skip (a copy of the previous
// frame), so it needs neither cgo nor ffmpeg; mp4ff writes the MP4 around it.
package sandbox
