package googletest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/upstream/upstreamtest"
)

// Vertex is a fake of Vertex AI's publisher model methods for Google's
// media models, with the OAuth token endpoint a service account uses and
// the Cloud Storage object reads of videos written to a storageUri. It is
// written from Google's documentation and go-genai's Vertex converters
// (vertex_schemas.go names each source):
//
//   - POST /token: the service account JWT bearer grant (token.go);
//   - POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent,
//     :predict, :predictLongRunning and :fetchPredictOperation
//     ({"operationName"}), each body checked against its schema, a bad one
//     answered 400 INVALID_ARGUMENT (google.rpc.Status);
//   - POST …/models/{m}/operations/{id}:cancel;
//   - GET /v1/projects/{p}/locations/{l}/operations (the health check);
//   - GET /v1/publishers/google/models/{m}: the Model Garden publisher model
//     (publishers.models.get, Vertex AI REST reference v1: a PublisherModel
//     with name, versionId, openSourceCategory, launchStage, versionState),
//     404 NOT_FOUND for a model it does not serve or one Retire took off;
//   - GET /storage/v1/b/{bucket}/o/{object}?alt=media.
//
// Every call needs Authorization: Bearer with a token the fake issued and
// that has not expired (401 UNAUTHENTICATED otherwise) and that was asked
// with the cloud-platform scope (403 ACCESS_TOKEN_SCOPE_INSUFFICIENT); a
// path with another project or location is 403 PERMISSION_DENIED, an
// unknown model 404 NOT_FOUND.
//
// Veo operations are named
// projects/{p}/locations/{l}/publishers/google/models/{m}/operations/{uuid};
// done, their response holds videos[] with bytesBase64Encoded, or gcsUri
// when the request set parameters.storageUri. Knobs act as on the Gemini
// API fake (Server).
type Vertex struct {
	upstreamtest.Knobs

	srv               *httptest.Server
	email, keyID      string
	project, location string

	mu           sync.Mutex
	tokens       map[string]issued
	tokenLife    time.Duration
	tokenFetches int
	usedTokens   []string
	operations
	objects     map[string][]byte // "bucket/object"
	seq         int
	credentials string
	retired     map[string]bool
}

type issued struct {
	expires time.Time
	cloud   bool // asked with the cloud-platform scope
}

// NewVertex starts a fake Vertex AI for project "gengate-test" in
// us-central1, closed when the test ends.
func NewVertex(t testing.TB) *Vertex {
	t.Helper()
	v := &Vertex{email: "gengate@gengate-test.iam.gserviceaccount.com", keyID: "3f1c0ffee0ddba11c0ffee0ddba11c0ffee0dd",
		project: "gengate-test", location: "us-central1", tokens: map[string]issued{}, tokenLife: time.Hour,
		objects: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", v.handleToken)
	mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/google/models/{call}", v.handleCall)
	mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}/operations/{call}", v.handleCancel)
	mux.HandleFunc("GET /v1/projects/{project}/locations/{location}/operations", v.handleList)
	mux.HandleFunc("GET /v1/publishers/google/models/{model}", v.handlePublisherModel)
	mux.HandleFunc("GET /storage/v1/b/{bucket}/o/{object}", v.handleObject)
	v.srv = httptest.NewServer(mux)
	t.Cleanup(v.srv.Close)
	v.credentials = writeFile(t, "service-account.json", serviceAccountJSON(testKeys()[0], v.keyID, v.email, v.project, v.TokenURL()))
	return v
}

// URL returns the base URL to configure (the fake's /v1).
func (v *Vertex) URL() string { return v.srv.URL + "/v1" }

// StorageURL returns the Cloud Storage base URL to configure.
func (v *Vertex) StorageURL() string { return v.srv.URL }

// TokenURL is the token_uri of the credentials the fake accepts.
func (v *Vertex) TokenURL() string { return v.srv.URL + "/token" }

// Project and Location are where the fake serves.
func (v *Vertex) Project() string  { return v.project }
func (v *Vertex) Location() string { return v.location }

// Key returns the path of a service account key file the fake accepts
// (the "key" of enginetest's scenarios).
func (v *Vertex) Key() string { return v.credentials }

// SetTokenLifetime sets the expires_in of tokens issued from now on.
func (v *Vertex) SetTokenLifetime(d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tokenLife = d
}

// ExpireTokens makes every token issued so far expired, as an hour later.
func (v *Vertex) ExpireTokens() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, t := range v.tokens {
		t.expires = time.Now().Add(-time.Second)
		v.tokens[k] = t
	}
}

// TokenFetches returns how many tokens the token endpoint issued.
func (v *Vertex) TokenFetches() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.tokenFetches
}

