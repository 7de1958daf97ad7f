// Package replicatetest is a fake of Replicate's predictions API for tests,
// written from Replicate's documentation, not from its code: the HTTP API
// reference (replicate/skills HTTP_API.md and PREDICTIONS.md, and
// https://replicate.com/docs/topics/predictions/create-a-prediction) for the
// endpoints, the prediction object, its states and the
// {"title","detail","status"} error bodies; the data-retention page
// (https://replicate.com/docs/topics/predictions/data-retention) for
// deleted outputs and data_removed; and the models' API pages for output
// shapes (a list of URLs for models with num_outputs, else one URL).
//
// It serves POST /v1/models/{owner}/{name}/predictions, POST
// /v1/predictions (with "version"), GET /v1/predictions (the list, newest
// first), GET /v1/predictions/{id}, POST /v1/predictions/{id}/cancel and
// the files API (POST /v1/files, GET /v1/files/{id}), checks "Authorization: Bearer <key>" and
// serves outputs from its own /files/ URLs: real PNG or JPEG images of the
// requested aspect ratio, and small MP4 files (an ftyp box).
//
// Like Replicate, it fetches every http(s) URL in a prediction's input when
// the prediction starts (at its first status read here), before the model
// runs: Cog downloads URL file inputs in its worker before predict and a
// download that fails fails the prediction with the exception's text
// (replicate/cog@6110c912 crates/coglet-python/src/input.rs and
// predictor.rs; python/cog/types.py GETs with requests and
// raise_for_status, so a 404 reads "404 Client Error: Not Found for url:
// …"). Fetched returns what it got. data: URIs are decoded, not fetched.
package replicatetest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// Server is a fake Replicate API.
//
// Its knobs are upstreamtest.Knobs': FailSubmits and FailPolls answer with
// Replicate's error body (429 carries Retry-After: 1);
// FailSubmitsAfterCreate creates the prediction and then answers with the
// error; Hold keeps
// predictions created from now on processing until Release, after which
// they complete on their next poll; FailJobs("error") makes predictions
// fail with a model error, FailJobs("content_policy") with the safety
// checker's E005 failure; DeleteOutputs deletes every output served so
// far, as Replicate does an hour after a prediction: the files answer 404
// and the predictions say data_removed.
type Server struct {
	upstreamtest.Knobs

	srv *httptest.Server
	key string

	mu      sync.Mutex
	preds   map[string]*pred
	files   map[string][]byte
	fetched map[string][]byte
	seq     int
	cancels int
	lists   int
	creates int
	// uploads are the files of the files API by id; largestDataURI is
	// the largest file a prediction's input carried as a data: URI.
	uploads        map[string]upload
	largestDataURI int
	// retired are the models Replicate no longer serves (Retire).
	retired map[string]bool
}

type upload struct {
	name, contentType string
	data              []byte
	created           time.Time
}

type pred struct {
	id, model, version, status, errText string
	input                               map[string]any
	polls                               int
	held                                bool
	failWith                            string
	output                              any
	created                             time.Time
	// started is when the prediction began running (zero while starting):
	// Replicate's started_at, which says whether a canceled prediction
	// ran (and was billed).
	started time.Time
	// fetch fetches the input's URLs once, when the prediction starts;
	// inputErr is the first download's failure, which fails it.
	fetch    sync.Once
	inputErr string
}

