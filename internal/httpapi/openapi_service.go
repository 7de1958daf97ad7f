package httpapi

// servicePaths are this document, health, readiness and metrics.
func servicePaths() obj {
	return obj{
		"/api/v1/openapi.json": obj{"get": op("This document", false, obj{"200": response("OpenAPI 3.1", object(obj{
			"openapi": obj{"const": "3.1.0"}, "info": object(obj{"title": str(), "version": str(), "description": str()}, "title", "version"),
			"servers":  arr(object(obj{"url": str(), "description": str()}, "url")),
			"paths":    obj{"type": "object", "description": "as OpenAPI 3.1 defines it"},
			"webhooks": obj{"type": "object", "description": "each event gengate sends, as OpenAPI 3.1 defines it"},
			"x-gengate-bodies": obj{"type": "object", "description": "every route that takes a request body, documented here or not (the Replicate- and fal-compatible APIs), by its pattern (\"POST /v1/predictions\"; no method: every method), with the body it declares",
				"additionalProperties": object(obj{"kind": str(), "maxBytes": integer()}, "kind", "maxBytes")},
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
	}
}