// UsedTokens returns the bearer token of every authorized call, in order.
func (v *Vertex) UsedTokens() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.usedTokens...)
}

// Cancels returns how many operation cancels the fake answered.
func (v *Vertex) Cancels() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cancels
}

// Release lets held operations finish on their next poll.
func (v *Vertex) Release() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.Knobs.Release()
	v.release()
}

// DeleteOutputs deletes every video served so far: done operations lose
// their inline videos (as Vertex AI's operations expire) and written
// objects answer 404.
func (v *Vertex) DeleteOutputs() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.Knobs.DeleteOutputs()
	v.objects = map[string][]byte{}
	for _, o := range v.ops {
		if o.done && o.result["response"] != nil {
			o.result = map[string]any{"error": map[string]any{"code": 5, "message": "Operation not found or expired."}}
		}
	}
}

// authorized checks the bearer token, and the project and location of the
// path when it has them.
func (v *Vertex) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	v.mu.Lock()
	t, known := v.tokens[tok]
	if ok && known && t.cloud && time.Now().Before(t.expires) {
		v.usedTokens = append(v.usedTokens, tok)
	}
	v.mu.Unlock()
	switch {
	case !ok || tok == "":
		rpcStatus(w, http.StatusUnauthorized, "UNAUTHENTICATED",
			"Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return false
	case !known || !time.Now().Before(t.expires):
		rpcStatus(w, http.StatusUnauthorized, "UNAUTHENTICATED",
			"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return false
	case !t.cloud:
		rpcStatus(w, http.StatusForbidden, "PERMISSION_DENIED", "Request had insufficient authentication scopes.",
			map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "domain": "googleapis.com"})
		return false
	}
	if p := r.PathValue("project"); p != "" && (p != v.project || r.PathValue("location") != v.location) {
		rpcStatus(w, http.StatusForbidden, "PERMISSION_DENIED",
			fmt.Sprintf("Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/%s/locations/%s' (or it may not exist).", p, r.PathValue("location")))
		return false
	}
	return true
}

// Retire takes a publisher model away, as Google does when it retires
// one: its Model Garden entry and its methods answer 404 NOT_FOUND.
func (v *Vertex) Retire(model string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.retired == nil {
		v.retired = map[string]bool{}
	}
	v.retired[model] = true
}

func (v *Vertex) isRetired(model string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.retired[model]
}

// handlePublisherModel serves publishers.models.get for the models the
// fake serves: a PublisherModel in its BASIC view (previews are
// PUBLIC_PREVIEW, the others GA).
func (v *Vertex) handlePublisherModel(w http.ResponseWriter, r *http.Request) {
	if !v.authorized(w, r) {
		return
	}
	model := r.PathValue("model")
	if _, known := vertexModels[model]; !known || v.isRetired(model) {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("Publisher Model `publishers/google/models/%s` not found.", model))
		return
	}
	stage, version := "GA", "001"
	if strings.Contains(model, "preview") {
		stage, version = "PUBLIC_PREVIEW", "preview"
	}
	writeJSON(w, map[string]any{"name": "publishers/google/models/" + model, "versionId": version,
		"openSourceCategory": "PROPRIETARY", "launchStage": stage, "versionState": "VERSION_STATE_STABLE",
		"publisherModelTemplate": "projects/{project}/locations/{location}/publishers/google/models/" + model})
}

// handleList serves the health check's operations list.
func (v *Vertex) handleList(w http.ResponseWriter, r *http.Request) {
	if v.authorized(w, r) {
		writeJSON(w, map[string]any{"operations": []any{}})
	}
}

// handleCall serves POST …/models/{model}:{method}.
func (v *Vertex) handleCall(w http.ResponseWriter, r *http.Request) {
	if !v.authorized(w, r) {
		return
	}
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	want, known := vertexModels[model]
	known = known && !v.isRetired(model)
	if !ok || !known {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("Publisher Model `projects/%s/locations/%s/publishers/google/models/%s` not found.", v.project, v.location, model))
		return
	}
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&body); err != nil {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	if method == "fetchPredictOperation" && want == "predictLongRunning" {
		v.fetch(w, model, body)
		return
	}
	if method != want {
		rpcStatus(w, http.StatusBadRequest, "FAILED_PRECONDITION", fmt.Sprintf("Model %s does not support method %s.", model, method))
		return
	}
	if msg := checkVertex(model, method, body); msg != "" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
		return
	}
	if status, ok := v.TakeSubmitFailure(); ok {
		failStatus(w, status)
		return
	}
	v.mu.Lock()
	reset := v.Accept(body)
	v.seq++
	fail := v.JobFailReason()
	var answer any
	switch method {
	case "generateContent":
		answer = vertexContentAnswer(body, fail)
	case "predict":
		answer = predictAnswer(body, fail)
	default:
		name := fmt.Sprintf("projects/%s/locations/%s/publishers/google/models/%s/operations/%08x-0000-4000-8000-%012d", v.project, v.location, model, v.seq, v.seq)
		o := &op{name: name, held: v.Held(), failWith: fail, storage: asMap(body["parameters"])["storageUri"]}
		v.add(o)
		answer = map[string]any{"name": name}
	}
	v.mu.Unlock()
	if reset {
		upstreamtest.ResetConn(w)
		return
	}
	writeJSON(w, answer)
}

