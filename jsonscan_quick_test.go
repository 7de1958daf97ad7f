package gengate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestQuickScalar checks that the decoder-free fast path gives exactly
// what encoding/json gives for what it accepts, and declines the rest.
func TestQuickScalar(t *testing.T) {
	for _, c := range []struct {
		raw  string
		took bool
	}{
		{`true`, true},
		{`false`, true},
		{`""`, true},
		{`"flux-schnell"`, true},
		{`"a prompt, with punctuation: ~!@#$%^&*()_+{}|:<>?"`, true},
		{`null`, false},
		{`12`, false},
		{`-1.5e3`, false},
		{`"with \"escape\""`, false},
		{`"tab\there"`, false},
		{"\"raw\ttab\"", false},
		{`"h\u00e9"`, false},
		{"\"h\xc3\xa9\"", false},
		{"\"bad \xff utf8\"", false},
		{"\"del \x7f\"", false},
		{`"`, false},
		{`tru`, false},
	} {
		got, ok := quickScalar([]byte(c.raw))
		if ok != c.took {
			t.Errorf("quickScalar(%q) took=%v, want %v", c.raw, ok, c.took)
			continue
		}
		if !ok {
			continue
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader([]byte(c.raw)))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Errorf("quickScalar(%q) took a value encoding/json refuses: %v", c.raw, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("quickScalar(%q) = %#v, encoding/json gives %#v", c.raw, got, want)
		}
	}
}

// BenchmarkDecodeRequest measures decoding and validating a typical
// generate body, the per-submit work of the catalog; -benchmem gives its
// allocations (docs/notes/submit-path.md).
func BenchmarkDecodeRequest(b *testing.B) {
	c, err := DefaultCatalog()
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"type":"image","modelId":"flux-schnell","prompt":"a lighthouse at dusk, oil painting","aspectRatio":"16:9"}`)
	if _, err := c.ParseRequest(body); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ParseRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFingerprintIsMarshalOfMap checks that the hand-written canonical
// body is byte for byte json.Marshal of the members' map, as fingerprints
// were first computed: stored fingerprints must keep matching.
func TestFingerprintIsMarshalOfMap(t *testing.T) {
	for _, b := range []*body{
		{top: map[string]any{}},
		{top: map[string]any{"type": "image", "modelId": "flux-schnell", "prompt": "a lighthouse"}},
		{top: map[string]any{"prompt": `quote " backslash \ <b>&amp; tab` + "\t nl\n é \u2028 \xff", "seed": json.Number("42"),
			"guidance": json.Number("-1.5e3"), "safety": true, "raw": false, "z<&>": "k", "composite": composite{}, "lt": "a<b", "gt>": "c", "amp": "&"}},
		{top: map[string]any{"type": "image"}, inputs: inputsObject, in: map[string]any{"image": "https://x.test/a.png?a=1&b=2", "mask": "m"}},
		{top: map[string]any{"type": "image"}, inputs: inputsObject, in: map[string]any{}},
		{top: map[string]any{"type": "image", "inputs": "shadowed"}, inputs: inputsWrongType},
	} {
		canon := make(map[string]any, len(b.top)+1)
		for k, v := range b.top {
			canon[k] = v
		}
		if b.inputs != inputsAbsent {
			canon["inputs"] = b.in
		}
		want, err := json.Marshal(canon)
		if err != nil {
			t.Fatal(err)
		}
		got := appendCanonObject(nil, b.top, b.inputs != inputsAbsent, b.in)
		if !bytes.Equal(got, want) {
			t.Errorf("canonical body\n got %s\nwant %s", got, want)
		}
	}
}
