// Package googletest is a fake of the Gemini API's media generation
// methods for tests, written from Google's documentation, not from its
// code: the Gemini API reference for generateContent (GenerateContentRequest
// with contents, parts, inlineData and generationConfig.imageConfig; the
// response's candidates, finishReason and promptFeedback.blockReason), for
// Imagen's predict (instances, parameters, predictions with
// bytesBase64Encoded or raiFilteredReason) and for Veo's
// predictLongRunning (a google.longrunning.Operation, polled by name, done
// with response.generateVideoResponse.generatedSamples[].video.uri or an
// error, raiMediaFilteredCount for filtered videos); and the google.rpc.Status
// error shape {"error": {"code", "message", "status", "details"}} with the
// Gemini API's troubleshooting statuses (400 INVALID_ARGUMENT, 403
// PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 500 INTERNAL, 503 UNAVAILABLE).
//
// It serves, under /v1beta, POST /models/{model}:generateContent,
// :predict and :predictLongRunning, GET /models/{model}/operations/{id},
// POST /models/{model}/operations/{id}:cancel and GET /files/{id}:download
// for Veo's videos. It checks the API key as Google does: none is 403
// PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT with reason
// API_KEY_INVALID; the key may come in x-goog-api-key or ?key=. Images are
// real PNG (or JPEG, for Imagen's outputOptions.mimeType) files of the
// requested aspect ratio; videos are small MP4 files (an ftyp box).
//
// generateContent and predict answer synchronously, so Hold, SetPolls and
// FailPolls concern Veo operations only; FailSubmits, ResetNextSubmit and
// FailJobs concern all three methods.
package googletest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// Server is a fake Gemini API.
//
// Its knobs are upstreamtest.Knobs': FailSubmits makes calls that start
// work answer with Google's error body (429 carries Retry-After: 1);
// FailPolls concerns operation reads; Hold keeps operations started from
// now on running until Release, after which they finish on their next
// poll. FailJobs("error") makes work fail (Gemini: a candidate that ends
// NO_IMAGE; Imagen: an answer with no predictions; Veo: an operation done
// with error 13 INTERNAL), FailJobs("content_policy") refuse it (Gemini: a
// candidate that ends IMAGE_SAFETY; Imagen: every prediction filtered with
// a raiFilteredReason; Veo: raiMediaFilteredCount 1 and no sample).
type Server struct {
	upstreamtest.Knobs

	srv *httptest.Server
	key string

	mu sync.Mutex
	operations
	retired map[string]bool
	files   map[string][]byte
	seq     int
	// uploads are the Files API's resumable uploads by upload_id, and
	// inputs the files they made by id (files.go).
	uploads map[string]*upload
	inputs  map[string]*inputFile
}

// New starts a fake Gemini API, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{key: "AIzaSyFakeKey-0123456789abcdefghijklmn", files: map[string][]byte{},
		uploads: map[string]*upload{}, inputs: map[string]*inputFile{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{call}", s.handleCall)
	mux.HandleFunc("GET /v1beta/models/{model}/operations/{id}", s.handleGet)
	mux.HandleFunc("POST /v1beta/models/{model}/operations/{call}", s.handleCancel)
	mux.HandleFunc("GET /v1beta/files/{call}", s.handleFile)
	mux.HandleFunc("POST /upload/v1beta/files", s.handleUpload)
	mux.HandleFunc("GET /v1beta/models", s.handleList)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// ListedModels are the models the fake's models.list names: those the
// Gemini API serves that gengate's routes use.
var ListedModels = []string{"gemini-2.5-flash-image", "gemini-3-pro-image-preview", "gemini-3.1-flash-image-preview",
	"imagen-4.0-generate-001", "imagen-4.0-ultra-generate-001", "imagen-4.0-fast-generate-001",
	"veo-3.1-generate-preview", "veo-3.1-fast-generate-preview", "veo-3.0-generate-001", "veo-3.0-fast-generate-001"}

// Retire takes a model off the fake's models.list, as Google does when it
// shuts a model down.
func (s *Server) Retire(model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired == nil {
		s.retired = map[string]bool{}
	}
	s.retired[model] = true
}

// handleList serves models.list as the Gemini API documents it (GET
// /v1beta/models?pageSize=&pageToken=: {"models": [{"name": "models/…",
// "displayName", "supportedGenerationMethods"}], "nextPageToken"}; pageSize
// defaults to 50, at most 1000; go-genai models.go List), one page at a
// time.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	size := 50
	if v, err := strconv.Atoi(r.URL.Query().Get("pageSize")); err == nil && v > 0 {
		size = min(v, 1000)
	}
	start, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
	s.mu.Lock()
	var listed []string
	for _, m := range ListedModels {
		if !s.retired[m] {
			listed = append(listed, m)
		}
	}
	s.mu.Unlock()
	page := []any{}
	for i := start; i < len(listed) && i < start+size; i++ {
		method := "generateContent"
		switch {
		case strings.HasPrefix(listed[i], "veo"):
			method = "predictLongRunning"
		case strings.HasPrefix(listed[i], "imagen"):
			method = "predict"
		}
		page = append(page, map[string]any{"name": "models/" + listed[i], "displayName": listed[i],
			"supportedGenerationMethods": []any{method}})
	}
	out := map[string]any{"models": page}
	if start+size < len(listed) {
		out["nextPageToken"] = strconv.Itoa(start + size)
	}
	writeJSON(w, out)
}

