// Package comfyuitest is a fake ComfyUI server for tests, written from
// ComfyUI's documented server protocol, not from running it: the routes of
// server.py as described in the ComfyUI server docs and the api_schemas
// README of comfyanonymous/ComfyUI (POST /prompt with a client-chosen
// prompt_id, GET /history/{id}, GET /queue, GET /view, POST /upload/image,
// POST /interrupt with {"prompt_id"}, POST /queue {"delete"}), the answer
// shapes of execution.validate_prompt ({"error": {type, message, details,
// extra_info}, "node_errors": {...}} with 400) and of the history entries
// PromptQueue.task_done writes ({"prompt", "outputs", "status":
// {status_str, completed, messages}}, execution_error and
// execution_interrupted messages), and comfy_api's PreviewVideo, which
// lists SaveVideo's file under "images" with "animated": [true].
//
// ComfyUI itself has no authentication; the fake stands for a server
// behind an authenticating reverse proxy, which answers 401 (plain text)
// without "Authorization: Bearer <Key()>". It validates every prompt (each
// node's class_type is one it knows, required inputs are present, links
// name existing nodes and outputs, LoadImage names an uploaded file, there
// is an output node) and serves real PNG images (sized from the graph's
// latent, at 1/8 scale) and small MP4 files (an ftyp box) from /view.
package comfyuitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // reads uploaded inputs' sizes
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// nodeClass is what the fake knows of a ComfyUI node type: its required
// inputs, how many outputs it has, and whether it is an output node.
type nodeClass struct {
	required []string
	outputs  int
	output   bool
}

// classes are the core node types the gengate templates use, plus a few
// common ones, with their required inputs as in ComfyUI's INPUT_TYPES.
var classes = map[string]nodeClass{
	"CheckpointLoaderSimple":  {required: []string{"ckpt_name"}, outputs: 3},
	"UNETLoader":              {required: []string{"unet_name", "weight_dtype"}, outputs: 1},
	"DualCLIPLoader":          {required: []string{"clip_name1", "clip_name2", "type"}, outputs: 1},
	"TripleCLIPLoader":        {required: []string{"clip_name1", "clip_name2", "clip_name3"}, outputs: 1},
	"CLIPLoader":              {required: []string{"clip_name", "type"}, outputs: 1},
	"VAELoader":               {required: []string{"vae_name"}, outputs: 1},
	"CLIPTextEncode":          {required: []string{"text", "clip"}, outputs: 1},
	"ConditioningZeroOut":     {required: []string{"conditioning"}, outputs: 1},
	"FluxGuidance":            {required: []string{"conditioning", "guidance"}, outputs: 1},
	"EmptyLatentImage":        {required: []string{"width", "height", "batch_size"}, outputs: 1},
	"EmptySD3LatentImage":     {required: []string{"width", "height", "batch_size"}, outputs: 1},
	"EmptyHunyuanLatentVideo": {required: []string{"width", "height", "length", "batch_size"}, outputs: 1},
	"ModelSamplingAuraFlow":   {required: []string{"model", "shift"}, outputs: 1},
	"ModelSamplingSD3":        {required: []string{"model", "shift"}, outputs: 1},
	"CFGNorm":                 {required: []string{"model", "strength"}, outputs: 1},
	"KSampler": {required: []string{"model", "seed", "steps", "cfg", "sampler_name", "scheduler", "positive",
		"negative", "latent_image", "denoise"}, outputs: 1},
	"VAEDecode":               {required: []string{"samples", "vae"}, outputs: 1},
	"VAEEncode":               {required: []string{"pixels", "vae"}, outputs: 1},
	"LoadImage":               {required: []string{"image"}, outputs: 2},
	"ImageScaleToTotalPixels": {required: []string{"image", "upscale_method", "megapixels"}, outputs: 1},
	"TextEncodeQwenImageEdit": {required: []string{"clip", "prompt"}, outputs: 1},
	"CreateVideo":             {required: []string{"images", "fps"}, outputs: 1},
	"SaveImage":               {required: []string{"images", "filename_prefix"}, output: true},
	"PreviewImage":            {required: []string{"images"}, output: true},
	"SaveVideo":               {required: []string{"video", "filename_prefix", "format", "codec"}, output: true},
	"SaveWEBM":                {required: []string{"images", "filename_prefix", "codec", "fps", "crf"}, output: true},
}

