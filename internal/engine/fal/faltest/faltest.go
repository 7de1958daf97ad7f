// Package faltest is an in-process fake of fal's queue API for tests. It
// is written from fal's documentation, not from captured traffic:
//
//   - the queue API (https://docs.fal.ai/model-endpoints/queue and
//     https://fal.ai/docs/api-reference/inference-api): POST
//     /{endpoint} answers {request_id, response_url, status_url,
//     cancel_url}; GET /{owner}/{app}/requests/{id}/status answers 202
//     while IN_QUEUE or IN_PROGRESS and 200 when COMPLETED; GET
//     /{owner}/{app}/requests/{id} answers the stored result; PUT
//     .../cancel (https://fal.ai/docs/inference-api/queue/cancel) removes
//     a request still in the queue and answers 200 OK, signals one in
//     progress and answers 202 CANCELLATION_REQUESTED, and answers 400
//     ALREADY_COMPLETED or 404 NOT_FOUND.
//     Status, result and cancel use only owner/app of the endpoint.
//   - authentication "Authorization: Key <key>" (401 with {"detail"}).
//   - error shapes (https://fal.ai/docs/model-apis/errors and
//     .../request-errors): model validation errors {"detail":[{loc, msg,
//     type}]} (422, type "content_policy_violation" for safety refusals,
//     "image_load_error" for an unreadable input image) and request errors
//     {"detail": "...", "error_type": "..."} with X-Fal-Error-Type.
//   - output files on fal's CDN: {"images":[{url, content_type, width,
//     height}]} or {"image":{...}} for single-image tools, {"video":{url,
//     content_type}} for videos.
package faltest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/schematest"
	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// Server is the fake. Its methods are safe for concurrent use.
//
// Its knobs are upstreamtest.Knobs': FailSubmits and FailPolls replace
// the failures still pending (429 carries Retry-After: 1); Hold keeps
// requests queued, Release lets them complete on their next status read;
// FailJobs("error") makes requests fail with a request error (500),
// FailJobs("content_policy") with a 422 content-policy violation;
// DeleteOutputs makes every output file answer 404, as after fal's media
// expiration.
type Server struct {
	upstreamtest.Knobs

	srv *httptest.Server
	key string

	mu           sync.Mutex
	jobs         map[string]*job
	files        map[string]servedFile
	byPrompt     map[string]int
	cancels      int
	lastEndpoint string
	fileBase     string
	fileAuth     []string
	fetched      map[string][]byte
	ingress      []int
	// registry holds what the Platform API says of endpoints that differ
	// from the default (every endpoint of Schemas is active): "deprecated",
	// or "gone" (not listed at all); prices are the pricing API's.
	registry map[string]string
	prices   map[string]price
}

type price struct {
	unitPrice float64
	unit      string
}

type job struct {
	id, endpoint string
	body         map[string]any
	polls        int
	wasHeld      bool
	done         bool
	fail         string
	result       []byte
}

type servedFile struct {
	data  []byte
	ctype string
}

// New starts a fake closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{key: "fal-test-" + randomHex(12), jobs: map[string]*job{}, files: map[string]servedFile{}}
	s.ReplacePendingFailures()
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the base URL to configure in place of https://queue.fal.run.
func (s *Server) URL() string { return s.srv.URL }

// Key returns the API key the fake accepts.
func (s *Server) Key() string { return s.key }

// SubmissionsByPrompt returns how many requests the fake accepted for each
// prompt, so a test that gives every task its own prompt can check that
// no task was submitted twice.
func (s *Server) SubmissionsByPrompt() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.byPrompt))
	for k, v := range s.byPrompt {
		out[k] = v
	}
	return out
}

// Cancels returns how many cancel calls the fake answered.
func (s *Server) Cancels() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels
}

// LastEndpoint returns the endpoint id of the last accepted submit.
func (s *Server) LastEndpoint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastEndpoint
}

// SetFileBase makes the output URLs of results completed from now on
// start with base instead of the fake's URL: a CDN elsewhere, or a
// look-alike host in a credential test (the test's client then connects
// every host to the fake).
func (s *Server) SetFileBase(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fileBase = base
}

// FileAuth returns the Authorization header of every output file request,
// "" for those that came without one.
func (s *Server) FileAuth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.fileAuth...)
}

