package google

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/google/googletest"
)

const (
	vImagenUltra = "imagen-4.0-ultra-generate-001"
	vVeo31       = "veo-3.1-generate-001"
	vVeo3        = "veo-3.0-generate-001"
)

// newVertexFor makes a Vertex engine for fake f with the credentials file
// creds (f.Key() is one the fake's token endpoint takes).
func newVertexFor(t testing.TB, f *googletest.Vertex, creds string) *Vertex {
	t.Helper()
	v, err := NewVertex("vertex", VertexConfig{Project: f.Project(), Location: f.Location(), CredentialsFile: creds,
		BaseURL: f.URL(), StorageURL: f.StorageURL()})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func newVertex(t *testing.T) (*googletest.Vertex, *Vertex) {
	t.Helper()
	f := googletest.NewVertex(t)
	return f, newVertexFor(t, f, f.Key())
}

func vroute(up string, params ...any) gengate.Route {
	r := gengate.Route{Engine: "vertex", Upstream: up}
	if len(params) > 0 {
		r.Params = map[string]any{}
		for i := 0; i+1 < len(params); i += 2 {
			r.Params[params[i].(string)] = params[i+1]
		}
	}
	return r
}

func vImageJob(up string) gengate.Job {
	j := imageJob(up, "16:9", "jpeg")
	j.Route = vroute(up)
	return j
}

func vVideoJob(up string, opts map[string]any) gengate.Job {
	j := videoJob(up, opts)
	j.Route = vroute(up)
	return j
}

// TestVertexUpstream runs the provider scenarios against the Vertex AI
// fake: the "key" is the path of a service account key file, the wrong
// one is signed with another key (the token endpoint answers 400
// invalid_grant and nothing reaches Vertex AI).
func TestVertexUpstream(t *testing.T) {
	veo := vVideoJob(vVeo31, map[string]any{"duration": int64(8)})
	enginetest.Upstream(t, enginetest.UpstreamCase{
		NewFake: func(t *testing.T) enginetest.Fake { return googletest.NewVertex(t) },
		NewEngine: func(key, base string) gengate.Engine {
			root := strings.TrimSuffix(base, "/v1")
			if key == "wrong-credentials" {
				key = googletest.CredentialsSignedWithAnotherKey(t, root+"/token")
			}
			v, err := NewVertex("vertex", VertexConfig{Project: "gengate-test", Location: "us-central1", CredentialsFile: key, BaseURL: base, StorageURL: root})
			if err != nil {
				t.Fatal(err)
			}
			return v
		},
		Job: veo,
		Sync: []enginetest.Case{
			{Name: "generateContent", Job: vImageJob(proImage)},
			{Name: "predict", Job: vImageJob(vImagenUltra)},
		},
		Refusals: []enginetest.Answer{
			{Status: 400, Code: gengate.CodeRejectedInput},
			{Status: 401, Code: gengate.CodeUpstream},
			{Status: 403, Code: gengate.CodeUpstream},
			{Status: 404, Code: gengate.CodeUpstream},
		},
		WrongKey:        "wrong-credentials",
		WrongKeyStatus:  http.StatusBadRequest,
		FreshJob:        &veo,
		FreshRetryAfter: videoDelay,
		HoldCancel:      true,
	})
}

// TestVertexStrictFake sends every Vertex AI route of the catalog, with
// its defaults and with every allowed value of every option, through the
// fake, which checks each body against the schemas of
// googletest/vertex_schemas.go: whatever Validate accepts, Vertex AI must
// accept.
func TestVertexStrictFake(t *testing.T) {
	_, v := newVertex(t)
	if n := enginetest.Sweep(t, v, "vertex"); n < 60 {
		t.Errorf("only %d submits accepted", n)
	}
}

// TestVertexRequests: what Vertex AI takes that the Gemini API does not
// is sent (Veo's seed and generateAudio, Gemini's output format), Veo 3
// always gets generateAudio, and Imagen's seed only on a route that turns
// the watermark off.
func TestVertexRequests(t *testing.T) {
	f, v := newVertex(t)
	for _, c := range []struct {
		name string
		job  gengate.Job
		path []any
		want any
	}{
		{"veo seed", vVideoJob(vVeo31, map[string]any{"seed": int64(42)}), []any{"parameters", "seed"}, float64(42)},
		{"veo silent", vVideoJob(vVeo31, map[string]any{"generateAudio": false}), []any{"parameters", "generateAudio"}, false},
		{"veo 3 sound by default", vVideoJob(vVeo3, map[string]any{}), []any{"parameters", "generateAudio"}, true},
		{"gemini jpeg", vImageJob(proImage), []any{"generationConfig", "imageConfig", "imageOutputOptions", "mimeType"}, "image/jpeg"},
		{"imagen seed unwatermarked", func() gengate.Job {
			j := enginetest.WithOptions(vImageJob(vImagenUltra), "seed", int64(7))
			j.Route = vroute(vImagenUltra, "addWatermark", false)
			return j
		}(), []any{"parameters", "seed"}, float64(7)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := v.Validate(c.job); err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, v, c.job); err != nil {
				t.Fatal(err)
			}
			if got := get(f.LastRequest(), c.path...); got != c.want {
				t.Fatalf("%v = %v, want %v", c.path, got, c.want)
			}
		})
	}
	// A seed on a watermarked Imagen route is refused before any charge.
	j := enginetest.WithOptions(vImageJob(vImagenUltra), "seed", int64(7))
	enginetest.WantValidate(t, v.Validate(j), "seed")
}

