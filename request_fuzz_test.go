package gengate_test

import (
	"errors"
	"testing"

	"github.com/gengate/gengate"
)

// FuzzParseRequest feeds arbitrary bodies to the validator: it must never
// panic, and every refusal must be an *Error with a client code and, for
// field problems, the fields named.
func FuzzParseRequest(f *testing.F) {
	catalog, err := gengate.DefaultCatalog()
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"type":"image","modelId":"flux","prompt":"a fox","numOutputs":2,"aspectRatio":"16:9"}`,
		`{"type":"video","modelId":"google-veo-3-1","prompt":"x","duration":6,"resolution":"4k","generateAudio":false,"inputs":{"lastFrameUrl":"data:image/png;base64,AA=="}}`,
		`{"type":"image","modelId":"object-remover","image":"https://example.com/a.png","mask":"https://example.com/m.png"}`,
		`{"type":"image","modelId":"image-upscaler","imageUrl":"data:,x","scale":4.5}`,
		`{"type":"video","modelId":"openai-sora-2","prompt":"x","aspectRatio":"1:1"}`,
		`{"type":"image","modelId":"flux","prompt":null,"inputs":[]}`,
		`{"type":1}`, `[]`, `null`, `{"a":{"b":{"c":[1,2,{"d":null}]}}}`, `{"type":"image","modelId":"flux"}}`, ``,
	} {
		f.Add([]byte(seed))
	}
	codes := map[string]bool{gengate.EInvalid: true, gengate.EUnsupportedOption: true}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := catalog.ParseRequest(body)
		if err == nil {
			if req.Model == nil || req.Fingerprint == "" {
				t.Fatalf("accepted %q without a model or fingerprint", body)
			}
			if q := req.Model.Quote(req.Options); q < 0 {
				t.Fatalf("accepted %q with a negative quote %d", body, q)
			}
			return
		}
		var e *gengate.Error
		if !errors.As(err, &e) || !codes[e.Code] {
			t.Fatalf("refused %q with %v, want INVALID_REQUEST or UNSUPPORTED_MODEL_OPTION", body, err)
		}
		if e.Code == gengate.EUnsupportedOption && len(e.Fields) == 0 {
			t.Fatalf("refused %q as unsupported without naming a field", body)
		}
	})
}