// New starts a fake Replicate API, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{key: "r8_fakeToken0123456789abcdef", preds: map[string]*pred{}, files: map[string][]byte{}, fetched: map[string][]byte{}, uploads: map[string]upload{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/models/{owner}/{name}/predictions", s.handleCreate)
	mux.HandleFunc("POST /v1/predictions", s.handleCreate)
	mux.HandleFunc("GET /v1/predictions", s.handleList)
	mux.HandleFunc("GET /v1/predictions/{id}", s.handleGet)
	mux.HandleFunc("POST /v1/predictions/{id}/cancel", s.handleCancel)
	mux.HandleFunc("GET /files/{name}", s.handleFile)
	mux.HandleFunc("POST /v1/files", s.handleUpload)
	mux.HandleFunc("GET /v1/models/{owner}/{name}", s.handleModel)
	mux.HandleFunc("GET /v1/models/{owner}/{name}/versions/{version}", s.handleVersion)
	mux.HandleFunc("GET /v1/files/{id}", s.handleFileObject)
	mux.HandleFunc("GET /v1/account", func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(w, r) {
			upstreamtest.WriteJSON(w, http.StatusOK, map[string]any{"type": "user", "username": "fake", "name": "Fake", "github_url": ""})
		}
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the base URL to configure (the fake's /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Key returns the API token the fake accepts.
func (s *Server) Key() string { return s.key }

// Cancels returns how many cancel calls the fake answered.
func (s *Server) Cancels() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels
}

// Release lets held predictions complete on their next poll.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.Release()
	for _, p := range s.preds {
		if p.held {
			p.held, p.polls = false, 1<<30
		}
	}
}

// DeleteOutputs deletes every output served so far: the files answer 404
// and the predictions say data_removed.
func (s *Server) DeleteOutputs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Knobs.DeleteOutputs()
	s.files = map[string][]byte{}
}

func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"title": title, "detail": detail, "status": status})
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if h == "" {
		problem(w, http.StatusUnauthorized, "Unauthenticated", "You did not pass an authentication token")
		return false
	}
	if h != "Bearer "+s.key {
		problem(w, http.StatusUnauthorized, "Unauthenticated", "You did not pass a valid authentication token")
		return false
	}
	return true
}

func failStatus(w http.ResponseWriter, status int) {
	switch {
	case status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "1")
		problem(w, status, "Request was throttled.", "Request was throttled. Expected available in 1 second.")
	case status == http.StatusUnprocessableEntity:
		problem(w, status, "Input validation failed", "- input.prompt: Invalid type. Expected: string, given: null")
	case status >= 500:
		problem(w, status, http.StatusText(status), "Something went wrong on Replicate's side. Please try again.")
	default:
		problem(w, status, http.StatusText(status), "The request was refused.")
	}
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	s.creates++
	s.mu.Unlock()
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&body); err != nil {
		problem(w, http.StatusBadRequest, "Invalid JSON", "The request body is not valid JSON.")
		return
	}
	input, ok := body["input"].(map[string]any)
	if !ok {
		problem(w, http.StatusUnprocessableEntity, "Input validation failed", "- (root): input is required")
		return
	}
	modelName := r.PathValue("owner") + "/" + r.PathValue("name")
	version := ""
	if r.PathValue("owner") == "" {
		v, _ := body["version"].(string)
		if v == "" {
			problem(w, http.StatusUnprocessableEntity, "Input validation failed", "- (root): version is required")
			return
		}
		modelName, version, _ = strings.Cut(v, ":")
	}
	if pinned, community := Community[modelName]; community {
		switch {
		case version == "":
			problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.")
			return
		case version != pinned:
			problem(w, http.StatusUnprocessableEntity, "Invalid version or not permitted",
				"The specified version does not exist (or perhaps you don't have permission to use it?)")
			return
		}
	}
	if sc, ok := Schemas[modelName]; ok {
		if ps := sc.Check(input); len(ps) > 0 {
			var d strings.Builder
			for i, p := range ps {
				if i > 0 {
					d.WriteString("\n")
				}
				d.WriteString("- input." + p.Field + ": " + p.Msg)
			}
			problem(w, http.StatusUnprocessableEntity, "Input validation failed", d.String())
			return
		}
	}
	if d, bad := invalidInput(input); bad {
		problem(w, http.StatusUnprocessableEntity, "Input validation failed", d)
		return
	}

	if status, ok := s.TakeSubmitFailure(); ok {
		failStatus(w, status)
		return
	}
	s.mu.Lock()
	for _, v := range input {
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, v := range vals {
			if d, _ := v.(string); strings.HasPrefix(d, "data:") {
				if _, b64, ok := strings.Cut(d, ";base64,"); ok {
					s.largestDataURI = max(s.largestDataURI, base64.StdEncoding.DecodedLen(len(b64)))
				}
			}
		}
	}
	s.seq++
	p := &pred{id: fmt.Sprintf("fake%06dxq7m3rzpk2", s.seq), model: modelName, version: version,
		status: "starting", input: input, held: s.Held(), failWith: s.JobFailReason(), created: time.Now().UTC()}
	s.preds[p.id] = p
	reset := s.Accept(body)
	obj := s.object(p)
	s.mu.Unlock()

	if reset {
		upstreamtest.ResetConn(w)
		return
	}
	if status, ok := s.TakeCreatedFailure(); ok {
		failStatus(w, status) // created, then failed answering
		return
	}
	upstreamtest.WriteJSON(w, http.StatusCreated, obj)
}

