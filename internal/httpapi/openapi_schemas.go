package httpapi

import "github.com/gengate/gengate"

// openAPISchemas are the document's components.schemas: one request schema
// per model of the catalog, and the shapes of every answer.
func openAPISchemas(c *gengate.Catalog) obj {
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
		"webhook": object(obj{"events": arr(object(obj{"id": str(), "type": obj{"type": "string", "description": "an event type (generation.succeeded, ...); " +
			"the webhook of a Replicate-compatible prediction gets prediction.start, prediction.logs, prediction.output and prediction.completed instead, " +
			"that of a fal queue request fal.completed (each sent in its provider's form: docs/replicate.md, docs/fal.md)"}, "url": str(),
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
		"status": obj{"type": "string", "enum": []string{"ok", "unreachable", "unknown"}}, "checkedAt": str(),
		"retiredRoutes":       arr(object(obj{"modelId": str(), "upstream": str(), "state": obj{"type": "string", "enum": []string{gengate.RouteUnknown, gengate.RouteDeprecated}}, "reason": str()}, "modelId", "upstream", "state", "reason")),
		"registryUnreachable": obj{"type": "string", "description": "why the provider's model registry could not be read at the last check; its routes are as that check left them"},
		"registryCheckedAt":   str(),
		"costs": obj{"type": "array", "description": "succeeded tasks of the last 30 days by model: credits charged against the upstream cost (micro-USD) of those whose cost is known",
			"items": object(obj{"modelId": str(), "provider": str(), "tasks": integer(), "credits": integer(), "pricedTasks": integer(), "pricedCredits": integer(), "upstreamMicroUsd": integer()},
				"modelId", "provider", "tasks", "credits", "pricedTasks", "pricedCredits", "upstreamMicroUsd")}}, "name", "kind", "models", "status")
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

	account := obj{"id": str(), "name": str(), "remainingCredits": integer(), "createdAt": str(),
		"members": arr(object(obj{"id": str(), "email": str(), "role": str(), "createdAt": str()}, "id", "email", "role", "createdAt"))}
	accountRequired := []string{"id", "name", "remainingCredits", "createdAt", "members"}
	schemas["Account"] = object(account, accountRequired...)
	schemas["AccountWithKeys"] = object(with(account, obj{"keys": arr(ref("Key")), "keysNextCursor": str()}), append(accountRequired, "keys")...)
	schemas["LedgerPage"] = object(obj{"data": arr(object(obj{"id": str(), "kind": str(), "amount": integer(), "balanceAfter": integer(),
		"taskId": str(), "note": str(), "createdAt": str()}, "id", "kind", "amount", "balanceAfter", "createdAt")), "nextCursor": str()}, "data")
	return schemas
}
