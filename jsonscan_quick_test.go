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
// allocations (docs/benchmarks.md, "CPU per submit").
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
