package httpapi

// The OpenAPI 3.1 description of the API (GET /api/v1/openapi.json), built
// from the routes below and, for the generate body, from the catalog: one
// JSON Schema per model with its inputs and options. Tests validate the
// server's real answers against it (openapi_test.go).

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/gengate/gengate"
)

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func arr(items any) obj { return obj{"type": "array", "items": items} }

func str() obj { return obj{"type": "string"} }

func integer() obj { return obj{"type": "integer"} }

// anyOfTypes is a value of one of several JSON types, as a oneOf of
// single-typed schemas: code generators (oapi-codegen) refuse a schema whose
// type lists several, and make a union type of this.
func anyOfTypes(types ...string) obj {
	alts := make([]any, len(types))
	for i, t := range types {
		alts[i] = obj{"type": t}
	}
	return obj{"oneOf": alts}
}

// object is a JSON object schema; required names members always present.
func object(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// closed is object for a request body the handler decodes with unknown
// members refused (decodeBody).
func closed(props obj, required ...string) obj {
	o := object(props, required...)
	o["additionalProperties"] = false
	return o
}

// with returns a copy of props with more members.
func with(props obj, more obj) obj {
	out := obj{}
	for k, v := range props {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var problemCodes = []string{
	gengate.EInvalid, gengate.EUnsupportedOption, gengate.EUnauthorized, gengate.EInsufficient, gengate.ENotFound,
	gengate.EMethodNotAllowed, gengate.ENeedsReview, gengate.EKeyInUse, gengate.EConflict, gengate.ETooLarge,
	gengate.EUnsupportedMedia, gengate.EKeyReused, gengate.ERateLimited, gengate.EFailed, gengate.EInternal,
	"FORBIDDEN", "CSRF_TOKEN_INVALID", "INVALID_CREDENTIALS", "INVALID_LINK", "SIGNUP_CLOSED", "EMAIL_TAKEN",
	"SPEND_LIMIT_EXCEEDED", gengate.ECodeUnknown, gengate.ECodeUsed, gengate.ECodeExpired, gengate.ESignature, gengate.ECrossOrigin, gengate.EKeyWider, gengate.EKeyLimit,
	gengate.EOverloaded, gengate.ECanceled, gengate.ETaskFinished, gengate.ETaskBusy,
}

var fieldCodes = []string{
	gengate.FieldRequired, gengate.FieldType, gengate.FieldValue, gengate.FieldUnknown, gengate.FieldUnsupported,
	gengate.FieldTooLong, gengate.InputFetchFailed, gengate.InputNotAllowed, gengate.InputTooLarge,
	gengate.InputNotSupported, gengate.InputUndecodable, gengate.InputForbidden, "INPUT_DECODE_TOO_LARGE",
}

// fieldSchema is the JSON Schema of one catalog field.
func fieldSchema(f gengate.Field) obj {
	var s obj
	switch f.Kind {
	case gengate.KindEnum:
		s = obj{"type": "string", "enum": f.Values}
	case gengate.KindInt:
		s = integer()
		if len(f.Values) > 0 {
			s["enum"] = f.Values
		}
	case gengate.KindNumber:
		s = obj{"type": "number"}
	case gengate.KindBool:
		s = obj{"type": "boolean"}
	case string(gengate.KindImage), string(gengate.KindVideo):
		s = obj{"type": "string", "description": "the " + f.Kind + " by http(s) URL, data: URL or gengate file URL (an upload or an output)"}
	default:
		s = str()
		if f.MaxLength > 0 {
			s["maxLength"] = f.MaxLength
		}
	}
	if f.Min != nil {
		s["minimum"] = *f.Min
	}
	if f.Max != nil {
		s["maximum"] = *f.Max
	}
	if f.Default != nil {
		s["default"] = f.Default
	}
	if f.Description != "" {
		s["description"] = f.Description
	}
	return s
}

// modelSchema is the generate body of one model.
func modelSchema(m *gengate.Model) obj {
	props := obj{"type": obj{"const": m.Type}, "modelId": obj{"const": m.ID}}
	required := []string{"type", "modelId"}
	nested := obj{}
	var nestedRequired []string
	for _, f := range m.Fields() {
		if name, ok := strings.CutPrefix(f.Name, "inputs."); ok {
			nested[name] = fieldSchema(f)
			if f.Required {
				nestedRequired = append(nestedRequired, name)
			}
			continue
		}
		props[f.Name] = fieldSchema(f)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	if _, ok := props["numOutputs"]; !ok { // the spec's general field: 1 on a single-output model
		props["numOutputs"] = obj{"type": "integer", "const": 1, "description": "This model makes one output per request."}
	}
	props["webhookUrl"] = obj{"type": "string", "format": "uri", "maxLength": gengate.MaxWebhookURLLength,
		"description": "Where the task's final-state event is POSTed (Standard Webhooks, signed with GET /api/v1/webhooks/secret)."}
	in := obj{"type": "object", "properties": nested, "additionalProperties": false}
	if len(nestedRequired) > 0 {
		in["required"] = nestedRequired
	}
	props["inputs"] = in
	return obj{"type": "object", "title": m.Name, "description": m.Description, "properties": props,
		"required": required, "additionalProperties": false}
}

// response is one documented answer.
func response(desc string, schema obj, headers ...string) obj {
	r := obj{"description": desc}
	if schema != nil {
		ct := "application/json"
		if schema["$ref"] == "#/components/schemas/Problem" {
			ct = "application/problem+json"
		}
		r["content"] = obj{ct: obj{"schema": schema}}
	}
	h := obj{"X-Request-Id": obj{"description": "identifies the request in the logs", "schema": str()}}
	for _, name := range headers {
		h[name] = obj{"schema": str()}
	}
	r["headers"] = h
	return r
}

func problem(desc string) obj { return response(desc, ref("Problem")) }

// op is one operation: its summary, whether it takes a key, and its answers.
func op(summary string, auth bool, responses obj, extra ...obj) obj {
	o := obj{"summary": summary, "responses": responses}
	if auth {
		o["security"] = []obj{{"bearer": []string{}}, {"apiKey": []string{}}, {"session": []string{}}}
		if _, ok := responses["401"]; !ok {
			responses["401"] = response("missing, invalid or revoked API key", ref("Problem"), "WWW-Authenticate")
		}
		if _, ok := responses["500"]; !ok {
			responses["500"] = problem("INTERNAL: the database or the file store failed")
		}
		withConnBudget(responses)
		// OpenAPI() adds 403 CSRF_TOKEN_INVALID to the methods other than
		// GET (withCSRF).
	} else {
		o["security"] = []obj{}
	}
	for _, e := range extra {
		for k, v := range e {
			o[k] = v
		}
	}
	return o
}

// withCSRF documents, on every operation that takes credentials and may
// change something (a method other than GET), the 403 a session cookie
// without its X-CSRF-Token gets. The OpenAI-compatible endpoints take API
// keys only.
func withCSRF(paths obj) {
	for p, item := range paths {
		for method, o := range item.(obj) {
			op := o.(obj)
			sec, _ := op["security"].([]obj)
			if method == "get" || len(sec) == 0 || strings.HasPrefix(p, "/v1/") {
				continue
			}
			responses := op["responses"].(obj)
			if r, ok := responses["403"].(obj); ok {
				r["description"] = r["description"].(string) + "; or CSRF_TOKEN_INVALID: a session cookie without its X-CSRF-Token"
				continue
			}
			responses["403"] = problem("CSRF_TOKEN_INVALID: a session cookie without its X-CSRF-Token")
		}
	}
}

// smallBody documents the 413 of the operations that read a small JSON
// body (decodeBody, --max-json-body).
func smallBody(responses obj) obj {
	responses["413"] = problem("PAYLOAD_TOO_LARGE: the body is over --max-json-body")
	return responses
}

// signInDoor documents the answers of the sign-in door (crossorigin.go):
// 403 CROSS_ORIGIN_REQUEST for another site's page, and, for an operation
// with a body (json), 415 for a body that is not application/json.
func signInDoor(responses obj, json bool) obj {
	if _, ok := responses["403"]; !ok {
		responses["403"] = problem("CROSS_ORIGIN_REQUEST: sent by another site's page")
	}
	if json {
		responses["415"] = problem("UNSUPPORTED_MEDIA_TYPE: the body is not application/json")
	}
	return responses
}

// bodyBusy is the 503 of an operation whose body finds the body memory
// spent (body.go).
const bodyBusy = "the request bodies being read hold --max-body-memory; nothing was read or changed"

// withBodyLimits documents, on every operation that takes a body, the
// refusals of the body door (body.go): 413 over the route's cap
// (x-gengate-body in the served document) and 503 OVERLOADED when the
// body memory is spent.
func withBodyLimits(paths obj) {
	for p, item := range paths {
		for _, o := range item.(obj) {
			op := o.(obj)
			if _, ok := op["requestBody"]; !ok {
				continue
			}
			responses := op["responses"].(obj)
			if strings.HasPrefix(p, "/v1/") {
				continue // OpenAI's shapes: documented with the operation
			}
			if _, ok := responses["413"]; !ok {
				responses["413"] = problem("PAYLOAD_TOO_LARGE: the body is over this operation's cap (x-gengate-body.maxBytes)")
			}
			r, ok := responses["503"].(obj)
			if !ok {
				responses["503"] = response("OVERLOADED: "+bodyBusy, ref("Problem"), "Retry-After")
				continue
			}
			if d, _ := r["description"].(string); !strings.Contains(d, "--max-body-memory") {
				r["description"] = d + "; or OVERLOADED: " + bodyBusy
			}
		}
	}
}

// withStore documents the 500 of an operation without credentials that
// reads the database or the file store.
func withStore(responses obj) obj {
	responses["500"] = problem("INTERNAL: the database or the file store failed")
	return withConnBudget(responses)
}

// dbWait is the 503 of every operation that reads the database (dbgate.go).
const dbWait = "no database connection came free within --db-wait (PostgreSQL); nothing was read or changed"

// withConnBudget documents the 503 OVERLOADED of an operation that reads
// the database, with the operation's own reasons for a 503 if it has any.
func withConnBudget(responses obj) obj {
	r, ok := responses["503"].(obj)
	if !ok {
		responses["503"] = response("OVERLOADED: "+dbWait, ref("Problem"), "Retry-After")
		return responses
	}
	if d, _ := r["description"].(string); !strings.Contains(d, "--db-wait") && !strings.Contains(d, "overloaded") {
		r["description"] = d + "; or OVERLOADED: " + dbWait
	}
	return responses
}

// withCSV adds a list's CSV form (?format=csv) to its 200 answer.
func withCSV(r obj) obj {
	r["content"].(obj)["text/csv"] = obj{"schema": obj{"type": "string", "description": "a header row, then one row per item"}}
	return r
}

func jsonBody(schema obj) obj {
	return obj{"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": schema}}}}
}

func pathParam(name string) obj {
	return obj{"parameters": []obj{{"name": name, "in": "path", "required": true, "schema": str()}}}
}

// pathAndQuery is a path parameter and optional query parameters.
func pathAndQuery(path string, query ...string) obj {
	ps := pathParam(path)["parameters"].([]obj)
	return obj{"parameters": append(ps, queryParams(query...)["parameters"].([]obj)...)}
}

func queryParams(names ...string) obj {
	ps := []obj{}
	for _, n := range names {
		ps = append(ps, obj{"name": n, "in": "query", "required": false, "schema": str()})
	}
	return obj{"parameters": ps}
}

// page is a list answer: its items and, unless it is the last page,
// nextCursor.
func page(item obj) obj { return object(obj{"data": arr(item), "nextCursor": str()}, "data") }

// OpenAPI returns the API's OpenAPI 3.1 document for a catalog. Each area
// of the API describes its own paths (openapi_<area>.go); the schemas
// they refer to are in openapi_schemas.go.
func OpenAPI(c *gengate.Catalog) obj {
	paths := obj{}
	for _, area := range []obj{generationPaths(), filePaths(), openAIPaths(), webhookPaths(),
		accountPaths(), adminPaths(), servicePaths()} {
		for path, item := range area {
			paths[path] = item
		}
	}
	withCSRF(paths)
	withBodyLimits(paths)
	withOperationIDs(paths)
	return obj{
		"openapi": "3.1.0",
		"info": obj{"title": "gengate", "version": "1",
			"description": "Image and video generation models behind one API, with API keys, credits, idempotent retries and durable tasks. docs/api.md is the prose reference."},
		// A relative URL is relative to where this document is served
		// (OpenAPI 3.1, "Server Object"): the server that answers it.
		"servers":  []obj{{"url": "/", "description": "the server this document was read from"}},
		"paths":    paths,
		"webhooks": webhooks(),
		"components": obj{"schemas": openAPISchemas(c), "securitySchemes": obj{
			"bearer":  obj{"type": "http", "scheme": "bearer"},
			"apiKey":  obj{"type": "apiKey", "in": "header", "name": "X-API-Key"},
			"session": obj{"type": "apiKey", "in": "cookie", "name": "gengate_session"},
		}},
	}
}

// handleOpenAPI is GET /api/v1/openapi.json.
func (a *api) handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		a.openAPIOnce.Do(func() {
			doc := OpenAPI(a.svc.Catalog)
			a.withBodies(doc)
			a.openAPI, _ = json.Marshal(doc)
		})
		_, _ = w.Write(a.openAPI)
	})
}

