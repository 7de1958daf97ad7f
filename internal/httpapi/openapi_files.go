package httpapi

// filePaths are uploads and the files gengate serves.
func filePaths() obj {
	return obj{
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
	}
}