// URL returns the base URL to configure (the fake's /v1beta).
func (s *Server) URL() string { return s.srv.URL + "/v1beta" }

// Key returns the API key the fake accepts.
func (s *Server) Key() string { return s.key }

// Cancels returns how many operation cancels the fake answered.
func (s *Server) Cancels() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels
}

// Release lets held operations finish on their next poll.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.Release()
	s.release()
}

// DeleteOutputs deletes every video file served so far, as the Gemini API
// does two days after generation: their URIs answer 404. (Images come
// inline in the answers and have no files.)
func (s *Server) DeleteOutputs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.DeleteOutputs()
	s.files = map[string][]byte{}
}

// rpcStatus writes a google.rpc.Status error answer.
func rpcStatus(w http.ResponseWriter, code int, status, message string, details ...map[string]any) {
	body := map[string]any{"code": code, "message": message, "status": status}
	if len(details) > 0 {
		body["details"] = details
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": body})
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	k := r.Header.Get("x-goog-api-key")
	if k == "" {
		k = r.URL.Query().Get("key")
	}
	switch k {
	case s.key:
		return true
	case "":
		rpcStatus(w, http.StatusForbidden, "PERMISSION_DENIED",
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
	default:
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
			map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
				"metadata": map[string]any{"service": "generativelanguage.googleapis.com"}})
	}
	return false
}

func failStatus(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		rpcStatus(w, status, "RESOURCE_EXHAUSTED",
			"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.")
	case status == http.StatusServiceUnavailable:
		rpcStatus(w, status, "UNAVAILABLE", "The model is overloaded. Please try again later.")
	case status >= 500:
		rpcStatus(w, status, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")
	case status == http.StatusBadRequest:
		rpcStatus(w, status, "INVALID_ARGUMENT", "Request contains an invalid argument.")
	case status == http.StatusUnauthorized:
		rpcStatus(w, status, "UNAUTHENTICATED",
			"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	case status == http.StatusForbidden:
		rpcStatus(w, status, "PERMISSION_DENIED", "The caller does not have permission")
	case status == http.StatusNotFound:
		rpcStatus(w, status, "NOT_FOUND", "Requested entity was not found.")
	default:
		rpcStatus(w, status, "FAILED_PRECONDITION", http.StatusText(status))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	upstreamtest.WriteJSON(w, http.StatusOK, v)
}

// handleCall serves POST /v1beta/models/{model}:{method}.
func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	if !ok || model == "" {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&body); err != nil {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	var check func(map[string]any) string
	switch method {
	case "generateContent":
		check = checkContent
	case "predict":
		check = checkPredict
	case "predictLongRunning":
		check = checkVideo
	default:
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "models/"+model+" is not found for API version v1beta, or is not supported for "+method+".")
		return
	}
	if msg := check(body); msg != "" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
		return
	}
	if msg := checkModel(model, method, body); msg != "" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
		return
	}
	if method == "generateContent" {
		if code, status, msg := s.checkFileData(body); code != 0 {
			rpcStatus(w, code, status, msg)
			return
		}
	}

	if status, ok := s.TakeSubmitFailure(); ok {
		failStatus(w, status)
		return
	}
	s.mu.Lock()
	reset := s.Accept(body)
	s.seq++
	fail := s.JobFailReason()
	var answer any
	switch method {
	case "generateContent":
		answer = contentAnswer(body, fail)
	case "predict":
		answer = predictAnswer(body, fail)
	default:
		o := &op{name: fmt.Sprintf("models/%s/operations/fake%06dq8r3w", model, s.seq), held: s.Held(), failWith: fail}
		s.add(o)
		answer = map[string]any{"name": o.name}
	}
	s.mu.Unlock()

	if reset {
		upstreamtest.ResetConn(w)
		return
	}
	writeJSON(w, answer)
}

