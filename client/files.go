package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// File is an uploaded file: its URL is usable as any input of a later
// request by the same account, until ExpiresAt.
type File struct {
	URL         string    `json:"url"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	ExpiresAt   time.Time `json:"expiresAt,omitzero"`
}

// Upload sends data (an image or a video) to POST /api/v1/files. The server
// reads the type from the bytes; contentType may be empty.
func (cl *Client) Upload(ctx context.Context, data []byte, contentType string) (*File, error) {
	if contentType == "" || !(strings.HasPrefix(contentType, "image/") || strings.HasPrefix(contentType, "video/")) {
		contentType = "application/octet-stream"
	}
	resp, body, err := cl.do(ctx, call{method: "POST", path: "/api/v1/files", body: data, contentType: contentType})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusCreated {
		return nil, apiError(resp, body)
	}
	f := &File{}
	if err := json.Unmarshal(body, f); err != nil {
		return nil, fmt.Errorf("gengate: unreadable upload answer: %w", err)
	}
	return f, nil
}

// UploadFile uploads the file at path.
func (cl *Client) UploadFile(ctx context.Context, path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return cl.Upload(ctx, data, mime.TypeByExtension(filepath.Ext(path)))
}

// Download writes the file at an output URL to w and returns its content
// type. Output URLs need no key: their token is the credential.
func (cl *Client) Download(ctx context.Context, url string, w io.Writer) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return "", err
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return "", apiError(resp, data)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", err
	}
	return resp.Header.Get("Content-Type"), nil
}

// DownloadTo downloads an output URL into dir under the URL's file name
// and returns the path written.
func (cl *Client) DownloadTo(ctx context.Context, url, dir string) (string, error) {
	name := path.Base(strings.SplitN(url, "?", 2)[0])
	if name == "" || name == "/" || name == "." {
		return "", fmt.Errorf("gengate: no file name in %s", url)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := cl.Download(ctx, url, tmp); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(tmp.Name(), p)
}

// Model is one model of GET /api/v1/models.
type Model struct {
	ID          string  `json:"id"`
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	Credits     int     `json:"credits"`
	Inputs      []Field `json:"inputs"`
	Options     []Field `json:"options"`
	Engine      string  `json:"engine"`
	Placeholder bool    `json:"placeholder"`
}

// Field is one input or option of a model.
type Field struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Required bool   `json:"required,omitempty"`
	Values   []any  `json:"values,omitempty"`
	Default  any    `json:"default,omitempty"`
}

// ImageInputs returns the names of the model's image inputs, in order.
func (m Model) ImageInputs() []string {
	var out []string
	for _, f := range m.Inputs {
		if f.Kind == "image" {
			out = append(out, f.Name)
		}
	}
	return out
}

// Models lists the models the server serves.
func (cl *Client) Models(ctx context.Context) ([]Model, error) {
	resp, body, err := cl.do(ctx, call{method: "GET", path: "/api/v1/models"})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, apiError(resp, body)
	}
	var out struct {
		Models []Model `json:"models"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("gengate: unreadable model list: %w", err)
	}
	return out.Models, nil
}

// Model returns one model of the list (read once per Client).
func (cl *Client) Model(ctx context.Context, id string) (Model, error) {
	cl.modelsMu.Lock()
	defer cl.modelsMu.Unlock()
	if cl.models == nil {
		ms, err := cl.Models(ctx)
		if err != nil {
			return Model{}, err
		}
		cl.models = map[string]Model{}
		for _, m := range ms {
			cl.models[m.ID] = m
		}
	}
	m, ok := cl.models[id]
	if !ok {
		return Model{}, &Error{Status: http.StatusBadRequest, Code: CodeInvalid,
			Message: fmt.Sprintf("unknown model %q; GET /api/v1/models lists them", id),
			Fields:  []FieldError{{Field: "modelId", Code: "INVALID_VALUE", Message: "unknown model"}}}
	}
	return m, nil
}
