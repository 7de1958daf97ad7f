package httpapi

// openAIPaths are the OpenAI-compatible images endpoints, with OpenAI's
// error shape.
func openAIPaths() obj {
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
	return obj{
		"/v1/images/generations": obj{"post": op("OpenAI-compatible image generation (model is a gengate modelId)", true, oaGenerations,
			obj{"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("OpenAIImageRequest")}}}})},
		"/v1/images/edits": obj{"post": op("OpenAI-compatible image edit (multipart: image or image[], mask)", true, oaEdits,
			obj{"requestBody": obj{"required": true, "content": obj{"multipart/form-data": obj{"schema": ref("OpenAIImageEditRequest")}}}})},
	}
}