// unknownName mimics Google's answer to a field its protobuf lacks.
func unknownName(m map[string]any, at string, known ...string) string {
	for k := range m {
		if !slices.Contains(known, k) {
			if at == "" {
				return fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", k)
			}
			return fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", k, at)
		}
	}
	return ""
}

var (
	geminiAspects = []string{"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"}
	imagenAspects = []string{"1:1", "3:4", "4:3", "9:16", "16:9"}
)

func checkBlob(b map[string]any, dataKey, at string) string {
	mime, _ := b["mimeType"].(string)
	data, _ := b[dataKey].(string)
	if mime == "" {
		return "* " + at + ".mime_type: a MIME type is required"
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil || data == "" {
		return fmt.Sprintf("Invalid value at '%s.%s' (TYPE_BYTES), Base64 decoding failed", at, dataKey)
	}
	return ""
}

func checkContent(body map[string]any) string {
	if m := unknownName(body, "", "contents", "generationConfig", "safetySettings", "systemInstruction", "tools", "toolConfig", "cachedContent"); m != "" {
		return m
	}
	contents, _ := body["contents"].([]any)
	if len(contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	for _, c := range contents {
		cm, _ := c.(map[string]any)
		parts, _ := cm["parts"].([]any)
		if len(parts) == 0 {
			return "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty."
		}
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if m := unknownName(pm, "contents[0].parts[0]", "text", "inlineData", "fileData", "thought", "thoughtSignature"); m != "" {
				return m
			}
			if b, ok := pm["inlineData"].(map[string]any); ok {
				if m := checkBlob(b, "data", "contents[0].parts[0].inline_data"); m != "" {
					return m
				}
			}
		}
	}
	gen, _ := body["generationConfig"].(map[string]any)
	if m := unknownName(gen, "generation_config", "responseModalities", "imageConfig", "seed", "temperature", "topP", "topK",
		"candidateCount", "maxOutputTokens", "stopSequences", "thinkingConfig"); m != "" {
		return m
	}
	ic, _ := gen["imageConfig"].(map[string]any)
	if m := unknownName(ic, "generation_config.image_config", "aspectRatio", "imageSize"); m != "" {
		return m
	}
	if a, ok := ic["aspectRatio"].(string); ok && !slices.Contains(geminiAspects, a) {
		return "Unsupported aspect ratio: " + a
	}
	if z, ok := ic["imageSize"].(string); ok && !slices.Contains([]string{"1K", "2K", "4K"}, z) {
		return "Unsupported image size: " + z
	}
	return ""
}

func checkPredict(body map[string]any) string {
	inst, _ := body["instances"].([]any)
	if len(inst) != 1 {
		return "instances must hold one instance"
	}
	if p, _ := inst[0].(map[string]any)["prompt"].(string); p == "" {
		return "The prompt is empty."
	}
	params, _ := body["parameters"].(map[string]any)
	if a, ok := params["aspectRatio"].(string); ok && !slices.Contains(imagenAspects, a) {
		return "Aspect ratio " + a + " is not supported."
	}
	if n, ok := params["sampleCount"].(float64); ok && (n < 1 || n > 4) {
		return "sampleCount must be between 1 and 4."
	}
	if z, ok := params["sampleImageSize"].(string); ok && z != "1K" && z != "2K" {
		return "sampleImageSize must be 1K or 2K."
	}
	if _, ok := params["seed"]; ok {
		return "Seed is not supported in the Gemini API."
	}
	return ""
}

func checkVideo(body map[string]any) string {
	inst, _ := body["instances"].([]any)
	if len(inst) != 1 {
		return "instances must hold one instance"
	}
	im, _ := inst[0].(map[string]any)
	// The fields go-genai's Gemini API converter (models.go,
	// generateVideosParametersToMldev and generateVideosConfigToMldev)
	// sends; the rest (seed, generateAudio, fps, compressionQuality, …) it
	// refuses as Vertex-only.
	if m := unknownName(im, "instances[0]", "prompt", "image", "lastFrame", "referenceImages", "video"); m != "" {
		return m
	}
	if m := unknownName(asMap(body["parameters"]), "parameters", "sampleCount", "durationSeconds", "aspectRatio", "resolution",
		"personGeneration", "negativePrompt", "enhancePrompt", "generateAudio", "seed"); m != "" {
		return m
	}
	for _, k := range []string{"image", "lastFrame"} {
		if b, ok := im[k].(map[string]any); ok {
			if m := checkBlob(b, "bytesBase64Encoded", "instances[0]."+k); m != "" {
				return m
			}
		}
	}
	params, _ := body["parameters"].(map[string]any)
	if a, ok := params["aspectRatio"].(string); ok && a != "16:9" && a != "9:16" {
		return "Aspect ratio " + a + " is not supported."
	}
	if d, ok := params["durationSeconds"]; ok {
		if f, isNum := d.(float64); !isNum || (f != 4 && f != 6 && f != 8) {
			return fmt.Sprintf("The duration %v seconds is not supported.", d)
		}
	}
	for _, k := range []string{"generateAudio", "seed"} {
		if _, ok := params[k]; ok {
			return "`" + k + "` isn't supported by this model on the Gemini API."
		}
	}
	return ""
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// checkModel checks what depends on the model, as go-genai
// (github.com/googleapis/go-genai@6fd3e65e, 2026-08-21, types.go and
// models.go, read 2026-11-23) and the Gemini API's Veo and image
// generation pages state it:
//   - imageConfig.imageSize ("1K", "2K", "4K") is for the Gemini 3 image
//     models; gemini-2.5-flash-image makes 1K only and has no size;
//   - Veo's resolution is "720p" or "1080p" (GenerateVideosConfig.Resolution:
//     "720p and 1080p are supported"; no 4k); 1080p videos are 8 seconds
//     long only;
//   - Imagen's :predict is not served by the Gemini API at all: go-genai
//     refuses GenerateImages outside Vertex AI ("only supported in Gemini
//     Enterprise Agent Platform mode"). The fake still answers it, for
//     operators' own routes and the engine's tests, but no default route
//     uses it.
func checkModel(model, method string, body map[string]any) string {
	switch method {
	case "generateContent":
		ic := asMap(asMap(body["generationConfig"])["imageConfig"])
		if _, sized := ic["imageSize"]; sized && strings.HasPrefix(model, "gemini-2.5") {
			return "Image size is not supported for " + model + "."
		}
	case "predictLongRunning":
		params := asMap(body["parameters"])
		res, _ := params["resolution"].(string)
		switch {
		case res == "" || res == "720p":
		case res == "1080p":
			if d, ok := params["durationSeconds"].(float64); ok && d != 8 {
				return fmt.Sprintf("Resolution %s requires a duration of 8 seconds.", res)
			}
		default:
			return "Resolution " + res + " is not supported by " + model + "."
		}
	}
	return ""
}

// contentAnswer is a GenerateContentResponse for body.
func contentAnswer(body map[string]any, fail string) map[string]any {
	usage := map[string]any{"promptTokenCount": 12, "candidatesTokenCount": 1290, "totalTokenCount": 1302}
	switch fail {
	case "content_policy":
		return map[string]any{"candidates": []any{map[string]any{"finishReason": "IMAGE_SAFETY", "index": 0,
			"finishMessage": "Unable to show the generated image. The image was filtered out because it violated Google's Generative AI Prohibited Use policy."}},
			"usageMetadata": usage, "modelVersion": "gemini-2.5-flash-image"}
	case "error":
		return map[string]any{"candidates": []any{map[string]any{"finishReason": "NO_IMAGE", "index": 0,
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "I could not make an image for this request."}}}}},
			"usageMetadata": usage}
	}
	gen, _ := body["generationConfig"].(map[string]any)
	ic, _ := gen["imageConfig"].(map[string]any)
	aspect, _ := ic["aspectRatio"].(string)
	w, h := dims(aspect)
	data, mime := fakeImage(w, h, "image/png")
	return map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP", "content": map[string]any{"role": "model", "parts": []any{
			map[string]any{"inlineData": map[string]any{"mimeType": mime, "data": base64.StdEncoding.EncodeToString(data)}},
		}}}},
		"usageMetadata": usage, "modelVersion": "gemini-2.5-flash-image", "responseId": "fakeResp1",
	}
}