// Server is a fake ComfyUI server.
//
// Its knobs are upstreamtest.Knobs': FailSubmits makes POST /prompt answer
// status, queuing nothing (400 is ComfyUI's validation failure body, 429 a
// proxy's rate limit with Retry-After: 1, 5xx aiohttp's or a proxy's error
// page); FailPolls concerns status reads (GET /history/{id} or GET
// /queue); Hold keeps prompts queued from now on queued or running until
// Release, after which they finish on their next history read;
// FailJobs("error") makes prompts fail with a node exception (CUDA out of
// memory in KSampler), FailJobs("content_policy") with a safety-checker
// node's exception saying NSFW content was detected; DeleteOutputs deletes
// every output file: /view answers 404 from now on.
type Server struct {
	upstreamtest.Knobs

	srv *httptest.Server
	key string

	mu      sync.Mutex
	jobs    map[string]*job
	order   []string // prompt ids in queue order
	history map[string]map[string]any
	files   map[string][]byte // "subfolder/filename" → bytes
	uploads map[string][]byte
	// uploadCount counts accepted uploads of every type.
	uploadCount int
	number      int
	drop        bool
	interrupts  int
	deletes     int
	removed     map[string]bool // node types RemoveNode took away
}

type job struct {
	id       string
	number   int
	prompt   map[string]any
	extra    map[string]any
	outputs  []string
	polls    int
	held     bool
	failWith string
}

// New starts a fake ComfyUI server, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{key: "comfy-proxy-token-5e1f0c9a7b", jobs: map[string]*job{}, history: map[string]map[string]any{},
		files: map[string][]byte{}, uploads: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /prompt", s.handlePrompt)
	mux.HandleFunc("GET /history/{id}", s.handleHistory)
	mux.HandleFunc("GET /queue", s.handleQueue)
	mux.HandleFunc("POST /queue", s.handleQueueDelete)
	mux.HandleFunc("POST /interrupt", s.handleInterrupt)
	mux.HandleFunc("POST /upload/image", s.handleUpload)
	mux.HandleFunc("GET /view", s.handleView)
	mux.HandleFunc("GET /object_info", s.handleObjectInfo)
	mux.HandleFunc("GET /object_info/{node_class}", s.handleObjectInfo)
	s.srv = httptest.NewServer(s.auth(mux))
	t.Cleanup(s.srv.Close)
	return s
}

// RemoveNode takes a node type off the server, as uninstalling the custom
// node pack that has it, or a ComfyUI older than the node, does: it leaves
// /object_info and a prompt using it fails validation.
func (s *Server) RemoveNode(class string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed == nil {
		s.removed = map[string]bool{}
	}
	s.removed[class] = true
}

// handleObjectInfo serves GET /object_info (every node type) and GET
// /object_info/{node_class} (that one, or {} when the server lacks it), as
// server.py's get_object_info and get_object_info_node do: each node's
// node_info, of which the fake gives input.required, output, output_node,
// name, display_name, description, category and deprecated.
func (s *Server) handleObjectInfo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for name, c := range classes {
		if s.removed[name] || (r.PathValue("node_class") != "" && r.PathValue("node_class") != name) {
			continue
		}
		required := map[string]any{}
		for _, in := range c.required {
			required[in] = []any{"*"}
		}
		outputs := make([]any, c.outputs)
		for i := range outputs {
			outputs[i] = "*"
		}
		out[name] = map[string]any{"input": map[string]any{"required": required}, "output": outputs,
			"output_node": c.output, "name": name, "display_name": name, "description": "", "category": "core",
			"deprecated": false, "experimental": false}
	}
	writeJSON(w, http.StatusOK, out)
}

// URL returns the base URL to configure (COMFYUI_URL).
func (s *Server) URL() string { return s.srv.URL }

// Key returns the bearer token the fake's proxy accepts.
func (s *Server) Key() string { return s.key }

// Upload returns the bytes of the uploaded input file name, or nil.
func (s *Server) Upload(name string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uploads[name]
}

// Interrupts counts the prompts stopped by POST /interrupt.
func (s *Server) Interrupts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interrupts
}

// Deletes counts the prompts deleted from the queue.
func (s *Server) Deletes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deletes
}