// withBodies adds to each operation of doc its route's body declaration
// (body.go) as x-gengate-body: {kind, maxBytes}. An operation whose route
// declared nothing gets none (the body bounds test refuses that).
func (a *api) withBodies(doc obj) {
	for p, item := range doc["paths"].(obj) {
		for method, o := range item.(obj) {
			spec, ok := a.declared[strings.ToUpper(method)+" "+p]
			if !ok {
				spec, ok = a.declared[p] // a pattern for every method
			}
			if !ok {
				continue
			}
			o.(obj)["x-gengate-body"] = BodyDecl{Kind: spec.kind.String(), MaxBytes: spec.max}
		}
	}
	// Every route that takes a body, so that the body bound tests reach
	// the routes the paths above leave out.
	bodies := map[string]BodyDecl{}
	for pattern, spec := range a.declared {
		if spec.kind != kindNone {
			bodies[pattern] = BodyDecl{Kind: spec.kind.String(), MaxBytes: spec.max}
		}
	}
	doc["x-gengate-bodies"] = bodies
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m obj) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// webhooks is the document's webhooks section (OpenAPI 3.1): one operation
// per event type, the POST gengate sends to a task's webhookUrl and to an
// endpoint that takes the type, with its payload and Standard Webhooks
// headers (docs/api.md, "Webhooks").
func webhooks() obj {
	headers := []obj{
		{"name": "webhook-id", "in": "header", "required": true, "schema": str(),
			"description": "msg_<uuid>, the same on every attempt of an event and on a replay: deduplicate on it"},
		{"name": "webhook-timestamp", "in": "header", "required": true, "schema": str(), "description": "Unix seconds of the attempt"},
		{"name": "webhook-signature", "in": "header", "required": true, "schema": str(),
			"description": "v1,<base64 HMAC-SHA256 of id.timestamp.body>; two, space-separated, while a rotated-out secret still signs"},
	}
	out := obj{}
	for _, et := range gengate.EventTypes {
		id := webhookOperationID(et)
		// The payload is written in place, not as a component: oapi-codegen
		// drops the components no path refers to, then fails on the
		// webhook's reference to one.
		payload := object(obj{
			"type":      obj{"type": "string", "const": et},
			"timestamp": obj{"type": "string", "format": "date-time", "description": "when the task reached the state (RFC 3339, UTC, milliseconds)"},
			"data":      ref("TaskRecord"),
		}, "type", "timestamp", "data")
		out[et] = obj{"post": obj{
			"operationId": id,
			"summary":     "The " + et + " event, sent when a task reaches that state",
			"parameters":  headers,
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": payload}}},
			"responses":   obj{"200": obj{"description": "any 2xx answer acknowledges the event; another answer, or none within --webhook-timeout, is retried"}},
		}}
	}
	return out
}