// ServeHTTP routes the fake's API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	if name, ok := strings.CutPrefix(path, "files/"); ok && r.Method == http.MethodGet {
		s.mu.Lock()
		s.fileAuth = append(s.fileAuth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		s.serveFile(w, name)
		return
	}
	switch auth := r.Header.Get("Authorization"); {
	case auth == "":
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Missing authorization header."})
		return
	case auth != "Key "+s.key:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "No user found for Key ID and Secret."})
		return
	}
	if r.Method == http.MethodGet && path == "v1/models" {
		s.models(w, r)
		return
	}
	if r.Method == http.MethodGet && path == "v1/models/pricing" {
		s.pricing(w, r)
		return
	}
	parts := strings.Split(path, "/")
	if len(parts) >= 4 && parts[2] == "requests" {
		ownerApp, id, rest := parts[0]+"/"+parts[1], parts[3], strings.Join(parts[4:], "/")
		switch {
		case r.Method == http.MethodGet && rest == "status":
			s.status(w, ownerApp, id, r.URL.Query().Get("logs") == "1")
		case r.Method == http.MethodGet && rest == "":
			s.result(w, ownerApp, id)
		case r.Method == http.MethodPut && rest == "cancel":
			s.cancel(w, ownerApp, id)
		default:
			writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
		}
		return
	}
	if r.Method != http.MethodPost || len(parts) < 2 {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
		return
	}
	s.submit(w, r, path)
}

// Retire makes the Platform API report endpoint as status: "deprecated"
// (listed with that status), "gone" (not listed at all), or "active".
func (s *Server) Retire(endpoint, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.registry == nil {
		s.registry = map[string]string{}
	}
	s.registry[endpoint] = status
}

// SetPrice makes the pricing API report endpoint at unitPrice USD per unit.
func (s *Server) SetPrice(endpoint string, unitPrice float64, unit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prices == nil {
		s.prices = map[string]price{}
	}
	s.prices[endpoint] = price{unitPrice, unit}
}

// Delisted are endpoints the fake still serves (older tests call them)
// but its model search does not list, as fal's registry no longer does:
// the newest public endpoint map (fal-js@381105e, 2026-08-02,
// libs/client/src/types/endpoints.ts) has none of them. The Seedream 5
// Lite endpoints moved to bytedance/seedream/v5/lite/*; OpenAI's Sora API,
// which fal's sora-2 endpoints called, shut down on 2026-09-24.
var Delisted = map[string]bool{
	"fal-ai/bytedance/seedream/v5/lite/text-to-image": true, "fal-ai/bytedance/seedream/v5/lite/edit": true,
	"fal-ai/veo3": true, "fal-ai/veo3/fast": true,
	"fal-ai/imagen4/preview/ultra": true, "fal-ai/imagen4/preview/fast": true,
	"wan/v2.6/text-to-video":                  true,
	"half-moon-ai/ai-face-swap/faceswapimage": true,
	"fal-ai/sora-2/text-to-video":             true, "fal-ai/sora-2/image-to-video": true,
	"fal-ai/sora-2/text-to-video/pro": true, "fal-ai/sora-2/image-to-video/pro": true,
}

// models serves the Platform API's model search in find mode, as fal
// documents it (https://docs.fal.ai/platform-apis/v1/models, GET
// https://api.fal.ai/v1/models): endpoint_id repeated, 1 to 50 ids; the
// answer {"models": [{"endpoint_id", "metadata": {"display_name",
// "category", "status": "active"|"deprecated", ...}}], "next_cursor",
// "has_more"} lists the ids fal knows. Every endpoint of Schemas is
// active unless Retire says otherwise.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["endpoint_id"]
	if len(ids) == 0 || len(ids) > 50 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
			"loc": []any{"query", "endpoint_id"}, "msg": "endpoint_id takes 1 to 50 values", "type": "value_error"}}})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	models := []any{}
	for _, id := range ids {
		st, set := s.registry[id]
		if _, known := Schemas[id]; (!known && !set) || st == "gone" || (Delisted[id] && !set) {
			continue
		}
		if st == "" {
			st = "active"
		}
		models = append(models, map[string]any{"endpoint_id": id, "metadata": map[string]any{
			"display_name": id, "category": "text-to-image", "description": "", "status": st,
			"tags": []any{}, "updated_at": "2026-11-01T00:00:00Z", "model_url": "https://fal.run/" + id}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models, "next_cursor": nil, "has_more": false})
}

// pricing serves GET https://api.fal.ai/v1/models/pricing?endpoint_id=…:
// {"prices": [{"endpoint_id", "unit_price", "unit", "currency"}]} for the
// endpoints with a price (SetPrice).
func (s *Server) pricing(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prices := []any{}
	for _, id := range r.URL.Query()["endpoint_id"] {
		if p, ok := s.prices[id]; ok {
			prices = append(prices, map[string]any{"endpoint_id": id, "unit_price": p.unitPrice, "unit": p.unit, "currency": "USD"})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"prices": prices, "next_cursor": nil, "has_more": false})
}