// predictAnswer is Imagen's answer for body.
func predictAnswer(body map[string]any, fail string) map[string]any {
	params, _ := body["parameters"].(map[string]any)
	n := 1
	if f, ok := params["sampleCount"].(float64); ok {
		n = int(f)
	}
	rai, _ := params["includeRaiReason"].(bool)
	switch fail {
	case "content_policy":
		if !rai {
			return map[string]any{}
		}
		preds := make([]any, n)
		for i := range preds {
			preds[i] = map[string]any{"raiFilteredReason": "Your current safety filter threshold filtered out the generated image. " +
				"Learn more about our Responsible AI practices. Support codes: 58061214"}
		}
		return map[string]any{"predictions": preds}
	case "error":
		return map[string]any{}
	}
	mime := "image/png"
	if oo, ok := params["outputOptions"].(map[string]any); ok {
		if m, _ := oo["mimeType"].(string); m != "" {
			mime = m
		}
	}
	aspect, _ := params["aspectRatio"].(string)
	w, h := dims(aspect)
	preds := make([]any, n)
	for i := range preds {
		data, m := fakeImage(w, h, mime)
		preds[i] = map[string]any{"bytesBase64Encoded": base64.StdEncoding.EncodeToString(data), "mimeType": m}
	}
	return map[string]any{"predictions": preds}
}