// Retire makes a model unknown to the fake's models API (404), as a model
// its owner deleted or made private.
func (s *Server) Retire(model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired == nil {
		s.retired = map[string]bool{}
	}
	s.retired[model] = true
}

// known reports whether the fake serves a model: the catalog's (Schemas)
// and the pinned community models, unless retired.
func (s *Server) known(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, schema := Schemas[model]
	_, community := Community[model]
	return (schema || community) && !s.retired[model] && !Delisted[model]
}

// Delisted are models the fake still runs (older tests call them) but
// its models API answers 404 for, as Replicate's does once a model is
// gone: openai/sora-2 relayed OpenAI's Sora API, shut down on 2026-09-24.
var Delisted = map[string]bool{"openai/sora-2": true}

// handleModel serves GET /v1/models/{owner}/{name} as Replicate documents
// it (HTTP API reference, models.get; replicate-go model.go Model): the
// model object {url, owner, name, description, visibility, github_url,
// paper_url, license_url, run_count, cover_image_url, default_example,
// latest_version: {id, created_at, cog_version, openapi_schema}}; 404
// with the problem body for a model it does not serve.
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	name := r.PathValue("owner") + "/" + r.PathValue("name")
	if !s.known(name) {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.")
		return
	}
	version := Community[name]
	if version == "" {
		version = fmt.Sprintf("%064x", len(name))
	}
	upstreamtest.WriteJSON(w, http.StatusOK, map[string]any{
		"url": "https://replicate.com/" + name, "owner": r.PathValue("owner"), "name": r.PathValue("name"),
		"description": "", "visibility": "public", "github_url": nil, "paper_url": nil, "license_url": nil,
		"run_count": 1000, "cover_image_url": nil, "default_example": nil,
		"latest_version": map[string]any{"id": version, "created_at": "2026-01-01T00:00:00Z", "cog_version": "0.16.0", "openapi_schema": map[string]any{}}})
}

// handleVersion serves GET /v1/models/{owner}/{name}/versions/{version}:
// the version object, 404 for a version the fake does not pin.
func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	name := r.PathValue("owner") + "/" + r.PathValue("name")
	if !s.known(name) || Community[name] != r.PathValue("version") {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.")
		return
	}
	upstreamtest.WriteJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("version"),
		"created_at": "2026-01-01T00:00:00Z", "cog_version": "0.16.0", "openapi_schema": map[string]any{}})
}

// LargestDataURI returns the size of the largest file a prediction's
// input carried as a data: URI (Replicate: "only recommended if the file
// is less than 1MB").
func (s *Server) LargestDataURI() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.largestDataURI
}

// Uploads returns how many files the files API holds.
func (s *Server) Uploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.uploads)
}

// handleUpload serves POST /v1/files as Replicate documents it (HTTP API
// reference, files.create; replicate-go files.go createFile): a
// multipart/form-data body whose "content" part is the file (its filename
// and Content-Type kept), with optional "type", "filename" and "metadata"
// fields; 201 with the file object, whose urls.get is the URL a
// prediction's input may name it by. Files are limited to 100 MB.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		problem(w, http.StatusBadRequest, "Invalid request", "The request body must be multipart/form-data.")
		return
	}
	f, hdr, err := r.FormFile("content")
	if err != nil {
		problem(w, http.StatusUnprocessableEntity, "Input validation failed", "- content: content is required")
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 100<<20+1))
	if err != nil || len(data) > 100<<20 {
		problem(w, http.StatusRequestEntityTooLarge, "File too large", "Files are limited to 100 MB.")
		return
	}
	ct := hdr.Header.Get("Content-Type")
	if t := r.FormValue("type"); t != "" {
		ct = t
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	name := hdr.Filename
	if n := r.FormValue("filename"); n != "" {
		name = n
	}
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("file%06dzq3k8w", s.seq)
	up := upload{name: name, contentType: ct, data: data, created: time.Now().UTC()}
	s.uploads[id] = up
	obj := s.fileObject(id, up)
	s.mu.Unlock()
	upstreamtest.WriteJSON(w, http.StatusCreated, obj)
}

