package sqlstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gengate/gengate"
)

// TestFlatDecodeMatchesEncodingJSON: a task row's JSON columns decoded by
// hand (rowdecode.go) give what encoding/json gives, and every form the
// hand decoder does not take is left to encoding/json, errors included.
func TestFlatDecodeMatchesEncodingJSON(t *testing.T) {
	objects := []string{
		`{}`, `null`, `{"aspectRatio":"1:1","numOutputs":1,"outputFormat":"png"}`,
		`{"a":-0}`, `{"a":0}`, `{"a":-12}`, `{"a":9223372036854775807}`, `{"a":9223372036854775808}`,
		`{"a":-9223372036854775808}`, `{"a":-9223372036854775809}`, `{"a":01}`, `{"a":-}`, `{"a":1.0}`, `{"a":2.5}`,
		`{"a":1e3}`, `{"a":1E3}`, `{"a":true,"b":false,"c":null}`, `{"a":"x","a":"y"}`, `{"a":"é"}`, `{"a":"\u00e9"}`,
		`{"a":"<&>"}`, `{"a":"b\"c"}`, `{"a":[1]}`, `{"a":{"b":1}}`, `{ "a":1}`, `{"a" :1}`, `{"a":1,}`, `{,}`,
		`{"a":1} `, `{"a":1}x`, `{"a":tru}`, `{"a":truex}`, `{"a"}`, `{"a":}`, `{"a":"x`, `{"a:1}`, `{`, `}`, ``,
		`[]`, `"x"`, `{"":""}`, `{"a":"\t"}`, "{\"a\":\"\x01\"}", `{"engine":"fal","upstream":"fal-ai/flux/dev"}`,
		`{"engine":"sandbox","upstream":"flux","test":true}`, `{"engine":"x","upstream":"y","test":false}`,
		`{"Engine":"x","upstream":"y"}`, `{"engine":"x","upstream":"y","params":{"a":1}}`, `{"engine":1}`,
		`{"engine":null}`, `{"test":"true"}`, `{"a":"https://example.com/a.png?x=1&y=2"}`,
	}
	for _, s := range objects {
		// Options: a Decoder with UseNumber (trailing data ignored), then
		// normalizeOptions.
		var want map[string]any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		wantErr := d.Decode(&want)
		normalizeOptions(want)
		if got, ok := decodeOptions(s); ok && (wantErr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("decodeOptions(%q) = %#v; encoding/json: %#v, %v", s, got, want, wantErr)
		}
		var wantStrings map[string]string
		wantErr = json.Unmarshal([]byte(s), &wantStrings)
		if got, ok := decodeStrings(s); ok && (wantErr != nil || !reflect.DeepEqual(got, wantStrings)) {
			t.Errorf("decodeStrings(%q) = %#v; encoding/json: %#v, %v", s, got, wantStrings, wantErr)
		}
		var wantRoute gengate.Route
		wantErr = json.Unmarshal([]byte(s), &wantRoute)
		if got, ok := decodeRoute(s); ok && (wantErr != nil || !reflect.DeepEqual(got, wantRoute)) {
			t.Errorf("decodeRoute(%q) = %#v; encoding/json: %#v, %v", s, got, wantRoute, wantErr)
		}
	}
	// The forms the store writes are taken by hand.
	for _, s := range []string{`{}`, `{"aspectRatio":"1:1","numOutputs":1,"outputFormat":"png"}`, `{"a":true,"b":-3}`} {
		if _, ok := decodeOptions(s); !ok {
			t.Errorf("decodeOptions(%q) left to encoding/json", s)
		}
	}
	if _, ok := decodeStrings(`{"image":"inputs/ab/x.png"}`); !ok {
		t.Error("decodeStrings left a map of strings to encoding/json")
	}
	for _, r := range []gengate.Route{{Engine: "fal", Upstream: "fal-ai/flux/dev"}, {Engine: "sandbox", Upstream: "flux", Test: true}} {
		if got, ok := decodeRoute(encodeRoute(r)); !ok || !reflect.DeepEqual(got, r) {
			t.Errorf("decodeRoute(encodeRoute(%+v)) = %+v, %v", r, got, ok)
		}
	}
}

