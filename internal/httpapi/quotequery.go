package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// queryBody turns GET /api/v1/quote's query into a generate body: each
// parameter a member; values that read as numbers or booleans become
// those, so that ?numOutputs=2 is the number 2. "inputs.x=..." parameters
// go into the inputs object.
func queryBody(r *http.Request) []byte {
	obj := map[string]any{}
	inputs := map[string]any{}
	for k, vs := range r.URL.Query() {
		if len(vs) == 0 {
			continue
		}
		v := queryValue(k, vs[0])
		if name, ok := strings.CutPrefix(k, "inputs."); ok {
			inputs[name] = v
			continue
		}
		obj[k] = v
	}
	if len(inputs) > 0 {
		obj["inputs"] = inputs
	}
	b, _ := json.Marshal(obj)
	return b
}

func queryValue(key, v string) any {
	switch key {
	case "type", "modelId", "prompt":
		return v
	}
	if v == "true" || v == "false" {
		return v == "true"
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xX") {
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return v
}