// handleFileObject serves GET /v1/files/{id}: the file object.
func (s *Server) handleFileObject(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	up, ok := s.uploads[r.PathValue("id")]
	var obj any
	if ok {
		obj = s.fileObject(r.PathValue("id"), up)
	}
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.")
		return
	}
	upstreamtest.WriteJSON(w, http.StatusOK, obj)
}

func (s *Server) fileObject(id string, up upload) map[string]any {
	sum := sha256.Sum256(up.data)
	return map[string]any{"id": id, "name": up.name, "content_type": up.contentType, "size": len(up.data),
		"etag": hex.EncodeToString(sum[:16]), "checksums": map[string]string{"sha256": hex.EncodeToString(sum[:])},
		"metadata": map[string]any{}, "created_at": up.created.Format(time.RFC3339Nano),
		"expires_at": up.created.Add(24 * time.Hour).Format(time.RFC3339Nano),
		"urls":       map[string]string{"get": s.srv.URL + "/v1/files/" + id}}
}

// listPage is how many predictions a page of the list holds (Replicate:
// "It will return 100 records per page").
const listPage = 100

// handleList serves GET /v1/predictions as Replicate documents it: "a
// paginated list of predictions that you've created", 100 per page,
// "sorted with the most recent prediction first", as {"next",
// "previous", "results"} where next and previous are the URLs of the
// neighbouring pages (null at the ends) and each result is a prediction
// object with its input (replicate.com/docs/reference/http#predictions.list;
// replicate-go paginate.go Page and prediction.go Prediction).
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	start := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			problem(w, http.StatusBadRequest, "Invalid cursor", "The cursor is not valid.")
			return
		}
		start = n
	}
	s.mu.Lock()
	all := make([]*pred, 0, len(s.preds))
	for _, p := range s.preds {
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b *pred) int { return b.created.Compare(a.created) })
	page := map[string]any{"next": nil, "previous": nil}
	results := []any{}
	for i := start; i < len(all) && i < start+listPage; i++ {
		results = append(results, s.object(all[i]))
	}
	s.lists++
	s.mu.Unlock()
	base := s.srv.URL + "/v1/predictions?cursor="
	if start+listPage < len(all) {
		page["next"] = base + strconv.Itoa(start+listPage)
	}
	if start > 0 {
		page["previous"] = base + strconv.Itoa(max(0, start-listPage))
	}
	page["results"] = results
	upstreamtest.WriteJSON(w, http.StatusOK, page)
}

// Creates returns how many create requests (POST …/predictions) reached
// the fake with a valid key, whatever it answered them: paid creates a
// client sent.
func (s *Server) Creates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates
}

