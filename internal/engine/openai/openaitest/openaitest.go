// Package openaitest is an in-process fake of OpenAI's Images and Videos
// APIs for tests. It is written from OpenAI's documentation, not from the
// service's behaviour: the API reference for images (generate, edit:
// https://developers.openai.com/api/reference/resources/images/methods/generate)
// and videos (create, retrieve, content, delete:
// https://developers.openai.com/api/docs/guides/video-generation), the
// OpenAPI-derived field lists in docs.rs openai-client-base and hexdocs
// ex_openai (sizes; seconds "4", "8", "12" as strings), and the error shape
// {"error": {"message", "type", "param", "code"}}.
//
// It checks the bearer key as OpenAI does (401 invalid_api_key), checks
// the documented parameter values (400 invalid_value naming the param),
// answers images synchronously with b64_json, runs videos through queued,
// in_progress and completed (or failed), and serves video content as a
// small MP4 (an ftyp box, a free box and an mdat box). Two deliberate
// departures: a wrong key is echoed in full in the 401 message (OpenAI
// masks most of it) so tests can see that engines clean it, and a job
// failed with FailJobs("error") on the Images API answers 200 with an
// empty data list, the one synchronous answer that means the work failed.
//
// Compatible() turns it into a LocalAI-like server: no key, any WxH size,
// and images answered as `url` items served from the fake itself.
package openaitest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gen2brain/webp"

	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// Server is the fake. Its methods are safe for concurrent use.
//
// Its knobs are upstreamtest.Knobs': FailSubmits and FailPolls (video
// status reads) replace the failures still pending and answer with
// OpenAI's error body; Hold keeps videos in_progress and makes image
// requests wait for Release before they answer; SetPolls concerns videos;
// FailJobs("error") makes a video end failed and an image answer hold no
// images, FailJobs("content_policy") a video fail by moderation and an
// image request be refused by the safety system (400 moderation_blocked);
// DeleteOutputs makes every output file answer 404, as after OpenAI's
// retention period.
type Server struct {
	upstreamtest.Knobs

	srv *httptest.Server
	key string

	mu         sync.Mutex
	retired    map[string]bool
	compatible bool
	shrink     int
	lastFiles  map[string][]byte
	lastHeader http.Header
	videos     map[string]*video
	files      map[string][]byte // output files served under /files/
}

type video struct {
	ID        string         `json:"id"`
	Object    string         `json:"object"`
	CreatedAt int64          `json:"created_at"`
	Status    string         `json:"status"`
	Model     string         `json:"model"`
	Progress  int            `json:"progress"`
	Seconds   string         `json:"seconds"`
	Size      string         `json:"size"`
	ExpiresAt *int64         `json:"expires_at"`
	Error     map[string]any `json:"error"`

	polls  int
	ready  bool   // released: completes on its next poll
	reason string // FailJobs reason at creation
}

// New starts a fake, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	b := make([]byte, 12)
	rand.Read(b)
	s := &Server{key: "sk-test-" + hex.EncodeToString(b), videos: map[string]*video{}, files: map[string][]byte{}}
	s.ReplacePendingFailures()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/images/generations", s.images)
	mux.HandleFunc("POST /v1/images/edits", s.images)
	mux.HandleFunc("POST /v1/videos", s.createVideo)
	mux.HandleFunc("GET /v1/videos/{id}", s.getVideo)
	mux.HandleFunc("GET /v1/videos/{id}/content", s.videoContent)
	mux.HandleFunc("DELETE /v1/videos/{id}", s.deleteVideo)
	mux.HandleFunc("GET /files/{name}", s.file)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "invalid_request_error", "", "", "Invalid URL ("+r.Method+" "+r.URL.Path+")")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.Release() // held image requests must end before Close returns
		s.srv.Close()
	})
	return s
}

// URL returns the base URL to configure ("http://127.0.0.1:port/v1").
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Key returns the API key the fake accepts.
func (s *Server) Key() string { return s.key }

// ShrinkImages makes the images the fake returns n times smaller on each
// side than the size asked for (tests that send many requests, where the
// encoding of full-size images would dominate).
func (s *Server) ShrinkImages(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shrink = n
}