// FailIngress makes the next n submits answer status (502, 503 or 504)
// from fal's ingress, before any fal server saw them: an nginx HTML page
// without x-fal-request-id, the answer fal's clients tell from their
// servers' own (fal_client client.py _is_ingress_error). Nothing is queued.
func (s *Server) FailIngress(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.ingress = append(s.ingress, status)
	}
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request, endpoint string) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	ingress := 0
	if len(s.ingress) > 0 {
		ingress, s.ingress = s.ingress[0], s.ingress[1:]
	}
	s.mu.Unlock()
	if ingress != 0 {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(ingress)
		fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			ingress, http.StatusText(ingress), ingress, http.StatusText(ingress))
		return
	}
	if status, ok := s.TakeSubmitFailure(); ok {
		failWith(w, status)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
			"loc": []any{"body"}, "msg": "Input should be a valid dictionary", "type": "dict_type"}}})
		return
	}
	if sc, ok := Schemas[endpoint]; ok {
		if ps := sc.Check(body); len(ps) > 0 {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": detail(ps)})
			return
		}
	}
	if loc, ok := s.badInput(body); !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
			"loc": []any{"body", loc}, "msg": "Failed to load the image. Please ensure the image file is not corrupted and is in a supported format.",
			"type": "image_load_error", "url": "https://docs.fal.ai/errors#image_load_error"}}})
		return
	}
	s.mu.Lock()
	j := &job{id: uuid(), endpoint: endpoint, body: body, fail: s.JobFailReason(), wasHeld: s.Held()}
	s.jobs[j.id] = j
	if p, ok := body["prompt"].(string); ok {
		if s.byPrompt == nil {
			s.byPrompt = map[string]int{}
		}
		s.byPrompt[p]++
	}
	s.lastEndpoint = endpoint
	reset := s.Accept(body)
	s.mu.Unlock()
	if reset {
		upstreamtest.ResetConn(w)
		return
	}
	base := s.srv.URL + "/" + ownerApp(endpoint) + "/requests/" + j.id
	writeJSON(w, http.StatusOK, map[string]any{"status": "IN_QUEUE", "request_id": j.id,
		"response_url": base, "status_url": base + "/status", "cancel_url": base + "/cancel", "queue_position": 0})
}

// detail is fal's 422 "detail" list for schema problems (pydantic's
// error types).
func detail(ps []schematest.Problem) []any {
	types := map[string]string{"missing": "missing", "extra": "extra_forbidden", "type": "type_error",
		"enum": "literal_error", "range": "value_error.number", "rule": "value_error"}
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = map[string]any{"loc": []any{"body", p.Field}, "msg": p.Msg, "type": types[p.Kind]}
	}
	return out
}

// badInput checks every file parameter holds a data: URI or a URL of a
// readable image or video; it names the first that does not. Like fal, it
// fetches a URL given (fal's "image_load_error" when that fails; fal's
// docs: "File inputs ... accept a URL or a Base64 data URI"), and keeps
// the bytes for Fetched.
func (s *Server) badInput(body map[string]any) (string, bool) {
	for k, v := range body {
		if !strings.HasSuffix(k, "_url") && !strings.HasSuffix(k, "_urls") && k != "model_image" && k != "garment_image" {
			continue
		}
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, it := range vals {
			u, _ := it.(string)
			if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
				data, err := fetchInput(u)
				if err != nil || !media(data) {
					return k, false
				}
				s.mu.Lock()
				if s.fetched == nil {
					s.fetched = map[string][]byte{}
				}
				s.fetched[u] = data
				s.mu.Unlock()
				continue
			}
			_, b64, found := strings.Cut(u, ";base64,")
			if !strings.HasPrefix(u, "data:") || !found {
				return k, false
			}
			data, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || !media(data) {
				return k, false
			}
		}
	}
	return "", true
}

// fetchInput GETs an input URL as fal's workers do (at most 256 MiB here).
func fetchInput(u string) ([]byte, error) {
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 256<<20))
}

// Fetched returns the bytes the fake fetched from an input URL, nil for a
// URL it never fetched.
func (s *Server) Fetched(u string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[u]
}

func media(b []byte) bool {
	ct := http.DetectContentType(b)
	return strings.HasPrefix(ct, "image/") || len(b) > 8 && string(b[4:8]) == "ftyp"
}