// TestVertexFakeRefusesWhatTheSchemaDoesNot: a route's params that break
// the published schema (an unknown name, a wrong enum value or type) are
// answered 400 INVALID_ARGUMENT and reported as the input's fault; a
// seed on a watermarked Imagen call, sent through the route's own
// params, breaks the rule across fields.
func TestVertexFakeRefusesWhatTheSchemaDoesNot(t *testing.T) {
	f, v := newVertex(t)
	for _, c := range []struct {
		name   string
		job    gengate.Job
		answer string
	}{
		{"unknown veo parameter", func() gengate.Job {
			j := vVideoJob(vVeo31, map[string]any{})
			j.Route = vroute(vVeo31, "durationSecs", 8)
			return j
		}(), `Unknown name "durationSecs" at 'parameters'`},
		{"bad person generation", func() gengate.Job {
			j := vVideoJob(vVeo31, map[string]any{})
			j.Route = vroute(vVeo31, "personGeneration", "ALLOW_EVERYONE")
			return j
		}(), "parameters.personGeneration"},
		{"sample count as a string", func() gengate.Job {
			j := vImageJob(vImagenUltra)
			j.Route = vroute(vImagenUltra, "sampleCount", "2")
			return j
		}(), "parameters.sampleCount"},
		{"imagen seed with the watermark", func() gengate.Job {
			j := vImageJob(vImagenUltra)
			j.Route = vroute(vImagenUltra, "seed", 7)
			return j
		}(), "Seed is not supported when addWatermark is true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Submit(ctx, c.job)
			ue := upstreamErr(t, err)
			if ue.Kind != gengate.Refused || ue.Status != 400 || ue.Code != gengate.CodeRejectedInput || !strings.Contains(ue.Message, c.answer) {
				t.Fatalf("got %+v, want refused 400 %s saying %q", ue, gengate.CodeRejectedInput, c.answer)
			}
		})
	}
	if f.Submissions() != 0 {
		t.Fatalf("%d submissions accepted", f.Submissions())
	}
}

