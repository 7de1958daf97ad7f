package httpapi

// generationPaths are the generate call, its tasks and quotes.
func generationPaths() obj {
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
	return obj{
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
		"/api/v1/quote": obj{
			"post": op("Price a generate body without charging", true, obj{"200": response("the quote", ref("Quote")), "400": problem("INVALID_REQUEST"), "413": problem("PAYLOAD_TOO_LARGE: the body is over the request body limit")}, jsonBody(ref("GenerateRequest"))),
			"get":  op("Price a request given as query parameters", true, obj{"200": response("the quote", ref("Quote")), "400": problem("INVALID_REQUEST")}),
		},
	}
}

// outcome is the answers of a call that runs a task and answers like
// generate: its result, or where to poll for it.
func outcome() obj {
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