func failWith(w http.ResponseWriter, status int) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, status, map[string]any{"detail": "Too many requests, please slow down."})
		return
	}
	if status >= 500 {
		// Answered by fal's own servers, which name the request they
		// answer for (fal_client: "this is clearly returned from our
		// server"): whether it was queued is not said.
		w.Header().Set("X-Fal-Request-Id", uuid())
		w.Header().Set("X-Fal-Error-Type", "runner_scheduling_failure")
		writeJSON(w, status, map[string]any{"detail": "No runner could be scheduled for the request.", "error_type": "runner_scheduling_failure"})
		return
	}
	writeJSON(w, status, map[string]any{"detail": http.StatusText(status)})
}

func (s *Server) find(ownerAppID, id string) *job {
	j := s.jobs[id]
	if j == nil || ownerApp(j.endpoint) != ownerAppID {
		return nil
	}
	return j
}

func (s *Server) status(w http.ResponseWriter, oa, id string, logs bool) {
	if status, ok := s.TakePollFailure(); ok {
		failWith(w, status)
		return
	}
	s.mu.Lock()
	j := s.find(oa, id)
	if j == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Request not found"})
		return
	}
	base := s.srv.URL + "/" + oa + "/requests/" + id
	switch {
	case j.done:
	case s.Held():
		j.wasHeld = true
	case j.wasHeld:
		j.done = true
	default:
		j.polls++
		j.done = j.polls >= s.Polls()
	}
	done, fail, polled := j.done, j.fail, j.polls > 0
	s.mu.Unlock()
	if !done {
		st := "IN_QUEUE"
		if polled {
			st = "IN_PROGRESS"
		}
		out := map[string]any{"status": st, "response_url": base}
		if st == "IN_QUEUE" {
			out["queue_position"] = 0
		}
		if logs { // fal sends logs with ?logs=1 only
			lines := []any{}
			if polled {
				lines = append(lines, map[string]any{"message": "Loading model weights", "level": "INFO", "source": "user", "timestamp": "2026-11-23T10:00:00.000Z"},
					map[string]any{"message": "Generating image, step 14/28", "level": "INFO", "source": "user", "timestamp": "2026-11-23T10:00:01.000Z"})
			}
			out["logs"] = lines
		}
		writeJSON(w, http.StatusAccepted, out)
		return
	}
	out := map[string]any{"status": "COMPLETED", "response_url": base}
	switch fail {
	case "error":
		out["error"], out["error_type"] = "Internal server error", "internal_error"
	case "content_policy":
		out["error"], out["error_type"] = "Unprocessable Entity", "content_policy_violation"
	case "cancelled":
		out["error"], out["error_type"] = "Request was cancelled", "request_cancelled"
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) result(w http.ResponseWriter, oa, id string) {
	s.mu.Lock()
	j := s.find(oa, id)
	if j == nil {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Request not found"})
		return
	}
	if !j.done {
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "Request is still in progress"})
		return
	}
	if j.result == nil && j.fail == "" {
		j.result = s.makeResult(j)
	}
	fail, res := j.fail, j.result
	s.mu.Unlock()
	switch fail {
	case "error":
		w.Header().Set("X-Fal-Error-Type", "internal_error")
		writeJSON(w, http.StatusInternalServerError, map[string]any{"detail": "Internal server error", "error_type": "internal_error"})
	case "content_policy":
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
			"loc": []any{"body", "prompt"}, "msg": "The content could not be processed because it contained material flagged by a content checker.",
			"type": "content_policy_violation", "url": "https://docs.fal.ai/errors#content_policy_violation"}}})
	case "cancelled":
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "Request was cancelled", "error_type": "request_cancelled"})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(res)
	}
}

func (s *Server) cancel(w http.ResponseWriter, oa, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancels++
	j := s.find(oa, id)
	switch {
	case j == nil:
		writeJSON(w, http.StatusNotFound, map[string]any{"status": "NOT_FOUND"})
	case j.done:
		writeJSON(w, http.StatusBadRequest, map[string]any{"status": "ALREADY_COMPLETED"})
	case j.polls == 0: // never read IN_PROGRESS (a held request stays queued)
		// Still IN_QUEUE: "If the request is in the queue, fal removes
		// it" and answers OK; it is never processed.
		j.done, j.fail = true, "cancelled"
		writeJSON(w, http.StatusOK, map[string]any{"status": "OK"})
	default:
		// IN_PROGRESS: "fal sends a cancellation signal to the runner".
		j.done, j.fail = true, "cancelled"
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "CANCELLATION_REQUESTED"})
	}
}

