package gengate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// oldFingerprint is the fingerprint as the map-decoding parser took it:
// the whole body decoded, null members dropped, marshalled with sorted
// keys. Stored tasks carry fingerprints taken this way, so the streaming
// decoder must agree with it on every body it accepts.
func oldFingerprint(t *testing.T, body string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var drop func(any) any
	drop = func(v any) any {
		if m, ok := v.(map[string]any); ok {
			out := map[string]any{}
			for k, x := range m {
				if x != nil {
					out[k] = drop(x)
				}
			}
			return out
		}
		return v
	}
	canon, _ := json.Marshal(drop(v))
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

func TestDecodeRequestFingerprintUnchanged(t *testing.T) {
	c := testCatalog(t)
	for _, body := range []string{
		`{"type":"image","modelId":"flux","prompt":"a fox"}`,
		`{"type":"image","modelId":"flux","prompt":"a \"fox\" <b>&amp; \u00e9\u2028 \ud83e\udd8a","numOutputs":2,"seed":100,"colour":null}`,
		`{"type":"image","modelId":"flux","prompt":"x","prompt":"y"}`, // the last duplicate wins
		`{"type":"image","modelId":"flux","prompt":"x","seed":null}`,
		`{"type":"video","modelId":"kling-v2-6-motion-control","prompt":"dance","imageUrl":"` + dataPNG + `","inputs":{"videoUrl":"` + dataMP4 + `","x":null},"duration":5}`,
		`{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":{}}`,
		`{"type":"video","modelId":"openai-sora-2","prompt":"x","inputs":null}`,
		`{"ty\u0070e":"image","modelId":"flux","prompt":"x"}`, // an escaped name
	} {
		req, err := c.ParseRequest([]byte(body))
		if err != nil {
			t.Errorf("ParseRequest(%s): %v", body, err)
			continue
		}
		if want := oldFingerprint(t, body); req.Fingerprint != want {
			t.Errorf("fingerprint of %s changed", body)
		}
	}
}

// TestDecodeRequestRefuses: what the streaming decoder must refuse, with
// INVALID_REQUEST.
func TestDecodeRequestRefuses(t *testing.T) {
	c := testCatalog(t)
	deep := `{"type":"image","modelId":"flux","prompt":"x","x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	for name, body := range map[string]string{
		"leading zero":        `{"type":"image","modelId":"flux","prompt":"x","x":01}`,
		"bare minus":          `{"type":"image","modelId":"flux","prompt":"x","x":-}`,
		"dot without digits":  `{"type":"image","modelId":"flux","prompt":"x","x":1.}`,
		"bad literal":         `{"type":"image","modelId":"flux","prompt":"x","x":nul}`,
		"bad escape":          `{"type":"image","modelId":"flux","prompt":"\x"}`,
		"bad unicode escape":  `{"type":"image","modelId":"flux","prompt":"\u12G4"}`,
		"control character":   "{\"type\":\"image\",\"modelId\":\"flux\",\"prompt\":\"a\nb\"}",
		"missing colon":       `{"type" "image"}`,
		"missing comma":       `{"type":"image" "modelId":"flux"}`,
		"trailing comma":      `{"type":"image","modelId":"flux","prompt":"x",}`,
		"unclosed array":      `{"type":"image","modelId":"flux","prompt":"x","x":[1,2}`,
		"unquoted name":       `{type:"image"}`,
		"too deep":            deep,
		"truncated":           `{"type":"image","modelId":"flux","prompt":"x"`,
		"data after":          `{"type":"image","modelId":"flux","prompt":"x"}x`,
		"object in a field":   `{"type":"image","modelId":"flux","prompt":{"a":1}}`,
		"unknown inside obj":  `{"type":"image","modelId":"flux","prompt":"x","inputs":{"a":[1]}}`,
		"null unknown is not": `{"type":"image","modelId":"flux","prompt":"x","a":[null]}`,
	} {
		_, err := c.ParseRequest([]byte(body))
		var e *Error
		if !errors.As(err, &e) || e.Code != EInvalid {
			t.Errorf("%s: got %v, want INVALID_REQUEST", name, err)
		}
	}
	// Unknown members whose value is null are absent, as before.
	if _, err := c.ParseRequest([]byte(`{"type":"image","modelId":"flux","prompt":"x","colour":null,"inputs":{"y":null}}`)); err != nil {
		t.Errorf("null unknown members: %v", err)
	}
}

// TestDecodeRequestCapsErrors: a body with many unknown fields lists the
// MaxFieldErrors first by name and counts the others.
func TestDecodeRequestCapsErrors(t *testing.T) {
	c := testCatalog(t)
	var b bytes.Buffer
	b.WriteString(`{"type":"image","modelId":"flux","prompt":5`)
	for i := 999; i >= 0; i-- { // in reverse: the kept ones are the smallest
		b.WriteString(`,"f` + strconv.Itoa(1000+i) + `":1`)
	}
	b.WriteString(`,"f1000":2,"inputs":{"z":1}}`) // a repeated name counts once
	_, err := c.ParseRequest(b.Bytes())
	var e *Error
	if !errors.As(err, &e) || e.Code != EInvalid {
		t.Fatalf("got %v, want INVALID_REQUEST", err)
	}
	if len(e.Fields) != MaxFieldErrors {
		t.Fatalf("%d field errors, want %d", len(e.Fields), MaxFieldErrors)
	}
	if e.Fields[0].Field != "f1000" || e.Fields[MaxFieldErrors-1].Field != "f1019" {
		t.Errorf("fields %s..%s, want f1000..f1019", e.Fields[0].Field, e.Fields[MaxFieldErrors-1].Field)
	}
	// 1000 unknown + inputs.z + prompt = 1002 errors, 20 listed.
	if got := e.Extra["omittedErrors"]; got != 1002-MaxFieldErrors {
		t.Errorf("omittedErrors = %v, want %d", got, 1002-MaxFieldErrors)
	}
}
