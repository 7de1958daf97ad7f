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

// OpenAPI returns the API's OpenAPI 3.1 document for a catalog.
func OpenAPI(c *gengate.Catalog) obj {
	var models []any
	schemas := obj{}
	for _, m := range c.Models() {
		name := "Generate_" + m.ID
		schemas[name] = modelSchema(m)
		models = append(models, ref(name))
	}
	schemas["GenerateRequest"] = obj{"oneOf": models, "description": "one schema per model, chosen by modelId"}
	schemas["FieldError"] = object(obj{"field": str(), "code": obj{"type": "string", "enum": fieldCodes}, "message": str()}, "field", "code", "message")
	schemas["Problem"] = object(obj{
		"type": str(), "title": str(), "status": integer(), "detail": str(),
		"code":      obj{"type": "string", "enum": problemCodes},
		"requestId": str(), "errors": arr(ref("FieldError")), "omittedErrors": integer(),
		"jobId": str(), "jobStatus": str(), "reason": str(), "refunded": obj{"type": "boolean"},
		"creditsRefunded": integer(), "remainingCredits": integer(), "requiredCredits": integer(),
		"retryAfter": obj{"type": "integer", "description": "seconds, as in Retry-After"},
		"keyId":      str(), "spendLimit": integer(), "spentToday": integer(),
		"maxSpendLimit": obj{"type": "integer", "description": "KEY_WIDER_THAN_CALLER: the calling key's own daily limit"},
		"maxKeys":       obj{"type": "integer", "description": "KEY_LIMIT_REACHED: the cap of active keys (--max-keys)"},
	}, "type", "title", "status", "detail", "code")
	schemas["ImageResult"] = object(obj{"jobId": str(), "images": arr(str()), "remainingCredits": integer()}, "jobId", "images", "remainingCredits")
	schemas["VideoResult"] = object(obj{"jobId": str(), "video": str(), "remainingCredits": integer()}, "jobId", "video", "remainingCredits")
	schemas["TaskAccepted"] = object(obj{"jobId": str(), "status": obj{"const": "processing"}, "statusUrl": str()}, "jobId", "status", "statusUrl")
	taskRecord := obj{
		"jobId": str(), "status": obj{"type": "string", "enum": []string{"processing", "succeeded", "failed", "needs_review", "canceled"}},
		"type": str(), "modelId": str(), "cost": integer(), "createdAt": str(), "updatedAt": str(), "completedAt": str(),
		"statusUrl": str(), "images": arr(str()), "video": str(), "error": ref("TaskError"),
		"route": object(obj{"engine": str(), "upstream": str()}, "engine"),
		"progress": object(obj{"queuePosition": integer(), "upstreamStatus": str(), "percent": obj{"type": "number"},
			"logs": arr(str()), "updatedAt": str()}, "logs", "updatedAt"),
		"webhook": object(obj{"events": arr(object(obj{"id": str(), "type": str(), "url": str(),
			"status": obj{"type": "string", "enum": []string{"pending", "delivered", "failed"}}, "attempts": integer(),
			"createdAt": str(), "nextAttemptAt": str(), "deliveredAt": str(),
			"deliveries": arr(object(obj{"attempt": integer(), "at": str(), "status": integer(), "error": str()}, "attempt", "at", "status")),
		}, "id", "type", "url", "status", "attempts", "createdAt", "deliveries"))}, "events"),
		"prompt": str(), "options": obj{"type": "object", "description": "every option of the model, as given or defaulted",
			"additionalProperties": anyOfTypes("string", "number", "boolean")},
		"inputs": obj{"type": "object", "additionalProperties": str(), "description": "input field → the URL the task was given"},
		"engine": str(), "placeholder": obj{"type": "boolean"},
		"test": obj{"const": true, "description": "made with a test key: ran on the sandbox, charged nothing"},
	}
	// A finished task's error member (taskRecord), one shape per status.
	schemas["TaskError"] = obj{"oneOf": []any{
		object(obj{"code": obj{"const": gengate.EFailed}, "message": str(), "refunded": obj{"const": true},
			"creditsRefunded": integer(), "reason": obj{"type": "string", "description": "the failure's own code (e.g. DEADLINE_EXCEEDED), absent for a plain failure"}},
			"code", "message", "refunded", "creditsRefunded"),
		object(obj{"code": obj{"const": gengate.ECanceled}, "message": str(), "refunded": obj{"type": "boolean"},
			"creditsRefunded": integer(), "reason": obj{"type": "string", "enum": []string{gengate.CodeCanceledRefunded, gengate.CodeCanceledCharged}}},
			"code", "message", "refunded", "creditsRefunded", "reason"),
		object(obj{"code": obj{"const": gengate.ENeedsReview}, "message": str()}, "code", "message"),
	}, "description": "failed: its failure and refund; canceled: its refund; needs_review: what to do"}
	taskRequired := []string{"jobId", "status", "type", "modelId", "cost", "createdAt", "updatedAt", "statusUrl"}
	schemas["TaskRecord"] = object(taskRecord, taskRequired...)
	schemas["CanceledTask"] = object(with(taskRecord, obj{"remainingCredits": integer()}), append(taskRequired, "remainingCredits")...)
	schemas["ReviewTask"] = object(with(taskRecord, obj{"accountId": str(), "accountName": str(), "reviewReason": str()}),
		append(taskRequired, "accountId", "accountName", "reviewReason")...)
	schemas["Field"] = object(obj{"name": str(),
		"kind":     obj{"type": "string", "enum": []string{string(gengate.KindText), string(gengate.KindImage), string(gengate.KindVideo), gengate.KindEnum, gengate.KindInt, gengate.KindNumber, gengate.KindBool}},
		"required": obj{"type": "boolean"}, "description": str(),
		"values": arr(anyOfTypes("string", "number")), "min": obj{"type": "number"}, "max": obj{"type": "number"}, "maxLength": integer(),
		"default": anyOfTypes("string", "number", "boolean")}, "name", "kind")
	schemas["Model"] = object(obj{"id": str(), "type": str(), "name": str(), "description": str(), "credits": integer(),
		"varies": obj{"type": "boolean"}, "pricing": ref("Pricing"), "inputs": arr(ref("Field")), "options": arr(ref("Field")),
		"engine": str(), "placeholder": obj{"type": "boolean"}, "typicalLatencySeconds": integer(), "legacy": obj{"type": "boolean"}},
		"id", "type", "name", "credits", "inputs", "options", "engine", "placeholder")
	// A model's price rule (gengate.PriceRule; docs/pricing.md).
	schemas["Pricing"] = object(obj{
		"unit":           obj{"type": "string", "enum": []string{gengate.PerRequest, gengate.PerOutput, gengate.PerSecond}},
		"durationOption": obj{"type": "string", "description": "the option whose seconds a per-second price counts"},
		"multipliers": obj{"type": "object", "description": "option name → option value → factor of the cost",
			"additionalProperties": obj{"type": "object", "additionalProperties": obj{"type": "number"}}},
		"note": str(),
	}, "unit")
	schemas["Upload"] = object(obj{"url": str(), "contentType": str(), "size": integer(), "expiresAt": str()}, "url", "contentType", "size")
	schemas["OpenAIImagesResponse"] = object(obj{"created": integer(), "output_format": str(),
		"data": arr(object(obj{"url": str(), "b64_json": str()}))}, "created", "data")
	schemas["OpenAIError"] = object(obj{"error": object(obj{"message": str(), "type": str(),
		"param": obj{"type": []string{"string", "null"}}, "code": obj{"type": []string{"string", "null"}}}, "message", "type")}, "error")
	oaParams := obj{"model": obj{"type": "string", "description": "a gengate modelId"}, "prompt": str(),
		"n":               obj{"type": "integer", "minimum": 1, "description": "numOutputs; 1 on a single-output model"},
		"size":            obj{"type": "string", "description": "WIDTHxHEIGHT or auto: the model's nearest aspectRatio"},
		"response_format": obj{"type": "string", "enum": []string{"url", "b64_json"}}, "output_format": str(), "quality": str()}
	schemas["OpenAIImageRequest"] = obj{"type": "object", "properties": oaParams, "required": []string{"model"},
		"additionalProperties": true, "description": "OpenAI's image parameters; any other member is one of the model's own options " +
			"(GET /api/v1/models lists them), e.g. scale for image-upscaler; OpenAI parameters gengate does not map (style, background, user, ...) are ignored"}
	binary := obj{"type": "string", "format": "binary"}
	schemas["OpenAIImageEditRequest"] = obj{"type": "object", "properties": with(oaParams, obj{
		"image":   with(binary, obj{"description": "the input image; several as image[]"}),
		"image[]": obj{"type": "array", "items": binary, "x-go-name": "Images", "description": "several input images, as OpenAI's SDKs send a list (the model's image inputs in order)"},
		"mask":    binary,
	}), "required": []string{"model"}, "additionalProperties": true,
		"description": "multipart/form-data: image or image[] (at least one), OpenAI's parameters, and any of the model's own options as form fields (e.g. scale=2 for image-upscaler)"}
	// page is a list answer: its items and, unless it is the last page, nextCursor.
	page := func(item obj) obj { return object(obj{"data": arr(item), "nextCursor": str()}, "data") }
	keyPattern := "^(" + gengate.KeyPrefix + "|" + gengate.TestKeyPrefix + ")"
	key := obj{"id": str(), "name": str(), "prefix": obj{"type": "string", "pattern": keyPattern},
		"createdAt": str(), "lastUsedAt": str(), "revokedAt": str(), "spendLimit": integer(), "spentToday": integer(),
		"test":     obj{"const": true, "description": "a test key: its generations run on the sandbox and charge nothing"},
		"operator": obj{"const": true, "description": "an operator key, which only the CLI makes"}}
	keyRequired := []string{"id", "name", "prefix", "createdAt", "spentToday"}
	schemas["Key"] = object(key, keyRequired...)
	schemas["KeyCreated"] = object(with(key, obj{"key": obj{"type": "string", "pattern": keyPattern,
		"description": "the secret, in this answer only"}}), append(keyRequired, "key")...)
	schemas["Quote"] = object(obj{"modelId": str(), "type": str(), "cost": integer(), "remainingCredits": integer(),
		"engine": str(), "placeholder": obj{"type": "boolean"}}, "modelId", "type", "cost", "remainingCredits", "engine", "placeholder")
	schemas["Replication"] = object(obj{
		"status":            obj{"type": "string", "enum": []string{"ok", "behind", "failing"}, "description": "behind: the lag is over 10 × --replicate-interval (at least 10 s); failing: the last copy failed (error says why)"},
		"target":            obj{"type": "string", "description": "the replica's bucket and prefix, s3://bucket/prefix"},
		"lagSeconds":        obj{"type": "number", "description": "every write older than this is in the replica"},
		"replicatedThrough": obj{"type": "string", "format": "date-time", "description": "every write committed, and file written, before this time is in the replica"},
		"txid":              str(),
		"filesPending":      integer(),
		"interval":          str(),
		"error":             str(),
	}, "status", "target", "lagSeconds", "filesPending", "interval")
	schemas["Engine"] = object(obj{"name": str(), "kind": obj{"type": "string", "enum": []string{"provider", "builtin", "sandbox"}},
		"models": arr(object(obj{"modelId": str(), "routes": arr(object(obj{"provider": str(), "model": str()}, "provider", "model"))}, "modelId", "routes")),
		"status": obj{"type": "string", "enum": []string{"ok", "unreachable", "unknown"}}, "checkedAt": str()}, "name", "kind", "models", "status")
	spendLimit := obj{"type": []string{"integer", "null"}, "minimum": 1, "description": "credits per UTC day; null for none"}
	eventTypes := arr(obj{"type": "string", "enum": gengate.EventTypes})
	endpoint := obj{"id": str(), "url": str(), "eventTypes": eventTypes, "createdAt": str(),
		"previousSecretExpiresAt": obj{"type": "string", "description": "while a rotated-out secret still signs"}}
	schemas["WebhookEndpoint"] = object(endpoint, "id", "url", "eventTypes", "createdAt")
	created := obj{"secret": obj{"type": "string", "pattern": "^whsec_"}}
	for k, v := range endpoint {
		created[k] = v
	}
	schemas["WebhookEndpointCreated"] = object(created, "id", "url", "eventTypes", "createdAt", "secret")
	schemas["WebhookSecretRotation"] = object(obj{"secret": obj{"type": "string", "pattern": "^whsec_"},
		"previousSecretExpiresAt": str()}, "secret", "previousSecretExpiresAt")
	schemas["WebhookAttempt"] = object(obj{"eventId": str(), "jobId": str(), "type": obj{"type": "string", "enum": gengate.EventTypes},
		"url": str(), "attempt": integer(), "at": str(), "status": obj{"type": "integer", "description": "the receiver's HTTP status, 0 for none"},
		"error": str(), "eventStatus": obj{"type": "string", "enum": []string{"pending", "delivered", "failed"}}},
		"eventId", "jobId", "type", "url", "attempt", "at", "status", "eventStatus")
	schemas["WebhookEventReplay"] = object(obj{"id": str(), "jobId": str(), "type": str(), "url": str(),
		"status": obj{"const": "pending"}, "attempts": integer(), "nextAttemptAt": str()}, "id", "jobId", "type", "url", "status", "attempts", "nextAttemptAt")

	oaErr := func(desc string) obj {
		return obj{"description": desc, "content": obj{"application/json": obj{"schema": ref("OpenAIError")}}, "headers": obj{"x-should-retry": obj{"schema": str()}}}
	}
	oaOK := obj{"description": "the images", "content": obj{"application/json": obj{"schema": ref("OpenAIImagesResponse")}}}
	oaResponses := func() obj {
		return obj{"200": oaOK, "400": oaErr("bad parameter, or a failed generation caused by its input"), "401": oaErr("bad key"),
			"402": oaErr("spend_limit_exceeded: the key's daily spend limit"),
			"404": oaErr("unknown model"), "409": oaErr("in review"),
			"429": oaErr("insufficient_quota or rate_limit_exceeded"), "500": oaErr("internal error"),
			"502": oaErr("generation failed upstream (refunded)"), "503": oaErr("generation_pending, or overloaded"), "504": oaErr("deadline exceeded (refunded)")}
	}
	oaGenerations := oaResponses()
	oaGenerations["413"] = oaErr("payload_too_large: the body is over --max-json-body")
	oaEdits := oaResponses()
	oaEdits["413"] = oaErr("payload_too_large: the multipart body is over twice the input size limit")
	outcome := func() obj {
		return obj{
			"200": response("finished: the images or the video", obj{"oneOf": []any{ref("ImageResult"), ref("VideoResult")}}),
			"202": response("still running: poll statusUrl", ref("TaskAccepted"), "Location", "Retry-After"),
			"404": problem("NOT_FOUND"),
			"409": problem("GENERATION_NEEDS_REVIEW, GENERATION_CANCELED (final), or a failure refunded after review (GENERATION_FAILED)"),
			"422": problem("GENERATION_FAILED: the input or the prompt was refused (refunded)"),
			"502": problem("GENERATION_FAILED: the upstream failed (refunded)"),
			"504": problem("GENERATION_FAILED: deadline exceeded (refunded)"),
		}
	}
	gen := outcome()
	delete(gen, "404")
	for k, v := range (obj{
		"400": problem("INVALID_REQUEST or UNSUPPORTED_MODEL_OPTION; errors[] names each field"),
		"402": problem("INSUFFICIENT_CREDITS or SPEND_LIMIT_EXCEEDED"),
		"413": problem("PAYLOAD_TOO_LARGE"), "415": problem("UNSUPPORTED_MEDIA_TYPE"),
		"422": problem("IDEMPOTENCY_KEY_REUSED, or GENERATION_FAILED on the input (refunded)"),
		"429": response("RATE_LIMITED", ref("Problem"), "Retry-After"),
		"503": response("OVERLOADED: this process's input decoding or CPU work is all taken, or no database connection came free within --db-wait; nothing was charged", ref("Problem"), "Retry-After"),
	}) {
		gen[k] = v
	}
	generateParams := obj{"parameters": []obj{
		{"name": "Idempotency-Key", "in": "header", "required": false, "schema": obj{"type": "string", "maxLength": 255}},
		{"name": "Prefer", "in": "header", "required": false, "schema": str(), "description": "respond-async, or wait=N seconds"},
	}}
	account := obj{"id": str(), "name": str(), "remainingCredits": integer(), "createdAt": str(),
		"members": arr(object(obj{"id": str(), "email": str(), "role": str(), "createdAt": str()}, "id", "email", "role", "createdAt"))}
	accountRequired := []string{"id", "name", "remainingCredits", "createdAt", "members"}
	schemas["Account"] = object(account, accountRequired...)
	schemas["AccountWithKeys"] = object(with(account, obj{"keys": arr(ref("Key")), "keysNextCursor": str()}), append(accountRequired, "keys")...)
	schemas["LedgerPage"] = object(obj{"data": arr(object(obj{"id": str(), "kind": str(), "amount": integer(), "balanceAfter": integer(),
		"taskId": str(), "note": str(), "createdAt": str()}, "id", "kind", "amount", "balanceAfter", "createdAt")), "nextCursor": str()}, "data")
	session := object(obj{"member": object(obj{"id": str(), "email": str(), "role": str()}, "id", "email", "role"), "accountId": str(), "accountName": str(), "operator": obj{"type": "boolean"}, "csrfToken": str()})

	paths := obj{
		"/api/v1/generate": obj{"post": op("Create a generation task and wait for its result (Prefer: respond-async or wait=N)", true, gen,
			jsonBody(ref("GenerateRequest")), generateParams)},
		"/api/v1/models": obj{"get": op("List the models this server serves", true, obj{"200": response("the models",
			object(obj{"models": arr(ref("Model"))}, "models"))})},
		"/api/generation/jobs/{id}": obj{
			"get":  op("Read a task record", true, obj{"200": response("the task", ref("TaskRecord"), "Retry-After"), "404": problem("NOT_FOUND")}, pathParam("id")),
			"post": op("Run the task's next step now and answer like generate", true, outcome(), pathParam("id")),
		},
		"/api/generation/jobs/{id}/cancel": obj{
			"post": op("Cancel a task (docs/api.md has the rule table)", true, obj{
				"200": response("the canceled task, with remainingCredits", ref("CanceledTask")),
				"404": problem("NOT_FOUND"),
				"409": response("TASK_FINISHED, TASK_BUSY (with Retry-After), or CONFLICT for a task in review; nothing changed", ref("Problem"), "Retry-After"),
				"503": response("OVERLOADED: the provider could not be asked; nothing changed", ref("Problem"), "Retry-After"),
			}, pathParam("id")),
		},
		"/api/generation/jobs": obj{"get": op("List the account's tasks, newest first", true, obj{
			"200": withCSV(response("a page of task records; with format=csv every matching task as CSV, streamed", page(ref("TaskRecord")))),
			"400": problem("INVALID_REQUEST naming the bad parameter")},
			queryParams("status", "modelId", "type", "test", "format", "limit", "cursor"))},
		"/api/v1/files": obj{"post": op("Upload an input file (raw body or multipart/form-data with a file part)", true, obj{
			"201": response("the file's URL, usable as any input", ref("Upload"), "Location"),
			"400": problem("INPUT_UNDECODABLE or a missing file part"), "413": problem("INPUT_TOO_LARGE"),
			"415": problem("INPUT_UNSUPPORTED_TYPE"), "429": response("RATE_LIMITED", ref("Problem"), "Retry-After"),
			"503": response("OVERLOADED: this process's input decoding is all taken; nothing was stored", ref("Problem"), "Retry-After"),
		}, obj{"requestBody": obj{"required": true, "content": obj{
			"application/octet-stream": obj{"schema": obj{"type": "string", "format": "binary"}},
			"image/*":                  obj{"schema": obj{"type": "string", "format": "binary"}},
			"video/*":                  obj{"schema": obj{"type": "string", "format": "binary"}},
			"multipart/form-data":      obj{"schema": object(obj{"file": obj{"type": "string", "format": "binary"}}, "file")},
		}}})},
		"/files/{name}": obj{"get": op("Download an output or an upload (the token is the credential)", false, withStore(obj{
			"200": obj{"description": "the file", "content": obj{"*/*": obj{"schema": obj{"type": "string", "format": "binary"}}}},
			"206": obj{"description": "a range of the file", "content": obj{"*/*": obj{"schema": obj{"type": "string", "format": "binary"}}}},
			"304": obj{"description": "not modified"},
			"416": obj{"description": "the range is outside the file"},
			"404": problem("NOT_FOUND"),
		}), pathParam("name"))},
		"/files/in/{task}/{name}": obj{"get": op("A task's stored input, for the upstream it is sent to by URL (exp and sig are the credential)", false, obj{
			"200": obj{"description": "the input", "content": obj{"*/*": obj{"schema": obj{"type": "string", "format": "binary"}}}},
			"206": obj{"description": "a range of the input", "content": obj{"*/*": obj{"schema": obj{"type": "string", "format": "binary"}}}},
			"416": obj{"description": "the range is outside the input"},
			"403": problem("FORBIDDEN: the signature does not match or the URL expired"),
			"404": problem("NOT_FOUND: the input is deleted (its task finished) or this server signs no input URLs"),
		}, obj{"parameters": []obj{
			{"name": "task", "in": "path", "required": true, "schema": str()},
			{"name": "name", "in": "path", "required": true, "schema": str()},
			{"name": "exp", "in": "query", "required": true, "schema": str()},
			{"name": "sig", "in": "query", "required": true, "schema": str()},
		}})},
		"/v1/images/generations": obj{"post": op("OpenAI-compatible image generation (model is a gengate modelId)", true, oaGenerations,
			obj{"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("OpenAIImageRequest")}}}})},
		"/v1/images/edits": obj{"post": op("OpenAI-compatible image edit (multipart: image or image[], mask)", true, oaEdits,
			obj{"requestBody": obj{"required": true, "content": obj{"multipart/form-data": obj{"schema": ref("OpenAIImageEditRequest")}}}})},
		"/api/v1/webhooks/secret": obj{"get": op("The account's webhook signing secret (whsec_...), made on first use", true, obj{
			"200": response("the secret", object(obj{"secret": str()}, "secret"))})},
		// Webhook endpoints (webhooks.go; docs/api.md, "Webhooks").
		"/api/v1/webhooks/secret/rotate": obj{"post": op("Rotate the account's signing secret: the new one (shown once); the previous one signs beside it until previousSecretExpiresAt", true, obj{
			"200": response("the new secret", ref("WebhookSecretRotation"))})},
		"/api/v1/webhooks": obj{
			"get": op("The account's webhook endpoints", true, obj{"200": response("endpoints", object(obj{"data": arr(ref("WebhookEndpoint"))}, "data"))}),
			"post": op("Create a webhook endpoint (its secret is shown once)", true, obj{
				"201": response("the endpoint with its secret", ref("WebhookEndpointCreated"), "Location"),
				"400": problem("INVALID_REQUEST (url, eventTypes; INPUT_ADDRESS_NOT_ALLOWED for a private target)"),
				"409": problem("CONFLICT: the account has --max-webhook-endpoints endpoints already"),
			}, jsonBody(object(obj{"url": obj{"type": "string", "maxLength": gengate.MaxWebhookURLLength},
				"eventTypes": arr(obj{"type": "string", "enum": gengate.EventTypes})}, "url"))),
		},
		"/api/v1/webhooks/{id}": obj{"delete": op("Delete a webhook endpoint with its events and attempts", true, obj{
			"204": obj{"description": "deleted"}, "404": problem("NOT_FOUND")}, pathParam("id"))},
		"/api/v1/webhooks/{id}/rotate": obj{"post": op("Rotate an endpoint's signing secret: the new one (shown once); the previous one signs beside it until previousSecretExpiresAt", true, obj{
			"200": response("the new secret", ref("WebhookSecretRotation")), "404": problem("NOT_FOUND")}, pathParam("id"))},
		"/api/v1/webhooks/{id}/attempts": obj{"get": op("An endpoint's delivery attempts, newest first", true, obj{
			"200": response("a page of attempts", object(obj{"data": arr(ref("WebhookAttempt")), "nextCursor": str()}, "data")),
			"400": problem("INVALID_REQUEST: limit or cursor"), "404": problem("NOT_FOUND")},
			obj{"parameters": []obj{{"name": "id", "in": "path", "required": true, "schema": str()},
				{"name": "limit", "in": "query", "required": false, "schema": str()},
				{"name": "cursor", "in": "query", "required": false, "schema": str()}}})},
		"/api/v1/webhooks/events/{eventId}/replay": obj{"post": op("Send an event again (same webhook-id and payload), due now with a fresh retry schedule", true, obj{
			"202": response("the event, pending", ref("WebhookEventReplay")), "404": problem("NOT_FOUND")}, pathParam("eventId"))},
		"/api/v1/openapi.json": obj{"get": op("This document", false, obj{"200": response("OpenAPI 3.1", object(obj{
			"openapi": obj{"const": "3.1.0"}, "info": object(obj{"title": str(), "version": str(), "description": str()}, "title", "version"),
			"servers":    arr(object(obj{"url": str(), "description": str()}, "url")),
			"paths":      obj{"type": "object", "description": "as OpenAPI 3.1 defines it"},
			"webhooks":   obj{"type": "object", "description": "each event gengate sends, as OpenAPI 3.1 defines it"},
			"components": object(obj{"schemas": obj{"type": "object", "additionalProperties": obj{"type": "object"}}, "securitySchemes": obj{"type": "object"}}, "schemas", "securitySchemes"),
		}, "openapi", "info", "paths", "components"))})},
		"/docs/api": obj{"get": op("This document as an HTML reference page", false, obj{"200": obj{"description": "HTML",
			"content": obj{"text/html": obj{"schema": str()}}}})},
		"/healthz": obj{"get": op("The process runs", false, obj{"200": response("ok", object(obj{"status": str()}, "status"))})},
		"/readyz": obj{"get": op("The database answers", false, obj{"200": response("ready", object(obj{"status": str(),
			"providers": obj{"type": "object", "description": "each configured upstream provider's check at start (docs/api.md)",
				"additionalProperties": object(obj{"status": obj{"type": "string", "enum": []string{"checking", "ok", "key_refused", "unreachable", "error", "unchecked"}},
					"detail": str(), "checkedAt": str()}, "status")},
			"replication": ref("Replication"),
			"routes": object(obj{"checkedAt": str(),
				"retired": obj{"type": "array", "items": object(obj{"model": str(), "provider": str(), "upstream": str(),
					"state": obj{"type": "string", "enum": []string{"live", "unknown", "deprecated", "unchecked"}}, "reason": str(), "upstreamPrice": str()}, "model", "provider", "upstream", "state")},
				"unreachable": obj{"type": "object", "additionalProperties": str()}})}, "status")),
			"503": response("unavailable", object(obj{"status": str()}, "status"))})},
		"/metrics": obj{"get": op("Prometheus metrics: on the operator listener, or here with --metrics-token as a Bearer token", false, obj{
			"200": obj{"description": "Prometheus text", "content": obj{"text/plain": obj{"schema": str()}}},
			"401": problem("UNAUTHORIZED: the metrics token is missing or wrong"),
			"404": problem("NOT_FOUND: no metrics on this listener (no --metrics-token)")})},
		// The account area (docs/api.md has its members in full).
		"/api/v1/auth/signin":      obj{"post": op("Sign in with email and password", false, withStore(smallBody(signInDoor(obj{"200": response("the session", session, "Set-Cookie"), "400": problem("INVALID_REQUEST"), "401": problem("INVALID_CREDENTIALS"), "429": response("RATE_LIMITED", ref("Problem"), "Retry-After")}, true))))},
		"/api/v1/auth/link":        obj{"post": op("Use a one-time link", false, withStore(smallBody(signInDoor(obj{"200": response("the session", session, "Set-Cookie"), "400": problem("INVALID_REQUEST"), "401": problem("INVALID_LINK")}, true))))},
		"/api/v1/auth/signup":      obj{"post": op("Open sign-up", false, withStore(smallBody(signInDoor(obj{"201": response("the session", session, "Set-Cookie"), "400": problem("INVALID_REQUEST"), "403": problem("SIGNUP_CLOSED, or CROSS_ORIGIN_REQUEST: sent by another site's page"), "409": problem("EMAIL_TAKEN")}, true))))},
		"/api/v1/auth/signout":     obj{"post": op("Sign out", false, withStore(obj{"204": obj{"description": "signed out"}, "403": problem("CSRF_TOKEN_INVALID, or CROSS_ORIGIN_REQUEST: sent by another site's page")}))},
		"/api/v1/auth/signout-all": obj{"post": op("Sign out everywhere: end every session of the signed-in member, this one too", false, withStore(obj{"204": obj{"description": "every session of the member ended; the cookie cleared"}, "401": problem("UNAUTHORIZED: no session"), "403": problem("CSRF_TOKEN_INVALID, or CROSS_ORIGIN_REQUEST: sent by another site's page")}))},
		"/api/v1/auth/session":     obj{"get": op("The current session", false, withStore(obj{"200": response("the session", session), "401": problem("UNAUTHORIZED")}))},
		"/api/v1/auth/config": obj{"get": op("Sign-up and top-up configuration", false, obj{"200": response("config", object(obj{"openSignup": obj{"type": "boolean"},
			"topUp": object(obj{"currency": str(), "unitAmount": integer(), "minCredits": integer(), "maxCredits": integer()},
				"currency", "unitAmount", "minCredits", "maxCredits")}, "openSignup"))})},
		"/api/v1/account/password": obj{"post": op("Change the signed-in member's password; the member's other sessions end", true, smallBody(obj{"204": obj{"description": "the password changed; every other session of the member ended"},
			"400": problem("INVALID_REQUEST: the new password breaks the rules"), "401": problem("INVALID_CREDENTIALS: the current password is wrong"), "403": problem("FORBIDDEN: not a member's session (an API key)"),
			"429": response("RATE_LIMITED", ref("Problem"), "Retry-After")}), jsonBody(closed(obj{"currentPassword": str(), "password": str()}, "currentPassword", "password")))},
		"/api/v1/account": obj{"get": op("The caller's account", true, obj{"200": response("the account", ref("Account"))})},
		"/api/v1/account/ledger": obj{"get": op("The account's ledger, newest first", true,
			obj{"200": withCSV(response("a page of ledger entries; with format=csv the whole ledger as CSV, streamed", ref("LedgerPage"))),
				"400": problem("INVALID_REQUEST naming the bad parameter")},
			queryParams("format", "limit", "cursor"))},
		"/api/v1/account/usage/daily": obj{"get": op("Net credits per UTC day, model and key", true, obj{
			"200": withCSV(response("usage per day, oldest first; with format=csv as CSV", object(obj{"data": arr(object(obj{
				"day": str(), "modelId": str(), "keyId": str(), "tasks": integer(), "credits": integer()}, "day", "modelId", "tasks", "credits"))}, "data"))),
			"400": problem("INVALID_REQUEST naming days or format")}, queryParams("days", "format"))},
		"/api/v1/account/checkout": obj{"post": op("Buy credits by card: a Stripe Checkout Session", true, smallBody(obj{
			"201": response("the session and its Stripe-hosted page", object(obj{"id": str(), "url": str()}, "id", "url")),
			"400": problem("INVALID_REQUEST naming credits"), "404": problem("NOT_FOUND: card top-ups are not configured")}),
			jsonBody(closed(obj{"credits": integer()}, "credits")))},
		"/api/v1/stripe/webhook": obj{"post": op("Stripe's signed events (Stripe-Signature)", false, withStore(obj{
			"200": response("applied, or nothing to do", object(obj{"received": obj{"const": true}, "id": str()}, "received")),
			"400": problem("SIGNATURE_INVALID: a wrong or stale signature; nothing changed"),
			"404": problem("NOT_FOUND: card top-ups are not configured"), "413": problem("PAYLOAD_TOO_LARGE: over 1 MiB")}),
			jsonBody(obj{"type": "object"}))},
		"/api/v1/admin/purchases": obj{"get": op("Operator: card top-ups", true, obj{"200": response("purchases, newest first",
			object(obj{"data": arr(object(obj{"sessionId": str(), "accountId": str(), "credits": integer(), "paymentIntent": str(),
				"amountTotal": integer(), "currency": str(), "createdAt": str(), "refundedCredits": integer(), "takenBack": integer()},
				"sessionId", "accountId", "credits", "createdAt", "refundedCredits", "takenBack"))}, "data")),
			"400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN")}, queryParams("unrecovered", "limit"))},
		"/api/v1/account/usage": obj{"get": op("Net credits per model", true, obj{"200": response("usage", object(obj{"data": arr(object(obj{
			"modelId": str(), "tasks": integer(), "credits": integer()}, "modelId", "tasks", "credits"))}, "data")), "400": problem("INVALID_REQUEST")}, queryParams("days"))},
		"/api/v1/account/redeem": obj{"post": op("Redeem a code for credits", true, smallBody(obj{
			"200": response("the balance after", object(obj{"remainingCredits": integer()}, "remainingCredits")),
			"400": problem("INVALID_REQUEST"), "404": problem("CODE_UNKNOWN"), "409": problem("CODE_USED"), "410": problem("CODE_EXPIRED"),
			"429": response("RATE_LIMITED: too many attempts for this account", ref("Problem"), "Retry-After")}),
			jsonBody(closed(obj{"code": str()}, "code")))},
		"/api/v1/keys": obj{
			"get": op("The account's API keys, a page at a time", true, obj{"200": response("keys, newest first, revoked ones too", page(ref("Key"))), "400": problem("INVALID_REQUEST naming the bad parameter")},
				queryParams("limit", "cursor")),
			"post": op("Create an API key (the secret is shown once); a key with a spend limit makes keys limited to at most its own, a test key only test keys, and no key operator keys", true, smallBody(obj{"201": response("the key with its secret", ref("KeyCreated")), "400": problem("INVALID_REQUEST"),
				"403": problem("KEY_WIDER_THAN_CALLER: a spendLimit above the calling key's own, or a live key asked by a test key"), "409": problem("KEY_LIMIT_REACHED: the account has --max-keys active keys")}),
				jsonBody(closed(obj{"name": str(), "spendLimit": spendLimit,
					"test": obj{"type": "boolean", "description": "a test key (gg_test_): generations on the sandbox, nothing charged"}}, "name"))),
		},
		"/api/v1/keys/{keyId}": obj{
			"patch": op("Rename a key or set its daily spend limit; a key with a spend limit cannot lift a limit or raise one above its own", true, smallBody(obj{"200": response("the key", ref("Key")), "400": problem("INVALID_REQUEST"), "403": problem("KEY_WIDER_THAN_CALLER"), "404": problem("NOT_FOUND")}), pathParam("keyId"),
				jsonBody(closed(obj{"name": str(), "spendLimit": spendLimit}))),
			"delete": op("Revoke a key", true, obj{"204": obj{"description": "revoked"}, "404": problem("NOT_FOUND")}, pathParam("keyId")),
		},
		"/api/v1/quote": obj{
			"post": op("Price a generate body without charging", true, obj{"200": response("the quote", ref("Quote")), "400": problem("INVALID_REQUEST"), "413": problem("PAYLOAD_TOO_LARGE: the body is over the request body limit")}, jsonBody(ref("GenerateRequest"))),
			"get":  op("Price a request given as query parameters", true, obj{"200": response("the quote", ref("Quote")), "400": problem("INVALID_REQUEST")}),
		},
		"/api/v1/admin/accounts": obj{
			"get": op("Operator: accounts", true, obj{"200": response("accounts", page(ref("Account"))), "403": problem("FORBIDDEN")}, queryParams("q", "limit", "cursor")),
			"post": op("Operator: create an account", true, smallBody(obj{"201": response("the account and its set-up link", object(obj{"account": ref("Account"), "setupLink": str()}, "account", "setupLink")),
				"400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "409": problem("EMAIL_TAKEN")}),
				jsonBody(closed(obj{"email": str(), "name": str(), "credits": integer(), "operator": obj{"type": "boolean"}}, "email", "credits"))),
		},
		"/api/v1/admin/codes": obj{"post": op("Operator: make redemption codes (shown once)", true, smallBody(obj{
			"201": response("the codes", object(obj{"codes": arr(str()), "credits": integer(), "expiresAt": str()}, "codes", "credits")),
			"400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN")}),
			jsonBody(closed(obj{"credits": integer(), "count": integer(), "expiresAt": str()}, "credits")))},
		"/api/v1/admin/accounts/{id}": obj{"get": op("Operator: one account with a page of its keys (limit, cursor)", true, obj{"200": response("the account with its keys", ref("AccountWithKeys")), "400": problem("INVALID_REQUEST naming the bad parameter"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")}, pathAndQuery("id", "limit", "cursor"))},
		"/api/v1/admin/accounts/{id}/credits": obj{"post": op("Operator: grant or remove credits", true, smallBody(obj{"200": response("the balance", object(obj{"remainingCredits": integer()}, "remainingCredits")),
			"402": problem("INSUFFICIENT_CREDITS: removing more than the balance"), "400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")}),
			pathParam("id"), jsonBody(closed(obj{"credits": obj{"type": "integer", "not": obj{"const": 0}, "description": "negative removes credits"},
				"note": obj{"type": "string", "maxLength": 500}}, "credits")))},
		"/api/v1/admin/accounts/{id}/link": obj{"post": op("Operator: a sign-in link", true, smallBody(obj{"200": response("the link", object(obj{"link": str()}, "link")), "400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND")}),
			pathParam("id"), jsonBody(closed(obj{"email": str()}, "email")))},
		"/api/v1/admin/review": obj{"get": op("Operator: tasks in review", true, obj{"200": response("tasks in review, oldest first", page(ref("ReviewTask"))), "403": problem("FORBIDDEN")}, queryParams("limit", "cursor"))},
		"/api/v1/admin/review/{jobId}": obj{"post": op("Operator: settle a review", true, smallBody(obj{"200": response("the task", ref("TaskRecord")), "400": problem("INVALID_REQUEST"), "403": problem("FORBIDDEN"), "404": problem("NOT_FOUND"), "409": problem("CONFLICT")}), pathParam("jobId"),
			jsonBody(closed(obj{"action": obj{"type": "string", "enum": []string{"deliver", "refund"}}}, "action")))},
		"/api/v1/admin/engines": obj{"get": op("Operator: engines and their routes", true, obj{"200": response("engines", object(obj{"data": arr(ref("Engine")), "replication": ref("Replication")}, "data")), "403": problem("FORBIDDEN")})},
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
		"components": obj{"schemas": schemas, "securitySchemes": obj{
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
