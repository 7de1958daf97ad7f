package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/gengate/gengate"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openAIClient is OpenAI's official Go SDK pointed at the stack.
// Every answer it reads is validated against the OpenAPI document.
func (s *stack) openAIClient(key string, opts ...option.RequestOption) openai.Client {
	validate := func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		resp, err := next(r)
		if err != nil {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if msg := validateAnswer(r, resp, body); msg != "" {
			s.t.Errorf("%s %s answered %d, which the OpenAPI document does not describe: %s\n%s", r.Method, r.URL.Path, resp.StatusCode, msg, body)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(s.URL + "/v1/"), option.WithAPIKey(key),
		option.WithMiddleware(validate)}, opts...)...)
}

// TestOpenAIGenerate: the SDK's Images.Generate runs a gengate model and
// gets its images as URLs or base64, charged like a generate call.
func TestOpenAIGenerate(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(100)
		c := s.openAIClient(key)
		ctx := context.Background()

		res, err := c.Images.Generate(ctx, openai.ImageGenerateParams{
			Model: "flux", Prompt: "a lighthouse at dusk", N: openai.Int(2), Size: "1536x1024",
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 2 || res.Created == 0 {
			t.Fatalf("%d images, created %d: %s", len(res.Data), res.Created, res.RawJSON())
		}
		for _, img := range res.Data {
			wantImage(t, img.URL, "png", 3, 2) // 1536x1024 is nearest to 3:2
		}
		flux, _ := s.svc.Catalog.Model("flux")
		spent := 100 - s.balance(acct)
		if spent != flux.Quote(map[string]any{"numOutputs": int64(2)}) {
			t.Errorf("charged %d credits for two flux images", spent)
		}

		res, err = c.Images.Generate(ctx, openai.ImageGenerateParams{
			Model: "flux", Prompt: "a lighthouse at dusk", Size: "1024x1792", OutputFormat: "jpeg",
			ResponseFormat: openai.ImageGenerateParamsResponseFormatB64JSON,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 1 || res.Data[0].URL != "" || res.OutputFormat != "jpeg" {
			t.Fatalf("want one base64 image and output_format jpeg: %s", res.RawJSON())
		}
		data, err := base64.StdEncoding.DecodeString(res.Data[0].B64JSON)
		if err != nil {
			t.Fatal(err)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || format != "jpeg" || cfg.Height <= cfg.Width {
			t.Errorf("b64_json is a %dx%d %s (%v), want a tall jpeg", cfg.Width, cfg.Height, format, err)
		}
		s.ledgerCheck(acct)
	})
}

// TestOpenAIEdit: the SDK's multipart Images.Edit sends an image to a
// gengate model that takes one.
func TestOpenAIEdit(t *testing.T) {
	s := newStack(t, stackOpts{})
	_, key := s.account(100)
	c := s.openAIClient(key)
	res, err := c.Images.Edit(context.Background(), openai.ImageEditParams{
		Model: "qwen-image-edit", Prompt: "make it night",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(testPNG(t, 64, 48)), "in.png", "image/png")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 {
		t.Fatalf("want one image: %s", res.RawJSON())
	}
	wantImage(t, res.Data[0].URL, "png", 4, 3) // the edit keeps the input's shape

	// A mask goes to the model's mask input.
	res, err = c.Images.Edit(context.Background(), openai.ImageEditParams{
		Model: "object-remover", Prompt: "",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(testPNG(t, 64, 48)), "in.png", "image/png")},
		Mask:  openai.File(bytes.NewReader(testPNG(t, 64, 48)), "mask.png", "image/png"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 {
		t.Fatalf("want one image: %s", res.RawJSON())
	}
}

// TestOpenAIEditParam: a refusal of one of the model's own options names
// that option as the error's param, not the image.
func TestOpenAIEditParam(t *testing.T) {
	s := newStack(t, stackOpts{})
	_, key := s.account(100)
	c := s.openAIClient(key)
	_, err := c.Images.Edit(context.Background(), openai.ImageEditParams{
		Model: "image-upscaler", Prompt: "",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(testPNG(t, 64, 48)), "in.png", "image/png")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "scale" {
		t.Fatalf("want a 400 naming param scale, got %v", err)
	}
}

// TestOpenAIErrors: refusals reach the SDK as its typed error with
// OpenAI's statuses and codes, and a final refusal is not retried.
func TestOpenAIErrors(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(0)
		var attempts atomic.Int32
		c := s.openAIClient(key, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			attempts.Add(1)
			return next(r)
		}))
		ctx := context.Background()
		cases := []struct {
			name   string
			params openai.ImageGenerateParams
			status int
			code   string
			param  string
		}{
			{"insufficient credits", openai.ImageGenerateParams{Model: "flux", Prompt: "a cat"}, 429, "insufficient_quota", ""},
			{"unknown model", openai.ImageGenerateParams{Model: "dall-e-9", Prompt: "a cat"}, 404, "model_not_found", "model"},
			{"video model", openai.ImageGenerateParams{Model: "kling-2-1", Prompt: "a cat"}, 400, "invalid_value", "model"},
			{"n on a one-image model", openai.ImageGenerateParams{Model: "nano-banana", Prompt: "a cat", N: openai.Int(3)}, 400, "invalid_value", "n"},
			{"bad output format", openai.ImageGenerateParams{Model: "flux", Prompt: "a cat", OutputFormat: "webp"}, 400, "unsupported_model_option", "output_format"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				attempts.Store(0)
				_, err := c.Images.Generate(ctx, tc.params)
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) {
					t.Fatalf("error %v is not an *openai.Error", err)
				}
				if apiErr.StatusCode != tc.status || apiErr.Code != tc.code || apiErr.Param != tc.param || apiErr.Message == "" {
					t.Errorf("got %d code %q param %q (%q); want %d %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Param, apiErr.Message, tc.status, tc.code, tc.param)
				}
				if n := attempts.Load(); n != 1 {
					t.Errorf("the SDK sent %d requests for a final refusal", n)
				}
			})
		}
		bad := s.openAIClient("gg_live_nope")
		_, err := bad.Images.Generate(ctx, openai.ImageGenerateParams{Model: "flux", Prompt: "a cat"})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
			t.Errorf("bad key: %v", err)
		}
		if s.taskCount() != 0 || s.balance(acct) != 0 {
			t.Error("a refused request left a task or moved credits")
		}
	})
}