// Lists returns how many pages of the prediction list were read.
func (s *Server) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// invalidInput checks the few things every model validates.
func invalidInput(in map[string]any) (string, bool) {
	if p, ok := in["prompt"]; ok {
		if _, isString := p.(string); !isString {
			return "- input.prompt: Invalid type. Expected: string", true
		}
	}
	if a, ok := in["aspect_ratio"].(string); ok && a != "landscape" && a != "portrait" {
		w, h, ok := strings.Cut(a, ":")
		if _, err := strconv.Atoi(w); !ok || err != nil {
			return "- input.aspect_ratio: aspect_ratio must be one of the following: \"1:1\", \"16:9\", ...", true
		}
		if _, err := strconv.Atoi(h); err != nil {
			return "- input.aspect_ratio: aspect_ratio must be one of the following: \"1:1\", \"16:9\", ...", true
		}
	}
	for k, v := range in {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "data:") && !strings.Contains(s, ";base64,") {
			return "- input." + k + ": Does not match format 'uri'", true
		}
	}
	return "", false
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if status, ok := s.TakePollFailure(); ok {
		failStatus(w, status)
		return
	}
	s.mu.Lock()
	p, ok := s.preds[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.")
		return
	}
	p.fetch.Do(func() { s.fetchInputs(p) }) // not under s.mu: a URL may point back here
	s.mu.Lock()
	s.advance(p)
	obj := s.object(p)
	s.mu.Unlock()
	upstreamtest.WriteJSON(w, http.StatusOK, obj)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.preds[r.PathValue("id")]
	if !ok {
		problem(w, http.StatusNotFound, "Not found", "The requested resource could not be found.")
		return
	}
	s.cancels++
	if p.status == "starting" || p.status == "processing" {
		p.status = "canceled"
	}
	upstreamtest.WriteJSON(w, http.StatusOK, s.object(p))
}

func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, ok := s.files[r.PathValue("name")]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", http.DetectContentType(data))
	w.Write(data)
}

// advance moves p one status read along: starting → processing → done.
func (s *Server) advance(p *pred) {
	if p.status != "starting" && p.status != "processing" {
		return
	}
	p.polls++
	if p.started.IsZero() {
		p.started = time.Now().UTC()
	}
	if p.inputErr != "" { // the inputs are fetched before the model runs
		p.status, p.errText = "failed", p.inputErr
		return
	}
	if p.held || p.polls < s.Polls() {
		p.status = "processing"
		return
	}
	switch p.failWith {
	case "content_policy":
		p.status, p.errText = "failed", "The input or output was flagged as sensitive. Please try again with different inputs. (E005)"
		return
	case "error":
		p.status, p.errText = "failed", "Prediction failed: CUDA error: out of memory"
		return
	}
	p.status = "succeeded"
	p.output = s.render(p)
}

// render makes p's output files and returns the output value.
func (s *Server) render(p *pred) any {
	video := strings.Contains(p.model, "video") || strings.Contains(p.model, "veo") || strings.Contains(p.model, "kling") ||
		strings.Contains(p.model, "sora") || strings.Contains(p.model, "hailuo") || strings.Contains(p.model, "seedance") ||
		strings.Contains(p.model, "gen4") || strings.Contains(p.model, "pixverse") || strings.Contains(p.model, "wan-") ||
		p.input["duration"] != nil || p.input["seconds"] != nil
	if video {
		name := p.id + "-0.mp4"
		s.files[name] = upstreamtest.MP4()
		return s.srv.URL + "/files/" + name
	}
	n := 1
	if f, ok := p.input["num_outputs"].(float64); ok && f > 1 {
		n = int(f)
	}
	format, _ := p.input["output_format"].(string)
	if format == "" {
		format, _ = p.input["format"].(string)
	}
	w, h := dims(p.input)
	urls := make([]any, n)
	for i := range n {
		ext, quality := "png", 0
		if format == "jpg" || format == "jpeg" {
			ext, quality = "jpg", 80
		}
		data := upstreamtest.Picture(w, h, uint8(40*i), quality)
		name := fmt.Sprintf("%s-%d.%s", p.id, i, ext)
		s.files[name] = data
		urls[i] = s.srv.URL + "/files/" + name
	}
	if _, list := p.input["num_outputs"]; list {
		return urls
	}
	return urls[0]
}

// dims picks an image size for the input's aspect ratio or size.
func dims(in map[string]any) (int, int) {
	if w, ok := in["width"].(float64); ok {
		if h, ok := in["height"].(float64); ok {
			return int(w) / 8, int(h) / 8
		}
	}
	if a, ok := in["aspect_ratio"].(string); ok {
		ws, hs, _ := strings.Cut(a, ":")
		wr, err1 := strconv.Atoi(ws)
		hr, err2 := strconv.Atoi(hs)
		if err1 == nil && err2 == nil && wr > 0 && hr > 0 {
			return 16 * wr, 16 * hr
		}
	}
	return 128, 128
}