// makeResult renders a request's outputs, serves them and returns the
// result body. Called with s.mu held.
func (s *Server) makeResult(j *job) []byte {
	if strings.Contains(j.endpoint, "video") || strings.Contains(j.endpoint, "veo") {
		url := s.serve(j.id+"-0.mp4", mp4(), "video/mp4")
		b, _ := json.Marshal(map[string]any{"video": map[string]any{"url": url, "content_type": "video/mp4",
			"file_name": "output.mp4"}, "seed": 42})
		return b
	}
	n := 1
	if f, ok := j.body["num_images"].(float64); ok && f >= 1 {
		n = int(f)
	}
	format, _ := j.body["output_format"].(string)
	w, h := size(j.body)
	var images []any
	for i := range n {
		data, ext, ctype := picture(w, h, format, i)
		url := s.serve(fmt.Sprintf("%s-%d.%s", j.id, i, ext), data, ctype)
		images = append(images, map[string]any{"url": url, "content_type": ctype, "width": w, "height": h})
	}
	out := map[string]any{"images": images, "seed": 42, "has_nsfw_concepts": make([]bool, n), "prompt": j.body["prompt"]}
	for _, single := range []string{"birefnet", "bria/background/remove", "esrgan", "kolors-virtual-try-on", "faceswap"} {
		if strings.Contains(j.endpoint, single) {
			out = map[string]any{"image": images[0]}
		}
	}
	b, _ := json.Marshal(out)
	return b
}

func (s *Server) serve(name string, data []byte, ctype string) string {
	s.files[name] = servedFile{data, ctype}
	if s.fileBase != "" {
		return s.fileBase + "/files/" + name
	}
	return s.srv.URL + "/files/" + name
}

func (s *Server) serveFile(w http.ResponseWriter, name string) {
	s.mu.Lock()
	f, ok := s.files[name]
	deleted := s.Deleted()
	s.mu.Unlock()
	if !ok || deleted {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", f.ctype)
	w.Write(f.data)
}

// size reads the output size a request asks for (image_size preset or
// {width,height}, or aspect_ratio), scaled down 16 times to keep files
// small.
func size(body map[string]any) (int, int) {
	w, h := 1024, 1024
	switch v := body["image_size"].(type) {
	case string:
		presets := map[string][2]int{"square_hd": {1024, 1024}, "square": {512, 512}, "portrait_4_3": {768, 1024},
			"portrait_16_9": {576, 1024}, "landscape_4_3": {1024, 768}, "landscape_16_9": {1024, 576}}
		if p, ok := presets[v]; ok {
			w, h = p[0], p[1]
		}
	case map[string]any:
		fw, _ := v["width"].(float64)
		fh, _ := v["height"].(float64)
		if fw > 0 && fh > 0 {
			w, h = int(fw), int(fh)
		}
	}
	if ar, ok := body["aspect_ratio"].(string); ok {
		a, b, _ := strings.Cut(ar, ":")
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		if x > 0 && y > 0 {
			if x >= y {
				w, h = 1024, 1024*y/x
			} else {
				w, h = 1024*x/y, 1024
			}
		}
	}
	return max(w/16, 1), max(h/16, 1)
}

// picture encodes a w×h gradient as JPEG, or PNG for anything else (the
// standard library encodes no WebP).
func picture(w, h int, format string, seed int) (data []byte, ext, ctype string) {
	if format == "jpeg" {
		return upstreamtest.Picture(w, h, uint8(seed*60), jpeg.DefaultQuality), "jpeg", "image/jpeg"
	}
	return upstreamtest.Picture(w, h, uint8(seed*60), 0), "png", "image/png"
}

// mp4 returns a small file that starts with an ftyp box, as an MP4 does.
func mp4() []byte {
	b := []byte{0, 0, 0, 0x18, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm', 0, 0, 2, 0, 'i', 's', 'o', 'm', 'i', 's', 'o', '2'}
	mdat := append([]byte{0, 0, 0, 16, 'm', 'd', 'a', 't'}, make([]byte, 8)...)
	return append(b, mdat...)
}

// ownerApp returns the owner/app part of an endpoint id.
func ownerApp(endpoint string) string {
	parts := strings.SplitN(endpoint, "/", 3)
	if len(parts) < 2 {
		return endpoint
	}
	return parts[0] + "/" + parts[1]
}

func writeJSON(w http.ResponseWriter, status int, v any) { upstreamtest.WriteJSON(w, status, v) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func uuid() string {
	h := randomHex(16)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