// TestOpenAIIdempotentRetry: the SDK retries a request whose answer was
// lost; with an Idempotency-Key the retry gets the same task and the
// account is charged once.
func TestOpenAIIdempotentRetry(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		s := newStack(t, stackOpts{dialect: dialect})
		acct, key := s.account(100)
		var attempts atomic.Int32
		lose := func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			resp, err := next(r)
			if attempts.Add(1) == 1 && err == nil {
				resp.Body.Close()
				return nil, errors.New("connection reset by peer (injected: the answer is lost)")
			}
			return resp, err
		}
		c := s.openAIClient(key, option.WithMiddleware(lose), option.WithHeader("Idempotency-Key", "openai-retry-1"))
		res, err := c.Images.Generate(context.Background(), openai.ImageGenerateParams{Model: "flux", Prompt: "a lighthouse"})
		if err != nil {
			t.Fatal(err)
		}
		if attempts.Load() != 2 || len(res.Data) != 1 {
			t.Fatalf("%d attempts, %d images; want the SDK's retry to succeed", attempts.Load(), len(res.Data))
		}
		flux, _ := s.svc.Catalog.Model("flux")
		if spent := 100 - s.balance(acct); spent != flux.Credits || s.taskCount() != 1 {
			t.Errorf("charged %d credits over %d tasks; want %d once", spent, s.taskCount(), flux.Credits)
		}
		// The same key again answers the same images.
		c2 := s.openAIClient(key, option.WithHeader("Idempotency-Key", "openai-retry-1"))
		again, err := c2.Images.Generate(context.Background(),
			openai.ImageGenerateParams{Model: "flux", Prompt: "a lighthouse"})
		if err != nil || again.Data[0].URL != res.Data[0].URL {
			t.Errorf("replay: %v, %v vs %v", err, again, res.Data[0].URL)
		}
		s.ledgerCheck(acct)
	})
}

// TestOpenAIModelOptions: a model's own options the OpenAI API lacks reach
// the model as the SDK sends extra fields: extra form fields on an edit
// (image-upscaler's scale, through ImageEditParams.SetExtraFields), extra
// JSON fields on a generation (flux's seed, through option.WithJSONSet);
// a refused one is named as the error's param.
func TestOpenAIModelOptions(t *testing.T) {
	s := newStack(t, stackOpts{})
	acct, key := s.account(100)
	c := s.openAIClient(key)
	ctx := context.Background()

	edit := openai.ImageEditParams{Model: "image-upscaler",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(testPNG(t, 64, 48)), "in.png", "image/png")}}
	// openai-go writes only string extra fields into a multipart body.
	edit.SetExtraFields(map[string]any{"scale": "2"})
	res, err := c.Images.Edit(ctx, edit)
	if err != nil {
		var e *openai.Error
		if errors.As(err, &e) {
			t.Fatalf("%v: %s", err, e.RawJSON())
		}
		t.Fatal(err)
	}
	if len(res.Data) != 1 {
		t.Fatalf("want one image: %s", res.RawJSON())
	}
	data, _ := download(t, res.Data[0].URL)
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != 128 || cfg.Height != 96 {
		t.Errorf("scale 2 of a 64x48 image gave %dx%d (%v), want 128x96", cfg.Width, cfg.Height, err)
	}

	bad := openai.ImageEditParams{Model: "image-upscaler",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(testPNG(t, 64, 48)), "in.png", "image/png")}}
	bad.SetExtraFields(map[string]any{"scale": "3"})
	_, err = c.Images.Edit(ctx, bad)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "scale" {
		t.Errorf("scale 3: want a 400 naming param scale, got %v", err)
	}

	if _, err := c.Images.Generate(ctx, openai.ImageGenerateParams{Model: "flux", Prompt: "a red kite"}, option.WithJSONSet("seed", 7)); err != nil {
		t.Fatal(err)
	}
	tasks, err := s.svc.Store.ListAccountTasks(ctx, acct, gengate.TaskFilter{Limit: 1})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks %v, %v", tasks, err)
	}
	if seed := fmt.Sprint(tasks[0].Options["seed"]); tasks[0].ModelID != "flux" || seed != "7" {
		t.Errorf("the generation's task is %s with seed %s, want flux with seed 7", tasks[0].ModelID, seed)
	}
	_, err = c.Images.Generate(ctx, openai.ImageGenerateParams{Model: "flux", Prompt: "a red kite"}, option.WithJSONSet("seed", -1))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "seed" {
		t.Errorf("seed -1: want a 400 naming param seed, got %v", err)
	}
}