// object is p as Replicate's prediction JSON.
func (s *Server) object(p *pred) map[string]any {
	base := s.srv.URL + "/v1/predictions/" + p.id
	obj := map[string]any{
		"id": p.id, "model": p.model, "version": p.version, "input": p.input, "status": p.status,
		"logs": "", "output": nil, "error": nil, "data_removed": false, "source": "api",
		"created_at": p.created.Format(time.RFC3339Nano),
		"urls":       map[string]string{"get": base, "cancel": base + "/cancel", "web": "https://replicate.com/p/" + p.id},
	}
	if !p.started.IsZero() {
		obj["started_at"] = p.started.Format(time.RFC3339Nano)
	}
	if p.status == "processing" { // a model's progress bar, as tqdm prints it
		obj["logs"] = fmt.Sprintf("Using seed: 42\nRunning prediction\n%3d%%|#####     | %d/28 [00:02<00:02, 6.00it/s]\n", min(100, p.polls*25), min(28, p.polls*7))
	}
	switch p.status {
	case "succeeded":
		obj["output"] = p.output
		obj["metrics"] = map[string]any{"predict_time": 1.2}
		if s.Deleted() {
			obj["output"], obj["data_removed"] = nil, true
		}
	case "failed":
		obj["error"] = p.errText
		obj["logs"] = "Traceback (most recent call last):\n" + p.errText
	}
	return obj
}

// fetchInputs GETs every http(s) URL of p's input, in field order, as
// Cog does before the model runs; the first that fails fails p with the
// text requests gives its error.
func (s *Server) fetchInputs(p *pred) {
	s.mu.Lock()
	starting := p.status == "starting" || p.status == "processing"
	s.mu.Unlock()
	if !starting {
		return
	}
	for _, u := range inputURLs(p.input) {
		var data []byte
		var msg string
		if id, ok := strings.CutPrefix(u, s.srv.URL+"/v1/files/"); ok {
			// A file of the files API: Replicate reads its own store.
			s.mu.Lock()
			up, found := s.uploads[id]
			s.mu.Unlock()
			data = up.data
			if !found {
				msg = "404 Client Error: Not Found for url: " + u
			}
		} else {
			data, msg = fetchInput(u)
		}
		s.mu.Lock()
		if msg != "" {
			p.inputErr = msg
			s.mu.Unlock()
			return
		}
		s.fetched[u] = data
		s.mu.Unlock()
	}
}

// inputURLs lists the http(s) URLs of an input: string fields and the
// items of list fields.
func inputURLs(in map[string]any) []string {
	var urls []string
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vals, ok := in[k].([]any)
		if !ok {
			vals = []any{in[k]}
		}
		for _, v := range vals {
			if u, _ := v.(string); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
				urls = append(urls, u)
			}
		}
	}
	return urls
}

// fetchInput GETs one input URL (at most 256 MiB here) and returns its
// bytes, or the failure as requests words it: "404 Client Error: Not
// Found for url: …" for an answer that is not a success, urllib3's
// "Max retries exceeded" for a server it cannot reach.
func fetchInput(u string) ([]byte, string) {
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Get(u)
	if err != nil {
		pool, host, port, path := "HTTPConnectionPool", "", "", u
		if pu, perr := url.Parse(u); perr == nil {
			host, port, path = pu.Hostname(), pu.Port(), pu.RequestURI()
			if pu.Scheme == "https" {
				pool = "HTTPSConnectionPool"
			}
		}
		return nil, fmt.Sprintf("%s(host='%s', port=%s): Max retries exceeded with url: %s (Caused by NewConnectionError('Failed to establish a new connection: %v'))",
			pool, host, port, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		side := "Client"
		if resp.StatusCode >= 500 {
			side = "Server"
		}
		return nil, fmt.Sprintf("%d %s Error: %s for url: %s", resp.StatusCode, side, http.StatusText(resp.StatusCode), u)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Sprintf("Connection broken: %v", err)
	}
	return data, ""
}

// Fetched returns the bytes the fake fetched from an input URL, nil for a
// URL it never fetched.
func (s *Server) Fetched(u string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[u]
}