// Compatible makes the fake a LocalAI-like OpenAI-compatible server: no
// API key needed, any WxH size, images answered as `url` items.
func (s *Server) Compatible() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compatible = true
}

// LastFiles returns the file parts of the last accepted multipart submit.
func (s *Server) LastFiles() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastFiles
}

// LastHeader returns the header of the last accepted submit.
func (s *Server) LastHeader() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastHeader
}

// Release ends Hold: held jobs complete on their next poll.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.Release()
	for _, v := range s.videos {
		v.ready = true
	}
}

// apiError writes OpenAI's error body.
func apiError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	body := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		body["param"] = param
	}
	if code != "" {
		body["code"] = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": body})
}

// statusError writes the error OpenAI sends with a status.
func statusError(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		apiError(w, status, "requests", "", "rate_limit_exceeded", "Rate limit reached for requests per min. Please try again in 1s.")
	case status == http.StatusServiceUnavailable:
		apiError(w, status, "server_error", "", "", "The engine is currently overloaded, please try again later.")
	case status >= 500:
		apiError(w, status, "server_error", "", "", "The server had an error while processing your request. Sorry about that!")
	case status == http.StatusUnauthorized:
		apiError(w, status, "invalid_request_error", "", "invalid_api_key", "Incorrect API key provided.")
	default:
		apiError(w, status, "invalid_request_error", "", "", http.StatusText(status))
	}
}

// authorized checks the bearer key; compatible servers take any.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	compatible := s.compatible
	s.mu.Unlock()
	if compatible {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok || got == "":
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "", "",
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.")
		return false
	case got != s.key:
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key",
			"Incorrect API key provided: "+got+". You can find your API key at https://platform.openai.com/account/api-keys.")
		return false
	}
	return true
}

// takeSubmitFailure answers a pending FailSubmits failure.
func (s *Server) takeSubmitFailure(w http.ResponseWriter) bool {
	status, ok := s.TakeSubmitFailure()
	if ok {
		statusError(w, status)
	}
	return ok
}

// body reads a submit's JSON or multipart body into fields and files.
func readBody(r *http.Request) (map[string]any, map[string][]byte, map[string]string, error) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var m map[string]any
		d := json.NewDecoder(io.LimitReader(r.Body, 64<<20))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return nil, nil, nil, fmt.Errorf("We could not parse the JSON body of your request.")
		}
		return m, nil, nil, nil
	case "multipart/form-data":
		m, files, types := map[string]any{}, map[string][]byte{}, map[string]string{}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, nil, nil, fmt.Errorf("Could not parse multipart form.")
			}
			data, _ := io.ReadAll(io.LimitReader(p, 64<<20))
			if p.FileName() != "" {
				files[p.FormName()], types[p.FormName()] = data, p.Header.Get("Content-Type")
				m[p.FormName()] = map[string]any{"filename": p.FileName(), "contentType": p.Header.Get("Content-Type"), "size": len(data)}
				continue
			}
			m[p.FormName()] = string(data)
		}
		return m, files, types, nil
	}
	return nil, nil, nil, fmt.Errorf("Unsupported content type: %q.", ct)
}