// handleGet serves GET /v1beta/models/{model}/operations/{id}.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if status, ok := s.TakePollFailure(); ok {
		failStatus(w, status)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.ops["models/"+r.PathValue("model")+"/operations/"+r.PathValue("id")]
	if !ok {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	s.advance(o)
	writeJSON(w, o.json())
}

// handleCancel serves POST /v1beta/models/{model}/operations/{id}:cancel.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id, ok := strings.CutSuffix(r.PathValue("call"), ":cancel")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || !s.cancel("models/"+r.PathValue("model")+"/operations/"+id) {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	writeJSON(w, map[string]any{})
}

// handleFile serves a video (GET /v1beta/files/{id}:download?alt=media)
// or an uploaded file's metadata (GET /v1beta/files/{id}).
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if !strings.HasSuffix(r.PathValue("call"), ":download") {
		s.handleFileGet(w, r)
		return
	}
	s.mu.Lock()
	data, ok := s.files[r.PathValue("call")]
	s.mu.Unlock()
	if !ok {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "File not found.")
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Write(data)
}

// advance moves o one read along.
func (s *Server) advance(o *op) {
	if !o.due(s.Polls()) {
		return
	}
	res := func(v map[string]any) map[string]any {
		v["@type"] = "type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse"
		return map[string]any{"response": v}
	}
	switch o.failWith {
	case "content_policy":
		o.result = res(map[string]any{"generateVideoResponse": map[string]any{"raiMediaFilteredCount": 1,
			"raiMediaFilteredReasons": []any{"We encountered an issue with the audio for your prompt. Your prompt may violate our Responsible AI practices. Support codes: 29310472"}}})
	case "error":
		o.result = map[string]any{"error": map[string]any{"code": 13, "message": "Internal error encountered."}}
	default:
		id := o.name[strings.LastIndex(o.name, "/")+1:] + ":download"
		s.files[id] = upstreamtest.MP4()
		o.result = res(map[string]any{"generateVideoResponse": map[string]any{"generatedSamples": []any{
			map[string]any{"video": map[string]any{"uri": s.srv.URL + "/v1beta/files/" + id + "?alt=media"}},
		}}})
	}
}

// dims picks an image size for an aspect ratio.
func dims(aspect string) (int, int) {
	ws, hs, _ := strings.Cut(aspect, ":")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 128, 128
	}
	return 16 * w, 16 * h
}

func fakeImage(w, h int, mime string) ([]byte, string) {
	if mime == "image/jpeg" {
		return upstreamtest.Picture(w, h, 120, 80), mime
	}
	return upstreamtest.Picture(w, h, 120, 0), "image/png"
}
