package schematest

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	s := &Schema{Source: "test", Read: "2026-11-23",
		Fields: "prompt:str[1..10]! duration:enum(4|8) n:int[1..4] seconds:ienum(5|10) image_urls:urls[..2] image_size:size(square|auto_2K) mode:enum(General~Use|Matting) ok:bool",
		Rules:  []Rule{{Field: "n", Msg: "n 4 needs ok", Bad: func(in map[string]any) bool { return in["n"] == 4.0 && in["ok"] != true }}}}
	if err := s.Valid(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		body string
		want string // "" accepted, else field:kind of the first problem
	}{
		{`{"prompt":"fox"}`, ""},
		{`{"prompt":"fox","duration":"8","n":2,"seconds":10,"image_urls":["https://x/y.png","data:image/png;base64,AA=="],"image_size":{"width":1024,"height":768},"mode":"General Use","ok":true}`, ""},
		{`{}`, "prompt:missing"},
		{`{"prompt":""}`, "prompt:range"},
		{`{"prompt":"fox","duration":8}`, "duration:type"},
		{`{"prompt":"fox","duration":"12"}`, "duration:enum"},
		{`{"prompt":"fox","n":5}`, "n:range"},
		{`{"prompt":"fox","n":1.5}`, "n:type"},
		{`{"prompt":"fox","seconds":"5"}`, "seconds:type"},
		{`{"prompt":"fox","seconds":6}`, "seconds:enum"},
		{`{"prompt":"fox","image_urls":["a","b"]}`, "image_urls:type"},
		{`{"prompt":"fox","image_urls":["https://a/1","https://a/2","https://a/3"]}`, "image_urls:range"},
		{`{"prompt":"fox","image_size":"auto_4K"}`, "image_size:enum"},
		{`{"prompt":"fox","image_size":{"width":1024}}`, "image_size:type"},
		{`{"prompt":"fox","seed":3}`, "seed:extra"},
		{`{"prompt":"fox","n":4}`, "n:rule"},
	}
	for _, c := range cases {
		var in map[string]any
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatal(err)
		}
		ps := s.Check(in)
		got := ""
		if len(ps) > 0 {
			got = ps[0].Field + ":" + ps[0].Kind
		}
		if got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.body, got, ps, c.want)
		}
	}
}

func TestBadSchemas(t *testing.T) {
	for _, f := range []string{"prompt", "x:text", "x:int[a..2]", "x:str x:int"} {
		if err := (&Schema{Source: "s", Read: "2026-11-23", Fields: f}).Valid(); err == nil || !strings.Contains(err.Error(), "schematest") {
			t.Errorf("%q: %v", f, err)
		}
	}
	if err := (&Schema{Fields: "x:int"}).Valid(); err == nil {
		t.Error("a schema without source accepted")
	}
}