// vertexContentAnswer is generateContent's answer: as the Gemini API's,
// in the format imageOutputOptions asks for.
func vertexContentAnswer(body map[string]any, fail string) map[string]any {
	ans := contentAnswer(body, fail)
	mime, _ := asMap(asMap(asMap(body["generationConfig"])["imageConfig"])["imageOutputOptions"])["mimeType"].(string)
	if mime != "image/jpeg" || fail != "" {
		return ans
	}
	ic := asMap(asMap(body["generationConfig"])["imageConfig"])
	aspect, _ := ic["aspectRatio"].(string)
	w, h := dims(aspect)
	data, _ := fakeImage(w, h, mime)
	part := asMap(asMap(asMap(ans["candidates"].([]any)[0])["content"])["parts"].([]any)[0])
	part["inlineData"] = map[string]any{"mimeType": mime, "data": base64.StdEncoding.EncodeToString(data)}
	return ans
}

// fetch serves :fetchPredictOperation.
func (v *Vertex) fetch(w http.ResponseWriter, model string, body map[string]any) {
	c := &checker{}
	c.obj("", "fetch.request", body)
	if msg := c.message(); msg != "" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
		return
	}
	if status, ok := v.TakePollFailure(); ok {
		failStatus(w, status)
		return
	}
	name, _ := body["operationName"].(string)
	v.mu.Lock()
	defer v.mu.Unlock()
	o, ok := v.ops[name]
	if !ok || !strings.Contains(name, "/models/"+model+"/operations/") {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "Operation "+name+" not found.")
		return
	}
	v.advance(o)
	writeJSON(w, o.json())
}

// handleCancel serves POST …/models/{model}/operations/{id}:cancel.
func (v *Vertex) handleCancel(w http.ResponseWriter, r *http.Request) {
	if !v.authorized(w, r) {
		return
	}
	id, ok := strings.CutSuffix(r.PathValue("call"), ":cancel")
	name := fmt.Sprintf("projects/%s/locations/%s/publishers/google/models/%s/operations/%s", v.project, v.location, r.PathValue("model"), id)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !ok || !v.cancel(name) {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "Operation "+name+" not found.")
		return
	}
	writeJSON(w, map[string]any{})
}

// handleObject serves GET /storage/v1/b/{bucket}/o/{object}?alt=media.
func (v *Vertex) handleObject(w http.ResponseWriter, r *http.Request) {
	if !v.authorized(w, r) {
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "this fake serves object contents only (alt=media)")
		return
	}
	v.mu.Lock()
	data, ok := v.objects[r.PathValue("bucket")+"/"+r.PathValue("object")]
	v.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 404, "message": "No such object: " + r.PathValue("bucket") + "/" + r.PathValue("object")}})
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Write(data)
}

// advance moves o one read along (v.mu held).
func (v *Vertex) advance(o *op) {
	if !o.due(v.Polls()) {
		return
	}
	res := func(m map[string]any) map[string]any {
		m["@type"] = "type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse"
		return map[string]any{"response": m}
	}
	switch o.failWith {
	case "content_policy":
		o.result = res(map[string]any{"raiMediaFilteredCount": 1,
			"raiMediaFilteredReasons": []any{"We encountered an issue with the audio for your prompt. Your prompt may violate our Responsible AI practices. Support codes: 29310472"}})
	case "error":
		o.result = map[string]any{"error": map[string]any{"code": 13, "message": "Internal error encountered."}}
	default:
		video := map[string]any{"mimeType": "video/mp4"}
		if s, _ := o.storage.(string); strings.HasPrefix(s, "gs://") {
			bucket, prefix, _ := strings.Cut(strings.TrimPrefix(s, "gs://"), "/")
			object := strings.Trim(prefix+"/"+o.name[strings.LastIndex(o.name, "/")+1:]+"/sample_0.mp4", "/")
			v.objects[bucket+"/"+object] = upstreamtest.MP4()
			video["gcsUri"] = "gs://" + bucket + "/" + object
		} else {
			video["bytesBase64Encoded"] = base64.StdEncoding.EncodeToString(upstreamtest.MP4())
		}
		o.result = res(map[string]any{"videos": []any{video}})
	}
}

func isBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}
