package httpapi

import "github.com/gengate/gengate"

// webhookPaths are the account's webhook endpoints, secrets and attempts.
func webhookPaths() obj {
	return obj{
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
	}
}