// accept counts an accepted submit and reports whether to reset its
// connection instead of answering.
func (s *Server) accept(r *http.Request, fields map[string]any, files map[string][]byte) (reset bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastFiles, s.lastHeader = files, r.Header.Clone()
	return s.Accept(fields)
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

var (
	gptSizes    = []string{"1024x1024", "1536x1024", "1024x1536", "auto"}
	qualities   = []string{"low", "medium", "high", "auto"}
	formats     = []string{"png", "jpeg", "webp"}
	imageParams = []string{"model", "prompt", "n", "size", "quality", "output_format", "output_compression",
		"background", "moderation", "user", "image", "image[]", "mask", "input_fidelity", "partial_images", "stream"}
)

// listedModels are the models the fake's GET /v1/models lists: the image
// and video models it serves.
var listedModels = []string{"gpt-image-1", "gpt-image-1-mini", "gpt-image-1.5", "gpt-image-2", "gpt-image-2-2026-04-21",
	"gpt-image-2.5-flare", "gpt-image-2.5-sunburst", "sora-2", "sora-2-pro"}

// Retire takes a model off the fake's model list, as OpenAI does with a
// model it shuts down.
func (s *Server) Retire(model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired == nil {
		s.retired = map[string]bool{}
	}
	s.retired[model] = true
}

// models serves GET /v1/models as OpenAI documents it (openai-go
// model.go: a page {"object": "list", "data": [{"id", "object": "model",
// "created", "owned_by"}]}, every model the key may use, unpaginated).
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	data := []any{}
	for _, id := range listedModels {
		if !s.retired[id] {
			data = append(data, map[string]any{"id": id, "object": "model", "created": 1776729600, "owned_by": "system"})
		}
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// freeSizes reports whether a model takes free-form WIDTHxHEIGHT sizes:
// "For gpt-image-2 and gpt-image-2-2026-04-21, arbitrary resolutions are
// supported" (openai-go@4e5a07a6 image.go, ImageGenerateParams.Size and
// ImageEditParams.Size, read 2026-11-23). The gpt-image-2.5 variants,
// which no published type names yet, are taken to keep their
// predecessor's rule (docs/models.md).
func freeSizes(model string) bool {
	return model == "gpt-image-2" || strings.HasPrefix(model, "gpt-image-2-20") || strings.HasPrefix(model, "gpt-image-2.5-")
}

// freeSizeProblem checks a free-form size against the same text: "Width
// and height must both be divisible by 16 and the requested aspect ratio
// must be between 1:3 and 3:1 … the maximum supported resolution is
// 3840x2160."
func freeSizeProblem(w, h int) string {
	switch {
	case w%16 != 0 || h%16 != 0:
		return "Width and height must both be divisible by 16."
	case w > 3*h || h > 3*w:
		return "The aspect ratio must be between 1:3 and 3:1."
	case max(w, h) > 3840 || w*h > 3840*2160:
		return "The maximum supported resolution is 3840x2160."
	}
	return ""
}

// images serves /images/generations and /images/edits.
func (s *Server) images(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) || s.takeSubmitFailure(w) {
		return
	}
	fields, files, _, err := readBody(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
		return
	}
	s.mu.Lock()
	compatible := s.compatible
	s.mu.Unlock()
	edit := strings.HasSuffix(r.URL.Path, "/edits")
	bad := func(param, msg string) {
		apiError(w, http.StatusBadRequest, "invalid_request_error", param, "invalid_value", msg)
	}
	for k := range fields {
		if !slices.Contains(imageParams, k) && !(compatible && k == "response_format") {
			apiError(w, http.StatusBadRequest, "invalid_request_error", k, "unknown_parameter", "Unknown parameter: '"+k+"'.")
			return
		}
	}
	if strings.TrimSpace(str(fields["prompt"])) == "" {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "prompt", "missing_required_parameter", "Missing required parameter: 'prompt'.")
		return
	}
	if edit && files["image[]"] == nil && files["image"] == nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "image", "missing_required_parameter", "Missing required parameter: 'image'.")
		return
	}
	n := 1
	if v := str(fields["n"]); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 10 {
			bad("n", fmt.Sprintf("Invalid 'n': integer must be between 1 and 10, got %s.", v))
			return
		}
	}
	size := str(fields["size"])
	if size == "" || size == "auto" {
		size = "1024x1024"
	}
	width, height, ok := parseSize(size)
	if !compatible && freeSizes(str(fields["model"])) && ok {
		if msg := freeSizeProblem(width, height); msg != "" {
			bad("size", fmt.Sprintf("Invalid size '%s'. %s", size, msg))
			return
		}
	} else if !ok || (!compatible && !slices.Contains(gptSizes, str(fields["size"])) && str(fields["size"]) != "") {
		bad("size", fmt.Sprintf("Invalid value: '%s'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.", str(fields["size"])))
		return
	}
	if q := str(fields["quality"]); q != "" && !compatible && !slices.Contains(qualities, q) {
		bad("quality", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'low', 'medium', 'high', and 'auto'.", q))
		return
	}
	format := str(fields["output_format"])
	if format == "" {
		format = "png"
	}
	if !slices.Contains(formats, format) {
		bad("output_format", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'png', 'jpeg', and 'webp'.", format))
		return
	}

	reset := s.accept(r, fields, files)
	if reset {
		upstreamtest.ResetConn(w)
		return
	}
	reason := s.JobFailReason()
	if !s.WaitRelease(r.Context()) {
		return
	}
	switch reason {
	case "content_policy":
		apiError(w, http.StatusBadRequest, "image_generation_user_error", "", "moderation_blocked",
			"Your request was rejected by the safety system. If you believe this is an error, contact us.")
		return
	case "error":
		writeJSON(w, map[string]any{"created": time.Now().Unix(), "data": []any{}})
		return
	}
	data := make([]map[string]any, 0, n)
	for i := 0; i < n; i++ {
		s.mu.Lock()
		shrink := max(s.shrink, 1)
		s.mu.Unlock()
		img, err := encodeImage(width/shrink, height/shrink, i, format)
		if err != nil {
			statusError(w, http.StatusInternalServerError)
			return
		}
		if compatible {
			name := randomID("img_") + "." + format
			s.mu.Lock()
			s.files[name] = img
			s.mu.Unlock()
			data = append(data, map[string]any{"url": s.srv.URL + "/files/" + name})
		} else {
			data = append(data, map[string]any{"b64_json": base64.StdEncoding.EncodeToString(img)})
		}
	}
	writeJSON(w, map[string]any{"created": time.Now().Unix(), "data": data,
		"usage": map[string]any{"input_tokens": 50, "output_tokens": 4160 * n, "total_tokens": 50 + 4160*n}})
}

var videoSizes = map[string][]string{
	"sora-2":     {"1280x720", "720x1280"},
	"sora-2-pro": {"1280x720", "720x1280", "1792x1024", "1024x1792"},
}

// createVideo serves POST /videos.
func (s *Server) createVideo(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) || s.takeSubmitFailure(w) {
		return
	}
	fields, files, _, err := readBody(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
		return
	}
	bad := func(param, msg string) {
		apiError(w, http.StatusBadRequest, "invalid_request_error", param, "invalid_value", msg)
	}
	for k := range fields {
		if !slices.Contains([]string{"model", "prompt", "size", "seconds", "input_reference"}, k) {
			apiError(w, http.StatusBadRequest, "invalid_request_error", k, "unknown_parameter", "Unknown parameter: '"+k+"'.")
			return
		}
	}
	if strings.TrimSpace(str(fields["prompt"])) == "" {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "prompt", "missing_required_parameter", "Missing required parameter: 'prompt'.")
		return
	}
	model := str(fields["model"])
	if model == "" {
		model = "sora-2"
	}
	sizes, ok := videoSizes[model]
	if !ok {
		bad("model", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'sora-2' and 'sora-2-pro'.", model))
		return
	}
	size := str(fields["size"])
	if size == "" {
		size = "720x1280"
	}
	if !slices.Contains(sizes, size) {
		bad("size", fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", size, strings.Join(sizes, ", ")))
		return
	}
	if v, isNum := fields["seconds"].(json.Number); isNum {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "seconds", "invalid_type",
			"Invalid type for 'seconds': expected one of '4', '8', or '12', but got an integer instead ("+v.String()+").")
		return
	}
	seconds := str(fields["seconds"])
	if seconds == "" {
		seconds = "4"
	}
	if !slices.Contains([]string{"4", "8", "12"}, seconds) {
		bad("seconds", fmt.Sprintf("Invalid value: '%s'. Supported values are: '4', '8', and '12'.", seconds))
		return
	}
	if _, ok := fields["input_reference"].(string); ok {
		bad("input_reference", "input_reference must be a file upload.")
		return
	}

	v := &video{ID: randomID("video_"), Object: "video", CreatedAt: time.Now().Unix(), Status: "queued",
		Model: model, Seconds: seconds, Size: size}
	s.mu.Lock()
	v.reason = s.JobFailReason()
	s.videos[v.ID] = v
	s.mu.Unlock()
	if s.accept(r, fields, files) {
		upstreamtest.ResetConn(w)
		return
	}
	s.mu.Lock()
	body, _ := json.Marshal(v)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// getVideo serves GET /videos/{id}: one status poll.
func (s *Server) getVideo(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if status, ok := s.TakePollFailure(); ok {
		statusError(w, status)
		return
	}
	s.mu.Lock()
	v := s.videos[r.PathValue("id")]
	if v == nil {
		s.mu.Unlock()
		apiError(w, http.StatusNotFound, "invalid_request_error", "", "", "Video with id '"+r.PathValue("id")+"' not found.")
		return
	}
	if v.Status == "queued" || v.Status == "in_progress" {
		v.polls++
		polls := s.Polls()
		switch {
		case s.Held():
			v.Status, v.Progress = "in_progress", min(90, v.polls*10)
		case v.ready || v.polls >= polls:
			s.finish(v)
		default:
			v.Status, v.Progress = "in_progress", min(90, 100*v.polls/polls)
		}
	}
	body, _ := json.Marshal(v)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// finish ends a video as its FailJobs reason says; s.mu is held.
func (s *Server) finish(v *video) {
	switch v.reason {
	case "content_policy":
		v.Status = "failed"
		v.Error = map[string]any{"code": "moderation_blocked",
			"message": "Your request was blocked by our moderation system."}
	case "error":
		v.Status = "failed"
		v.Error = map[string]any{"code": "video_generation_failed", "message": "Video generation failed."}
	default:
		v.Status, v.Progress = "completed", 100
		exp := time.Now().Add(time.Hour).Unix()
		v.ExpiresAt = &exp
	}
}

// videoContent serves GET /videos/{id}/content.
func (s *Server) videoContent(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	v, deleted := s.videos[r.PathValue("id")], s.Deleted()
	s.mu.Unlock()
	switch {
	case v == nil || deleted:
		apiError(w, http.StatusNotFound, "invalid_request_error", "", "", "Video with id '"+r.PathValue("id")+"' not found.")
	case v.Status != "completed":
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "", "Video is not ready yet, use GET /v1/videos/{video_id} to check status.")
	default:
		w.Header().Set("Content-Type", "video/mp4")
		w.Write(MP4())
	}
}

// deleteVideo serves DELETE /videos/{id}.
func (s *Server) deleteVideo(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	_, ok := s.videos[id]
	delete(s.videos, id)
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "invalid_request_error", "", "", "Video with id '"+id+"' not found.")
		return
	}
	writeJSON(w, map[string]any{"id": id, "object": "video.deleted", "deleted": true})
}

