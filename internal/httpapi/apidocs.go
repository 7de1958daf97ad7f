package httpapi

import (
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strings"
)

// The API reference page (GET /docs/api): the OpenAPI document rendered
// on the server as one HTML page, no script, no external asset.

var apiDocsPage = template.Must(template.New("api").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>gengate API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code,pre{font:13px ui-monospace,monospace;background:#f4f4f6;border-radius:4px}
pre{padding:.6rem;overflow-x:auto}code{padding:0 .2rem}
.op{border:1px solid #ddd;border-radius:6px;margin:1rem 0;padding:.6rem 1rem}
.m{font-weight:700;text-transform:uppercase;display:inline-block;min-width:4rem}
table{border-collapse:collapse;margin:.4rem 0}td,th{border-bottom:1px solid #eee;padding:.2rem .6rem;text-align:left;vertical-align:top}
details{margin:.4rem 0}
</style></head><body>
<h1>gengate API reference</h1>
<p>{{.Description}} The machine-readable document is <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI {{.Version}}).</p>
<h2>Endpoints</h2>
{{range .Ops}}<div class="op" id="{{.ID}}"><span class="m">{{.Method}}</span> <code>{{.Path}}</code>{{if .Auth}} <small>(API key or session)</small>{{end}}
<p>{{.Summary}}</p>
<table><tr><th>Status</th><th>Meaning</th></tr>{{range .Responses}}<tr><td>{{.Status}}</td><td>{{.Description}}</td></tr>{{end}}</table></div>
{{end}}
<h2>Models: generate bodies</h2>
<p>Each model's <code>POST /api/v1/generate</code> body, as JSON Schema (<code>components.schemas.Generate_&lt;modelId&gt;</code>).</p>
{{range .Models}}<details id="model-{{.ID}}"><summary><code>{{.ID}}</code></summary><pre>{{.Schema}}</pre></details>
{{end}}
<h2>Error codes</h2>
<p>{{range .Codes}}<code>{{.}}</code> {{end}}</p>
</body></html>
`))

type docOp struct {
	ID, Method, Path, Summary string
	Auth                      bool
	Responses                 []docResponse
}

type docResponse struct{ Status, Description string }

type docModel struct{ ID, Schema string }

// handleAPIDocs is GET /docs/api.
func (a *api) handleAPIDocs() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc := OpenAPI(a.svc.Catalog)
		info := doc["info"].(obj)
		paths := doc["paths"].(obj)
		var ops []docOp
		for _, p := range sortedKeys(paths) {
			methods := paths[p].(obj)
			for _, m := range []string{"get", "post", "patch", "delete"} {
				o, ok := methods[m].(obj)
				if !ok {
					continue
				}
				d := docOp{ID: m + strings.NewReplacer("/", "-", "{", "", "}", "").Replace(p), Method: m, Path: p, Summary: o["summary"].(string)}
				sec, _ := o["security"].([]obj)
				d.Auth = len(sec) > 0
				rs := o["responses"].(obj)
				for _, st := range sortedKeys(rs) {
					desc, _ := rs[st].(obj)["description"].(string)
					d.Responses = append(d.Responses, docResponse{st, desc})
				}
				ops = append(ops, d)
			}
		}
		schemas := doc["components"].(obj)["schemas"].(obj)
		var models []docModel
		for _, m := range a.svc.Catalog.Models() {
			b, _ := json.MarshalIndent(schemas["Generate_"+m.ID], "", "  ")
			models = append(models, docModel{m.ID, string(b)})
		}
		codes := append([]string(nil), problemCodes...)
		sort.Strings(codes)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_ = apiDocsPage.Execute(w, map[string]any{"Description": info["description"], "Version": doc["openapi"],
			"Ops": ops, "Models": models, "Codes": codes})
	})
}