// Release lets held prompts finish on their next history read.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.Release()
	for _, j := range s.jobs {
		if j.held {
			j.held, j.polls = false, 1<<30
		}
	}
}

// DropNextSubmit makes the next POST /prompt reset the connection after
// reading the request but before queuing anything (a proxy that lost it).
func (s *Server) DropNextSubmit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop = true
}

// DeleteOutputs deletes every output file: /view answers 404 from now on.
func (s *Server) DeleteOutputs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.DeleteOutputs()
	s.files = map[string][]byte{}
}

// Restart forgets the queue and the history, as a ComfyUI restart does.
func (s *Server) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs, s.order, s.history = map[string]*job{}, nil, map[string]map[string]any{}
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.key {
			w.Header().Set("WWW-Authenticate", `Bearer realm="comfyui"`)
			http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	upstreamtest.WriteJSON(w, status, v)
}

func failStatus(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusBadRequest:
		writeJSON(w, status, map[string]any{
			"error": map[string]any{"type": "prompt_outputs_failed_validation", "message": "Prompt outputs failed validation",
				"details": "Custom validation failed for node: image - Invalid image file: missing.png", "extra_info": map[string]any{}},
			"node_errors": map[string]any{"4": map[string]any{"class_type": "LoadImage", "dependent_outputs": []string{"13"},
				"errors": []any{map[string]any{"type": "custom_validation_failed", "message": "Custom validation failed for node",
					"details": "image - Invalid image file: missing.png", "extra_info": map[string]any{"input_name": "image"}}}}},
		})
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "429 Too Many Requests", status)
	case status == http.StatusInternalServerError:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, "500 Internal Server Error\n\nServer got itself in trouble")
	default:
		http.Error(w, fmt.Sprintf("%d %s", status, http.StatusText(status)), status)
	}
}

func validationError(w http.ResponseWriter, typ, message, details string, nodeErrors map[string]any) {
	if nodeErrors == nil {
		nodeErrors = map[string]any{}
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{
		"error":       map[string]any{"type": typ, "message": message, "details": details, "extra_info": map[string]any{}},
		"node_errors": nodeErrors,
	})
}

func (s *Server) handlePrompt(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&body); err != nil {
		http.Error(w, "500 Internal Server Error", http.StatusInternalServerError) // aiohttp: request.json() raised
		return
	}
	prompt, ok := body["prompt"].(map[string]any)
	if !ok {
		validationError(w, "no_prompt", "No prompt provided", "No prompt provided", nil)
		return
	}
	if status, ok := s.TakeSubmitFailure(); ok {
		failStatus(w, status)
		return
	}
	s.mu.Lock()
	if s.drop {
		s.drop = false
		s.mu.Unlock()
		upstreamtest.ResetConn(w)
		return
	}
	outputs, errType, errMsg, details, nodeErrors := s.validate(prompt)
	if errType != "" {
		s.mu.Unlock()
		validationError(w, errType, errMsg, details, nodeErrors)
		return
	}
	id, _ := body["prompt_id"].(string)
	if id == "" {
		id = fmt.Sprintf("%08x-0000-4000-8000-%012x", s.number, time.Now().UnixNano()&0xffffffffffff)
	}
	extra := map[string]any{}
	if c, ok := body["client_id"].(string); ok {
		extra["client_id"] = c
	}
	j := &job{id: id, number: s.number, prompt: prompt, extra: extra, outputs: outputs, held: s.Held(), failWith: s.JobFailReason()}
	s.number++
	if _, dup := s.jobs[id]; !dup {
		s.order = append(s.order, id)
	}
	s.jobs[id] = j
	delete(s.history, id)
	reset := s.Accept(body)
	number := j.number
	s.mu.Unlock()

	if reset {
		upstreamtest.ResetConn(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"prompt_id": id, "number": number, "node_errors": map[string]any{}})
}