// TestVertexTokens: a token is fetched with the service account's signed
// JWT, sent as the bearer of every call and reused while it is valid; a
// token that expires within the refresh margin is fetched anew before the
// next call (the refresh on expiry), and Vertex AI sees the new one.
func TestVertexTokens(t *testing.T) {
	f, v := newVertex(t)
	for range 3 {
		if _, err := run(t, v, vImageJob(proImage)); err != nil {
			t.Fatal(err)
		}
	}
	used := f.UsedTokens()
	if f.TokenFetches() != 1 || len(used) != 3 || used[0] != used[2] {
		t.Fatalf("%d token fetches, tokens used %v: want one token for three calls", f.TokenFetches(), used)
	}

	// A token Vertex AI no longer takes (the fake ages every token by an
	// hour, as if revoked or expired early) is refused (401: the next
	// route is tried), then dropped: the next call fetches a new one.
	f.ExpireTokens()
	_, err := v.Submit(ctx, vImageJob(proImage))
	if ue := upstreamErr(t, err); ue.Kind != gengate.Refused || ue.Status != http.StatusUnauthorized {
		t.Fatalf("expired token: %+v, want refused 401", ue)
	}
	if _, err := run(t, v, vImageJob(proImage)); err != nil || f.TokenFetches() != 2 {
		t.Fatalf("after a 401: %v, %d token fetches, want a second token", err, f.TokenFetches())
	}
	// The same at a poll: the Veo operation's check is refused once,
	// then succeeds with a new token.
	p, err := v.Submit(ctx, vVideoJob(vVeo31, map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	f.ExpireTokens()
	if _, err := v.Check(ctx, vVideoJob(vVeo31, map[string]any{}), p.UpstreamID); err == nil {
		t.Fatal("a check with an expired token succeeded")
	}
	if p, err := v.Check(ctx, vVideoJob(vVeo31, map[string]any{}), p.UpstreamID); err != nil || len(p.Outputs) != 1 || f.TokenFetches() != 3 {
		t.Fatalf("check after a 401: %+v %v, %d token fetches", p, err, f.TokenFetches())
	}

	// Tokens that expire in 5 s are inside oauth2's 10 s refresh margin:
	// the engine must fetch a fresh one before each call.
	f.SetTokenLifetime(5 * time.Second)
	v = newVertexFor(t, f, f.Key())
	before := f.TokenFetches()
	for range 2 {
		if _, err := run(t, v, vImageJob(proImage)); err != nil {
			t.Fatal(err)
		}
	}
	used = f.UsedTokens()
	if got := f.TokenFetches() - before; got != 2 || used[len(used)-1] == used[len(used)-2] {
		t.Fatalf("%d token fetches for two calls with short-lived tokens, last tokens %v", got, used[len(used)-2:])
	}
}

// TestVertexStorageURI: with the route's storageUri, Veo writes the video
// to Cloud Storage and the engine reads it there with the same token.
func TestVertexStorageURI(t *testing.T) {
	f, v := newVertex(t)
	j := vVideoJob(vVeo31, map[string]any{})
	j.Route = vroute(vVeo31, "storageUri", "gs://gengate-outputs/veo")
	p, err := run(t, v, j)
	if err != nil || len(p.Outputs) != 1 || p.Outputs[0].ContentType != "video/mp4" {
		t.Fatalf("%+v %v", p, err)
	}
	if got := get(f.LastRequest(), "parameters", "storageUri"); got != "gs://gengate-outputs/veo" {
		t.Fatalf("storageUri %v", got)
	}
}

// TestVertexCheckHealth: credentials the token endpoint takes are
// healthy, a key it refuses is reported with its 400, an address that
// does not answer as such.
func TestVertexCheckHealth(t *testing.T) {
	f := googletest.NewVertex(t)
	enginetest.Health(t, f, func(key, base string) enginetest.HealthChecker {
		if key == "wrong-key-0000" {
			key = googletest.CredentialsSignedWithAnotherKey(t, f.TokenURL())
		}
		return newVertexFor(t, f, key).withBase(base)
	}, http.StatusBadRequest)
}

// withBase points v at another Vertex AI address (the closed address of
// the health test), keeping its credentials.
func (v *Vertex) withBase(base string) *Vertex {
	c := *v.core.client
	c.BaseURL = base
	v.core = &Engine{client: &c}
	return v
}

// TestNewVertexRefusesBadSettings: a bad project or location, a missing
// credentials file or one that is not a service account key are errors at
// start, and the file's contents are never in the message.
func TestNewVertexRefusesBadSettings(t *testing.T) {
	f := googletest.NewVertex(t)
	secretish := t.TempDir() + "/authorized-user.json"
	if err := os.WriteFile(secretish, []byte(`{"type": "authorized_user", "client_secret": "do-not-print-me", "refresh_token": "1//do-not-print-me"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []VertexConfig{
		{Project: "", Location: "us-central1", CredentialsFile: f.Key()},
		{Project: "gengate-test", Location: "us central", CredentialsFile: f.Key()},
		{Project: "gengate-test", Location: "us-central1", CredentialsFile: t.TempDir() + "/missing.json"},
		{Project: "gengate-test", Location: "us-central1", CredentialsFile: secretish},
	} {
		_, err := NewVertex("vertex", c)
		if err == nil {
			t.Fatalf("%+v accepted", c)
		}
		if strings.Contains(err.Error(), "do-not-print-me") {
			t.Fatalf("the error shows the file's secrets: %v", err)
		}
	}
}

// TestVertexInlineLimit: a Gemini image model on Vertex AI takes input
// files inline up to VertexInlineMax; a larger one is refused by Validate
// (which sees the fetched inputs before any charge) with INPUT_TOO_LARGE
// on its field, and by Submit before anything is sent. Veo and Imagen
// inputs are not held to it.
func TestVertexInlineLimit(t *testing.T) {
	f, v := newVertex(t)
	big := gengate.Input{Data: make([]byte, VertexInlineMax+1), ContentType: "image/png", Large: true}
	copy(big.Data, pngInput.Data)
	job := vImageJob(flashImage)
	job.Inputs = map[string]gengate.Input{"imageUrl": big}
	err := v.Validate(job)
	var e *gengate.Error
	if !errors.As(err, &e) || e.Code != gengate.EInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "imageUrl" || e.Fields[0].Code != gengate.InputTooLarge {
		t.Fatalf("Validate of a %d-byte input: %v, want INPUT_TOO_LARGE on imageUrl", len(big.Data), err)
	}
	before := f.Submissions()
	if _, err := v.Submit(ctx, job); gengate.ErrorCode(err) != gengate.EInvalid || f.Submissions() != before {
		t.Errorf("Submit of a too large input: %v (%d submissions), want EInvalid and nothing sent", err, f.Submissions()-before)
	}
	job.Inputs = map[string]gengate.Input{"imageUrl": {Data: big.Data[:VertexInlineMax], ContentType: "image/png"}}
	if err := v.Validate(job); err != nil {
		t.Errorf("Validate at the limit: %v", err)
	}
	vid := vVideoJob(veo31, map[string]any{})
	vid.Inputs = map[string]gengate.Input{"imageUrl": big}
	if err := v.Validate(vid); err != nil {
		t.Errorf("Validate of a large Veo input: %v, want none (Veo takes inline bytes)", err)
	}
}

// TestVertexCheckRegistry: a route whose publisher model Vertex AI's Model
// Garden no longer has (publishers.models.get answers 404) is unknown; the
// others are live; refused credentials are no answer at all.
func TestVertexCheckRegistry(t *testing.T) {
	f, v := newVertex(t)
	f.Retire("veo-3.0-generate-001")
	got, err := v.CheckRegistry(ctx, []string{"imagen-4.0-ultra-generate-001", "veo-3.0-generate-001", "gemini-3-pro-image-preview"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"imagen-4.0-ultra-generate-001": gengate.RouteLive, "veo-3.0-generate-001": gengate.RouteUnknown,
		"gemini-3-pro-image-preview": gengate.RouteLive}
	for id, st := range want {
		if got[id].State != st {
			t.Errorf("%s: %+v, want %s", id, got[id], st)
		}
	}
	if r := got["veo-3.0-generate-001"].Reason; !strings.Contains(r, "veo-3.0-generate-001") {
		t.Errorf("reason %q does not name the model", r)
	}
	bad := newVertexFor(t, f, googletest.CredentialsSignedWithAnotherKey(t, f.TokenURL()))
	if _, err := bad.CheckRegistry(ctx, []string{"imagen-4.0-ultra-generate-001"}); err == nil {
		t.Error("a registry whose credentials are refused gave an answer")
	}
}