// file serves an image output of the compatible mode.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, ok := s.files[r.PathValue("name")]
	deleted := s.Deleted()
	s.mu.Unlock()
	if !ok || deleted {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", http.DetectContentType(data))
	w.Write(data)
}

func writeJSON(w http.ResponseWriter, v any) { upstreamtest.WriteJSON(w, http.StatusOK, v) }

func randomID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func parseSize(s string) (w, h int, ok bool) {
	a, b, found := strings.Cut(s, "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	return w, h, found && err1 == nil && err2 == nil && w >= 64 && h >= 64 && w <= 4096 && h <= 4096
}

// encodeImage paints a w×h gradient, different for each index, in format.
func encodeImage(w, h, index int, format string) ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < w; x++ {
			copy(row[4*x:], []byte{uint8(x * 255 / w), uint8(y * 255 / h), uint8(index * 60), 255})
		}
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
	case "webp":
		err = webp.Encode(&buf, img, webp.Options{Quality: 80})
	default:
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	return buf.Bytes(), err
}

// MP4 returns the small MP4-looking file the fake serves as a video: an
// ftyp box, a free box and an mdat box.
func MP4() []byte {
	box := func(typ string, payload []byte) []byte {
		b := make([]byte, 8, 8+len(payload))
		binary.BigEndian.PutUint32(b, uint32(8+len(payload)))
		copy(b[4:], typ)
		return append(b, payload...)
	}
	var out []byte
	out = append(out, box("ftyp", []byte("isom\x00\x00\x02\x00isomiso2avc1mp41"))...)
	out = append(out, box("free", nil)...)
	out = append(out, box("mdat", bytes.Repeat([]byte{0}, 64))...)
	return out
}