// validate checks a prompt as execution.validate_prompt does, in brief.
func (s *Server) validate(prompt map[string]any) (outputs []string, typ, msg, details string, nodeErrors map[string]any) {
	ids := make([]string, 0, len(prompt))
	for id := range prompt {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	nodeErrors = map[string]any{}
	for _, id := range ids {
		node, _ := prompt[id].(map[string]any)
		ct, ok := node["class_type"].(string)
		if !ok {
			return nil, "invalid_prompt", "Cannot execute because a node is missing the class_type property.", "Node ID '#" + id + "'", nil
		}
		cls, ok := classes[ct]
		if !ok || s.removed[ct] {
			return nil, "invalid_prompt", "Cannot execute because node " + ct + " does not exist.", "Node ID '#" + id + "'", nil
		}
		if cls.output {
			outputs = append(outputs, id)
		}
		inputs, _ := node["inputs"].(map[string]any)
		var errs []any
		for _, name := range cls.required {
			if _, ok := inputs[name]; !ok {
				errs = append(errs, map[string]any{"type": "required_input_missing", "message": "Required input is missing",
					"details": name, "extra_info": map[string]any{"input_name": name}})
			}
		}
		for name, v := range inputs {
			link, ok := v.([]any)
			if !ok || len(link) != 2 {
				continue
			}
			from, _ := link[0].(string)
			idx, _ := link[1].(float64)
			src, _ := prompt[from].(map[string]any)
			srcType, _ := src["class_type"].(string)
			if src == nil || int(idx) < 0 || int(idx) >= classes[srcType].outputs {
				errs = append(errs, map[string]any{"type": "exception_during_inner_validation", "message": "Exception when validating inner node",
					"details": fmt.Sprintf("'%s'", from), "extra_info": map[string]any{"input_name": name, "linked_node": link}})
			}
		}
		if ct == "LoadImage" {
			name, _ := inputs["image"].(string)
			if _, ok := s.uploads[name]; !ok {
				errs = append(errs, map[string]any{"type": "custom_validation_failed", "message": "Custom validation failed for node",
					"details": "image - Invalid image file: " + name, "extra_info": map[string]any{"input_name": "image"}})
			}
		}
		for name, v := range inputs {
			if s, ok := v.(string); ok && strings.HasPrefix(s, "{{") {
				errs = append(errs, map[string]any{"type": "invalid_input_type", "message": "Failed to convert an input value to a INT value",
					"details": name + ", " + s, "extra_info": map[string]any{"input_name": name}})
			}
		}
		if len(errs) > 0 {
			nodeErrors[id] = map[string]any{"errors": errs, "dependent_outputs": []string{}, "class_type": ct}
		}
	}
	if len(outputs) == 0 {
		return nil, "prompt_no_outputs", "Prompt has no outputs", "", nil
	}
	if len(nodeErrors) > 0 {
		return nil, "prompt_outputs_failed_validation", "Prompt outputs failed validation", "", nodeErrors
	}
	return outputs, "", "", "", nil
}

// pollFailure answers a failing status read, if one is due.
func (s *Server) pollFailure(w http.ResponseWriter) bool {
	status, ok := s.TakePollFailure()
	if ok {
		failStatus(w, status)
	}
	return ok
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	if s.pollFailure(w) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	if j, ok := s.jobs[id]; ok {
		s.advance(j)
	}
	if h, ok := s.history[id]; ok {
		writeJSON(w, http.StatusOK, map[string]any{id: h})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Server) item(j *job) []any {
	return []any{j.number, j.id, j.prompt, j.extra, j.outputs}
}

func (s *Server) handleQueue(w http.ResponseWriter, r *http.Request) {
	if s.pollFailure(w) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	running, pending := []any{}, []any{}
	for _, id := range s.order {
		j := s.jobs[id]
		if j.polls > 0 {
			running = append(running, s.item(j))
		} else {
			pending = append(pending, s.item(j))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue_running": running, "queue_pending": pending})
}

func (s *Server) handleQueueDelete(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Delete []string `json:"delete"`
		Clear  bool     `json:"clear"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range body.Delete {
		if j, ok := s.jobs[id]; ok && j.polls == 0 {
			s.remove(id)
			s.deletes++
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleInterrupt(w http.ResponseWriter, r *http.Request) {
	var body struct {
		PromptID string `json:"prompt_id"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range append([]string(nil), s.order...) {
		j := s.jobs[id]
		if j.polls > 0 && (body.PromptID == "" || body.PromptID == id) {
			s.finish(j, "interrupted")
			s.interrupts++
		}
	}
	w.WriteHeader(http.StatusOK)
}

// MaxUploadSize is ComfyUI's default --max-upload-size (100 MB), the
// aiohttp client_max_size of its server: a larger request body is 413.
const MaxUploadSize = 100 << 20

// handleUpload is server.py's upload_image/image_upload (read at
// comfyanonymous/ComfyUI@005f3ba4, 2026-11-23): the form's "image" must
// be a file part with a filename (else 400; a plain "image" field has no
// .file: 500), "type" is input (default), temp or output (anything else
// leaves type_dir unset: 500), "subfolder" must stay inside that
// directory (else 400), and "overwrite" is "true" or "1" to replace a
// file of the same name; otherwise an identical file keeps its name and a
// different one is saved as "name (1).ext". The answer is {"name",
// "subfolder", "type"}. Only uploads of type input are what LoadImage
// reads.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > MaxUploadSize {
		http.Error(w, "413: Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadSize)
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	internal := func() {
		http.Error(w, "500 Internal Server Error\n\nServer got itself in trouble", http.StatusInternalServerError)
	}
	typ := "input"
	if vs, ok := r.MultipartForm.Value["type"]; ok {
		typ = vs[0]
	}
	if typ != "input" && typ != "temp" && typ != "output" {
		internal() // get_dir_by_type leaves type_dir unbound
		return
	}
	f, hdr, err := r.FormFile("image")
	if err != nil {
		if _, plain := r.MultipartForm.Value["image"]; plain {
			internal() // a str has no .file
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if hdr.Filename == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	data, _ := io.ReadAll(f)
	name := hdr.Filename // multipart has already kept only its base name
	subfolder := r.FormValue("subfolder")
	// os.path.commonpath((upload_dir, filepath)) != upload_dir: 400.
	if sub := path.Clean(subfolder); strings.HasPrefix(sub, "/") || sub == ".." || strings.HasPrefix(sub, "../") || name == "." || name == ".." {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	key := strings.TrimPrefix(path.Clean(subfolder+"/"+name), "/")
	s.mu.Lock()
	store := s.uploads
	if typ != "input" {
		store = map[string][]byte{} // temp and output uploads are not inputs
	}
	if ow := r.FormValue("overwrite"); ow != "true" && ow != "1" {
		for i := 1; store[key] != nil && !bytes.Equal(store[key], data); i++ {
			ext := path.Ext(hdr.Filename)
			name = fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(hdr.Filename, ext), i, ext)
			key = strings.TrimPrefix(path.Clean(subfolder+"/"+name), "/")
		}
	}
	store[key] = data
	s.uploadCount++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "subfolder": subfolder, "type": typ})
}

// UploadCount returns how many uploads the fake accepted.
func (s *Server) UploadCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uploadCount
}

func (s *Server) handleView(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("filename")
	if name == "" || name[0] == '/' || strings.Contains(name, "..") {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if t := q.Get("type"); t != "" && t != "output" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	s.mu.Lock()
	data, ok := s.files[strings.TrimPrefix(q.Get("subfolder")+"/"+name, "/")]
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("filename=%q", name))
	w.Header().Set("Content-Type", http.DetectContentType(data))
	w.Write(data)
}

func (s *Server) remove(id string) {
	delete(s.jobs, id)
	for i, x := range s.order {
		if x == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// advance moves j one history read along: queued → running → finished.
func (s *Server) advance(j *job) {
	j.polls++
	if j.held || j.polls < s.Polls() {
		return
	}
	s.finish(j, j.failWith)
}

// finish moves j to the history, as PromptQueue.task_done does.
func (s *Server) finish(j *job, how string) {
	s.remove(j.id)
	now := time.Now().UnixMilli()
	msgs := []any{
		[]any{"execution_start", map[string]any{"prompt_id": j.id, "timestamp": now}},
		[]any{"execution_cached", map[string]any{"nodes": []string{}, "prompt_id": j.id, "timestamp": now}},
	}
	entry := map[string]any{"prompt": s.item(j), "outputs": map[string]any{},
		"meta": map[string]any{}}
	fail := func(event, node, nodeType string, data map[string]any) {
		data["prompt_id"], data["node_id"], data["node_type"], data["executed"], data["timestamp"] = j.id, node, nodeType, []string{}, now
		entry["status"] = map[string]any{"status_str": "error", "completed": false, "messages": append(msgs, []any{event, data})}
	}
	sampler := firstOfClass(j.prompt, "KSampler")
	switch how {
	case "interrupted":
		fail("execution_interrupted", sampler, "KSampler", map[string]any{})
	case "error":
		fail("execution_error", sampler, "KSampler", map[string]any{
			"exception_message": "CUDA out of memory. Tried to allocate 2.25 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.02 GiB is free.\n",
			"exception_type":    "torch.OutOfMemoryError", "traceback": []string{"  File \"execution.py\", line 496, in execute\n"},
			"current_inputs": map[string]any{}, "current_outputs": []string{}})
	case "content_policy":
		fail("execution_error", "99", "SafetyChecker", map[string]any{
			"exception_message": "NSFW content detected by the safety checker: the image was blocked.",
			"exception_type":    "Exception", "traceback": []string{}, "current_inputs": map[string]any{}, "current_outputs": []string{}})
	default:
		entry["outputs"] = s.render(j)
		entry["status"] = map[string]any{"status_str": "success", "completed": true,
			"messages": append(msgs, []any{"execution_success", map[string]any{"prompt_id": j.id, "timestamp": now}})}
	}
	s.history[j.id] = entry
}

func firstOfClass(prompt map[string]any, class string) string {
	ids := make([]string, 0, len(prompt))
	for id := range prompt {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if n, _ := prompt[id].(map[string]any); n["class_type"] == class {
			return id
		}
	}
	return ""
}

// render writes the files of j's output nodes and returns the history
// "outputs" object.
func (s *Server) render(j *job) map[string]any {
	out := map[string]any{}
	for _, id := range j.outputs {
		node := j.prompt[id].(map[string]any)
		inputs, _ := node["inputs"].(map[string]any)
		prefix, _ := inputs["filename_prefix"].(string)
		if prefix == "" {
			prefix = "ComfyUI"
		}
		sub, base := path.Split(prefix)
		sub = strings.Trim(sub, "/")
		save := func(ext string, i int, data []byte) map[string]any {
			name := fmt.Sprintf("%s_%05d_.%s", base, i+1, ext)
			s.files[strings.TrimPrefix(sub+"/"+name, "/")] = data
			return map[string]any{"filename": name, "subfolder": sub, "type": "output"}
		}
		switch node["class_type"] {
		case "SaveVideo":
			out[id] = map[string]any{"images": []any{save("mp4", 0, upstreamtest.MP4())}, "animated": []bool{true}}
		case "SaveWEBM":
			out[id] = map[string]any{"images": []any{save("webm", 0, fakeWEBM())}, "animated": []bool{true}}
		case "SaveImage", "PreviewImage":
			w, h, n := s.size(j.prompt, id)
			files := make([]any, n)
			for i := range n {
				files[i] = save("png", i, upstreamtest.Picture(w, h, uint8(60*i), 0))
			}
			out[id] = map[string]any{"images": files}
		}
	}
	return out
}

// size finds the image size and batch size upstream of node id: a latent
// node's width, height and batch_size (at 1/8 scale), or an uploaded
// image's size.
func (s *Server) size(prompt map[string]any, id string) (w, h, n int) {
	seen := map[string]bool{}
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if seen[cur] {
			continue
		}
		seen[cur] = true
		node, _ := prompt[cur].(map[string]any)
		inputs, _ := node["inputs"].(map[string]any)
		wf, ok1 := inputs["width"].(float64)
		hf, ok2 := inputs["height"].(float64)
		if ok1 && ok2 {
			b, _ := inputs["batch_size"].(float64)
			return max(int(wf)/8, 1), max(int(hf)/8, 1), max(int(b), 1)
		}
		if node["class_type"] == "LoadImage" {
			name, _ := inputs["image"].(string)
			if cfg, _, err := image.DecodeConfig(bytes.NewReader(s.uploads[name])); err == nil {
				return cfg.Width, cfg.Height, 1
			}
		}
		keys := make([]string, 0, len(inputs))
		for k := range inputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if link, ok := inputs[k].([]any); ok && len(link) == 2 {
				if from, ok := link[0].(string); ok {
					queue = append(queue, from)
				}
			}
		}
	}
	return 64, 64, 1
}

// fakeWEBM is an EBML header naming the webm doc type.
func fakeWEBM() []byte {
	return []byte{0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84, 'w', 'e', 'b', 'm'}
}