// TestTaskRowDecodeFallsBack: a row whose JSON is outside the flat form
// is decoded by encoding/json (nested params, floats), and one that is
// not JSON is still refused.
func TestTaskRowDecodeFallsBack(t *testing.T) {
	r := taskRow{t: &gengate.Task{ID: "t1"}, options: `{"n":2.0,"s":"a\u00e9"}`, inputs: `{}`,
		route: `{"engine":"fal","upstream":"u","params":{"k":[1,2]}}`, inputURLs: `{"image":"https://x/\u0041"}`}
	got, err := r.decode()
	if err != nil {
		t.Fatal(err)
	}
	if got.Options["n"] != 2.0 || got.Options["s"] != "aé" || got.Route.Params == nil || got.InputURLs["image"] != "https://x/A" || got.Inputs == nil {
		t.Errorf("decoded %+v", got)
	}
	for _, bad := range []taskRow{
		{t: &gengate.Task{ID: "t2"}, options: `{"a":01}`, inputs: `{}`},
		{t: &gengate.Task{ID: "t3"}, options: `{}`, inputs: `{"a":1}`},
		{t: &gengate.Task{ID: "t4"}, options: `{}`, inputs: `{}`, route: `{"engine":`},
	} {
		if _, err := bad.decode(); err == nil {
			t.Errorf("row %s decoded; want an error", bad.t.ID)
		}
	}
}

// BenchmarkTaskRowDecode: a claimed task's JSON columns as `gengate bench
// submit` stores them.
func BenchmarkTaskRowDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r := taskRow{t: &gengate.Task{ID: "t"}, options: `{"aspectRatio":"1:1","numOutputs":1,"outputFormat":"png"}`,
			inputs: `{}`, route: `{"engine":"sandbox","upstream":"flux"}`}
		if _, err := r.decode(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFlatEncodeMatchesEncodingJSON: options and inputs written by hand
// (encodeFlat) are the bytes json.Marshal writes, and the ones it does
// not take (floats, escapes, nested values) are left to encoding/json.
func TestFlatEncodeMatchesEncodingJSON(t *testing.T) {
	options := []map[string]any{
		{}, {"aspectRatio": "1:1", "numOutputs": int64(1), "outputFormat": "png"},
		{"b": true, "a": false, "c": nil, "d": int64(-9223372036854775808), "e": 7},
		{"Z": "x", "a": "y", "_": "z", "0": "w"}, // byte order of keys
		{"s": "a<b"}, {"s": "a&b"}, {"s": "é"}, {"s": "a\"b"}, {"s": "a\\b"}, {"s": "\n"}, {"k<": "v"},
		{"f": 2.5}, {"f": 2.0}, {"n": []any{1}}, {"m": map[string]any{"a": 1}}, {"u": uint8(1)},
	}
	for _, m := range options {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := encodeFlat(m); ok && got != string(want) {
			t.Errorf("encodeFlat(%#v) = %s; json.Marshal: %s", m, got, want)
		}
	}
	for _, m := range []map[string]string{{}, {"imageUrl": "inputs/ab/x", "mask": "inputs/ab/y"}, {"a": "<"}} {
		want, _ := json.Marshal(m)
		if got, ok := encodeFlat(m); ok && got != string(want) {
			t.Errorf("encodeFlat(%#v) = %s; json.Marshal: %s", m, got, want)
		}
		if got, err := encodeInputs(m); err != nil || got != string(want) {
			t.Errorf("encodeInputs(%#v) = %s, %v; want %s", m, got, err, want)
		}
	}
	if got, _ := encodeInputs(nil); got != "null" {
		t.Errorf("encodeInputs(nil) = %s; want null", got)
	}
	// The common forms are written by hand; a whole float64 keeps its
	// fraction (encodeOptions).
	if _, ok := encodeFlat(options[1]); !ok {
		t.Error("encodeFlat left the common options to encoding/json")
	}
	if got, _ := encodeOptions(map[string]any{"f": 2.0, "n": int64(2)}); got != `{"f":2.0,"n":2}` {
		t.Errorf("encodeOptions with a whole float = %s", got)
	}
}

// BenchmarkEncodeOptions: a task's options as `gengate bench submit`
// makes them.
func BenchmarkEncodeOptions(b *testing.B) {
	b.ReportAllocs()
	opts := map[string]any{"aspectRatio": "1:1", "numOutputs": int64(1), "outputFormat": "png"}
	for b.Loop() {
		if _, err := encodeOptions(opts); err != nil {
			b.Fatal(err)
		}
	}
}
