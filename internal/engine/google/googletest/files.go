package googletest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The Files API, as go-genai uses it (files.go Upload, api_client.go
// upload; googleapis/go-genai@6fd3e65e, read 2026-11-23) and the REST
// example of ai.google.dev/gemini-api/docs/files shows it: a resumable
// upload started with POST /upload/v1beta/files (X-Goog-Upload-Protocol:
// resumable, X-Goog-Upload-Command: start, X-Goog-Upload-Header-Content-
// Length and -Content-Type, a JSON body {"file": {name?, displayName?,
// mimeType?}}) answered with an X-Goog-Upload-URL; then the bytes POSTed
// there with X-Goog-Upload-Command "upload" (more to come) or "upload,
// finalize" and X-Goog-Upload-Offset the bytes already received, each
// answered with X-Goog-Upload-Status "active" or, at the end, "final" and
// {"file": File}. A generateContent part {"fileData": {"fileUri",
// "mimeType"}} must name a file uploaded here, with its MIME type.

// upload is one resumable upload under way.
type upload struct {
	declared int64
	mime     string
	display  string
	data     []byte
	done     bool
}

// inputFile is a file the Files API holds.
type inputFile struct {
	id, mime, display string
	data              []byte
}

// Uploads returns the bytes of every file uploaded through the Files API,
// by file name ("files/<id>").
func (s *Server) Uploads() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]byte{}
	for id, f := range s.inputs {
		out["files/"+id] = f.data
	}
	return out
}

func (s *Server) fileURI(id string) string { return s.srv.URL + "/v1beta/files/" + id }

func (f *inputFile) object(s *Server) map[string]any {
	return map[string]any{"name": "files/" + f.id, "displayName": f.display, "mimeType": f.mime,
		"sizeBytes": strconv.Itoa(len(f.data)), "uri": s.fileURI(f.id), "state": "ACTIVE", "source": "UPLOADED"}
}

// handleUpload serves POST /upload/v1beta/files: a start without
// upload_id, the bytes with one.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if id := r.URL.Query().Get("upload_id"); id != "" {
		s.handleUploadBytes(w, r, id)
		return
	}
	if p := r.Header.Get("X-Goog-Upload-Protocol"); p != "resumable" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Upload protocol %q is not supported here; use resumable.", p))
		return
	}
	if c := r.Header.Get("X-Goog-Upload-Command"); c != "start" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Invalid X-Goog-Upload-Command %q for a new upload.", c))
		return
	}
	n, err := strconv.ParseInt(r.Header.Get("X-Goog-Upload-Header-Content-Length"), 10, 64)
	if err != nil || n <= 0 {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "X-Goog-Upload-Header-Content-Length must be a positive number of bytes.")
		return
	}
	mime := r.Header.Get("X-Goog-Upload-Header-Content-Type")
	var body map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	if m := unknownName(body, "", "file"); m != "" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", m)
		return
	}
	file := asMap(body["file"])
	if m := unknownName(file, "file", "name", "displayName", "mimeType"); m != "" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", m)
		return
	}
	if m, _ := file["mimeType"].(string); m != "" {
		mime = m
	}
	if !strings.HasPrefix(mime, "image/") && !strings.HasPrefix(mime, "video/") {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Unsupported MIME type: %q", mime))
		return
	}
	display, _ := file["displayName"].(string)
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("ABCupload%06d", s.seq)
	s.uploads[id] = &upload{declared: n, mime: mime, display: display}
	s.mu.Unlock()
	w.Header().Set("X-Goog-Upload-URL", s.srv.URL+"/upload/v1beta/files?upload_id="+id+"&upload_protocol=resumable")
	w.Header().Set("X-Goog-Upload-Status", "active")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleUploadBytes(w http.ResponseWriter, r *http.Request, id string) {
	cmd := r.Header.Get("X-Goog-Upload-Command")
	if cmd != "upload" && cmd != "upload, finalize" {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Invalid X-Goog-Upload-Command %q.", cmd))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 2<<30))
	if err != nil {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "The upload was cut short.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.uploads[id]
	if !ok || u.done {
		rpcStatus(w, http.StatusNotFound, "NOT_FOUND", "Upload not found or already finalized.")
		return
	}
	if off, err := strconv.ParseInt(r.Header.Get("X-Goog-Upload-Offset"), 10, 64); err != nil || off != int64(len(u.data)) {
		w.Header().Set("X-Goog-Upload-Status", "active")
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("X-Goog-Upload-Offset must be %d.", len(u.data)))
		return
	}
	u.data = append(u.data, data...)
	if int64(len(u.data)) > u.declared {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", "More bytes than X-Goog-Upload-Header-Content-Length declared.")
		return
	}
	if cmd == "upload" {
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.WriteHeader(http.StatusOK)
		return
	}
	if int64(len(u.data)) != u.declared {
		rpcStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Finalized at %d bytes; %d were declared.", len(u.data), u.declared))
		return
	}
	u.done = true
	f := &inputFile{id: strings.ToLower(strings.TrimPrefix(id, "ABCupload")) + "inpt", mime: u.mime, display: u.display, data: u.data}
	s.inputs[f.id] = f
	w.Header().Set("X-Goog-Upload-Status", "final")
	writeJSON(w, map[string]any{"file": f.object(s)})
}

// handleFileGet serves GET /v1beta/files/{id}.
func (s *Server) handleFileGet(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.inputs[r.PathValue("call")]
	s.mu.Unlock()
	if !ok {
		rpcStatus(w, http.StatusForbidden, "PERMISSION_DENIED", "You do not have permission to access the File "+r.PathValue("call")+" or it may not exist.")
		return
	}
	writeJSON(w, f.object(s))
}

// checkFileData checks every fileData part of a generateContent body: the
// fields the Part protobuf has, a file uploaded here, its MIME type. It
// returns the answer's status code, status and message, or 0.
func (s *Server) checkFileData(body map[string]any) (int, string, string) {
	contents, _ := body["contents"].([]any)
	for _, c := range contents {
		parts, _ := asMap(c)["parts"].([]any)
		for _, p := range parts {
			fd, ok := asMap(p)["fileData"]
			if !ok {
				continue
			}
			m := asMap(fd)
			if msg := unknownName(m, "contents[0].parts[0].file_data", "fileUri", "mimeType"); msg != "" {
				return http.StatusBadRequest, "INVALID_ARGUMENT", msg
			}
			uri, _ := m["fileUri"].(string)
			mime, _ := m["mimeType"].(string)
			if uri == "" {
				return http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[0].parts[0].file_data.file_uri: file_uri is required"
			}
			id, ok := strings.CutPrefix(uri, s.srv.URL+"/v1beta/files/")
			s.mu.Lock()
			f := s.inputs[id]
			s.mu.Unlock()
			if !ok || f == nil {
				return http.StatusForbidden, "PERMISSION_DENIED", "You do not have permission to access the File " + id + " or it may not exist."
			}
			if mime != f.mime {
				return http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("The file's MIME type is %s; the request says %q.", f.mime, mime)
			}
		}
	}
	return 0, "", ""
}
