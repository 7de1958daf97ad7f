package sandbox

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	xwebp "golang.org/x/image/webp"

	"github.com/gengate/gengate"
)

// submit runs job through a delay-free engine and returns its outputs.
func submit(tb testing.TB, job gengate.Job) []gengate.Output {
	tb.Helper()
	p, err := New(0).Submit(context.Background(), job)
	if err != nil {
		tb.Fatalf("Submit: %v", err)
	}
	if p.UpstreamID != "" || len(p.Outputs) == 0 {
		tb.Fatalf("Submit = %+v, want outputs and no upstream id", p)
	}
	return p.Outputs
}

func imageJob(format, aspect string) gengate.Job {
	return gengate.Job{
		TaskID:       "task_1",
		ModelID:      "flux-schnell",
		Type:         "image",
		Prompt:       "a lighthouse on a cliff at dusk, dramatic clouds",
		AspectRatio:  aspect,
		NumOutputs:   1,
		OutputFormat: format,
	}
}

// decodeOutput decodes an image output with the decoder its content type
// names.
func decodeOutput(tb testing.TB, out gengate.Output) image.Image {
	tb.Helper()
	decoders := map[string]func(io.Reader) (image.Image, error){
		"image/png":  png.Decode,
		"image/jpeg": jpeg.Decode,
		"image/webp": xwebp.Decode,
	}
	dec, ok := decoders[out.ContentType]
	if !ok {
		tb.Fatalf("unexpected content type %q", out.ContentType)
	}
	img, err := dec(bytes.NewReader(out.Data))
	if err != nil {
		tb.Fatalf("decode %s: %v", out.ContentType, err)
	}
	return img
}

func requireFailed(tb testing.TB, err error) {
	tb.Helper()
	var ge *gengate.Error
	if !errors.As(err, &ge) || ge.Code != gengate.EFailed {
		tb.Fatalf("error = %v, want a *gengate.Error with code %s", err, gengate.EFailed)
	}
}

func TestEngineIdentity(t *testing.T) {
	e := New(0)
	if e.Name() != "sandbox" {
		t.Errorf("Name() = %q, want sandbox", e.Name())
	}
	if !e.Repeatable() {
		t.Error("Repeatable() = false, want true")
	}
}

func TestImageFormatsAndSizes(t *testing.T) {
	formats := []struct {
		format, contentType, ext string
	}{
		{"png", "image/png", "png"},
		{"", "image/png", "png"},
		{"jpeg", "image/jpeg", "jpeg"},
		{"jpg", "image/jpeg", "jpeg"},
		{"webp", "image/webp", "webp"},
	}
	sizes := []struct {
		aspect string
		w, h   int
	}{
		{"", 512, 512},
		{"1:1", 512, 512},
		{"16:9", 768, 432},
		{"9:16", 432, 768},
		{"4:3", 640, 480},
		{"3:4", 480, 640},
		{"3:2", 768, 512},
		{"2:3", 512, 768},
		{"21:9", 896, 384},
		{"5:4", 768, 614},    // parsed, fitted within 768
		{"1:2", 384, 768},    // parsed
		{"2.39:1", 768, 321}, // fractional
	}
	for _, f := range formats {
		for _, s := range sizes {
			if f.format == "" || f.format == "jpg" {
				if s.aspect != "16:9" {
					continue // aliases: one size is enough
				}
			}
			t.Run(f.format+"/"+s.aspect, func(t *testing.T) {
				outs := submit(t, imageJob(f.format, s.aspect))
				if len(outs) != 1 {
					t.Fatalf("got %d outputs, want 1", len(outs))
				}
				out := outs[0]
				if out.ContentType != f.contentType || out.Ext != f.ext {
					t.Errorf("ContentType, Ext = %q, %q; want %q, %q", out.ContentType, out.Ext, f.contentType, f.ext)
				}
				b := decodeOutput(t, out).Bounds()
				if b.Dx() != s.w || b.Dy() != s.h {
					t.Errorf("size = %dx%d, want %dx%d", b.Dx(), b.Dy(), s.w, s.h)
				}
			})
		}
	}
}

func TestNumOutputs(t *testing.T) {
	tests := []struct {
		num, want int
	}{
		{0, 1},
		{1, 1},
		{3, 3},
	}
	for _, tt := range tests {
		for _, format := range []string{"png", "webp"} {
			job := imageJob(format, "1:1")
			job.NumOutputs = tt.num
			outs := submit(t, job)
			if len(outs) != tt.want {
				t.Fatalf("%s NumOutputs=%d: got %d outputs, want %d", format, tt.num, len(outs), tt.want)
			}
			for i := range outs {
				decodeOutput(t, outs[i])
				for j := i + 1; j < len(outs); j++ {
					if bytes.Equal(outs[i].Data, outs[j].Data) {
						t.Errorf("%s: outputs %d and %d are identical", format, i, j)
					}
				}
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	jobs := map[string]gengate.Job{
		"png":   imageJob("png", "16:9"),
		"jpeg":  imageJob("jpeg", "1:1"),
		"webp":  imageJob("webp", "9:16"),
		"video": videoJob("16:9", nil),
	}
	for name, job := range jobs {
		t.Run(name, func(t *testing.T) {
			job.NumOutputs = 2
			a, b := submit(t, job), submit(t, job)
			if len(a) != len(b) {
				t.Fatalf("output counts differ: %d vs %d", len(a), len(b))
			}
			for i := range a {
				if !bytes.Equal(a[i].Data, b[i].Data) {
					t.Errorf("output %d differs between two runs of the same job", i)
				}
			}
		})
	}
}

func TestDifferentJobsDiffer(t *testing.T) {
	tests := []struct {
		name   string
		change func(*gengate.Job)
	}{
		{"prompt", func(j *gengate.Job) { j.Prompt = "a red fox in the snow" }},
		{"model", func(j *gengate.Job) { j.ModelID = "flux-2-pro" }},
		{"task id is ignored", nil},
	}
	for _, base := range []gengate.Job{imageJob("png", "1:1"), imageJob("webp", "1:1"), videoJob("1:1", nil)} {
		for _, tt := range tests {
			t.Run(base.OutputFormat+base.Type+"/"+tt.name, func(t *testing.T) {
				job := base
				same := tt.change == nil
				if same {
					job.TaskID = "task_other"
				} else {
					tt.change(&job)
				}
				a, b := submit(t, base)[0].Data, submit(t, job)[0].Data
				if got := bytes.Equal(a, b); got != same {
					t.Errorf("outputs equal = %v, want %v", got, same)
				}
			})
		}
	}
}

// pngInput returns a PNG input of the given size filled with c.
func pngInput(tb testing.TB, w, h int, c color.RGBA) gengate.Input {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return gengate.Input{Data: buf.Bytes(), ContentType: "image/png", Width: w, Height: h}
}

func TestImageInputs(t *testing.T) {
	red := color.RGBA{255, 0, 0, 255}
	tests := []struct {
		name    string
		model   string
		aspect  string
		inputs  map[string]gengate.Input
		options map[string]any
		w, h    int
		redBG   bool // the input shows through in the bottom-left corner
	}{
		{"input keeps its shape", "qwen-image-edit", "", map[string]gengate.Input{"image": pngInput(t, 300, 200, red)}, nil, 768, 512, true},
		{"portrait input", "remove-bg", "", map[string]gengate.Input{"imageUrl": pngInput(t, 100, 400, red)}, nil, 192, 768, true},
		{"aspect ratio wins", "qwen-image-edit", "16:9", map[string]gengate.Input{"image": pngInput(t, 300, 300, red)}, nil, 768, 432, true},
		{"preferred key", "virtual-try-on", "", map[string]gengate.Input{
			"clothImage":  pngInput(t, 200, 200, color.RGBA{0, 0, 255, 255}),
			"personImage": pngInput(t, 200, 400, red),
		}, nil, 384, 768, true},
		{"non-image input ignored", "flux", "", map[string]gengate.Input{"prompt": {Data: []byte("hi"), ContentType: "text/plain"}}, nil, 512, 512, false},
		{"undecodable input uses header size", "qwen-image-edit", "", map[string]gengate.Input{"image": {Data: []byte("nope"), ContentType: "image/avif", Width: 400, Height: 100}}, nil, 768, 192, false},
		{"upscale int", "image-upscaler", "", map[string]gengate.Input{"imageUrl": pngInput(t, 300, 200, red)}, map[string]any{"scale": int64(2)}, 600, 400, true},
		{"upscale float", "image-upscaler", "", map[string]gengate.Input{"imageUrl": pngInput(t, 100, 60, red)}, map[string]any{"scale": 1.5}, 150, 90, true},
		{"upscale capped", "image-upscaler", "", map[string]gengate.Input{"imageUrl": pngInput(t, 1000, 500, red)}, map[string]any{"scale": int64(8)}, 4096, 2048, true},
		{"upscale without scale", "image-upscaler", "", map[string]gengate.Input{"imageUrl": pngInput(t, 64, 48, red)}, nil, 64, 48, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := imageJob("png", tt.aspect)
			job.ModelID, job.Inputs, job.Options = tt.model, tt.inputs, tt.options
			img := decodeOutput(t, submit(t, job)[0])
			b := img.Bounds()
			if b.Dx() != tt.w || b.Dy() != tt.h {
				t.Fatalf("size = %dx%d, want %dx%d", b.Dx(), b.Dy(), tt.w, tt.h)
			}
			r, g, bl, _ := img.At(1, b.Dy()-2).RGBA()
			reddish := r>>8 > g>>8+60 && r>>8 > bl>>8+60
			if reddish != tt.redBG {
				t.Errorf("corner pixel (%d,%d,%d): reddish = %v, want %v", r>>8, g>>8, bl>>8, reddish, tt.redBG)
			}
		})
	}
}

func TestBadJobs(t *testing.T) {
	tests := []struct {
		name string
		job  gengate.Job
	}{
		{"unknown type", gengate.Job{ModelID: "x", Type: "audio"}},
		{"unknown format", imageJob("bmp", "1:1")},
		{"aspect not a ratio", imageJob("png", "wide")},
		{"aspect slash", imageJob("png", "16/9")},
		{"aspect zero", imageJob("png", "0:1")},
		{"aspect negative", imageJob("png", "-4:3")},
		{"video aspect", videoJob("square", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(0).Submit(context.Background(), tt.job)
			requireFailed(t, err)
		})
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, job := range []gengate.Job{imageJob("png", "1:1"), videoJob("16:9", nil)} {
		_, err := New(0).Submit(ctx, job)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error = %v, want context.Canceled", job.Type, err)
		}
	}
}

// fakeClock is a clock that only moves when told to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestDelay(t *testing.T) {
	const delay = 10 * time.Second
	clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)}
	e := New(delay)
	e.now = clock.now
	ctx := context.Background()
	job := imageJob("png", "1:1")
	job.NumOutputs = 2

	p, err := e.Submit(ctx, job)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if !strings.HasPrefix(p.UpstreamID, "sbx_") || len(p.Outputs) != 0 || p.RetryAfter != delay {
		t.Fatalf("Submit = %+v, want an sbx_ id, no outputs, RetryAfter %v", p, delay)
	}
	id := p.UpstreamID

	steps := []struct {
		advance   time.Duration
		wantLeft  time.Duration // 0 means outputs are due
		wantCount int
	}{
		{0, delay, 0},
		{3 * time.Second, 7 * time.Second, 0},
		{7*time.Second - time.Nanosecond, time.Nanosecond, 0},
		{time.Nanosecond, 0, 2},
		{time.Hour, 0, 2},
	}
	for i, s := range steps {
		clock.advance(s.advance)
		p, err := e.Check(ctx, job, id)
		if err != nil {
			t.Fatalf("step %d: Check: %v", i, err)
		}
		if len(p.Outputs) != s.wantCount {
			t.Fatalf("step %d: %d outputs, want %d", i, len(p.Outputs), s.wantCount)
		}
		if s.wantCount == 0 && (p.UpstreamID != id || p.RetryAfter != s.wantLeft) {
			t.Errorf("step %d: Check = {%q, %v}, want {%q, %v}", i, p.UpstreamID, p.RetryAfter, id, s.wantLeft)
		}
	}

	// The delayed outputs are those an immediate engine makes.
	p, err = e.Check(ctx, job, id)
	if err != nil {
		t.Fatal(err)
	}
	want := submit(t, job)
	for i := range want {
		if !bytes.Equal(p.Outputs[i].Data, want[i].Data) {
			t.Errorf("delayed output %d differs from the immediate one", i)
		}
	}
}

func TestCheckMalformedID(t *testing.T) {
	for _, id := range []string{"", "sbx_", "sbx_abc", "sbx_-5", "sbx_1e9", "fal_123", "SBX_123", "sbx_99999999999999999999"} {
		t.Run(id, func(t *testing.T) {
			p, err := New(time.Second).Check(context.Background(), imageJob("png", "1:1"), id)
			requireFailed(t, err)
			if len(p.Outputs) != 0 {
				t.Errorf("got outputs with an error")
			}
		})
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in       string
		cols     int
		maxLines int
		want     []string
	}{
		{"", 10, 0, nil},
		{"hello world", 20, 0, []string{"hello world"}},
		{"hello world", 5, 0, []string{"hello", "world"}},
		{"  many   spaces\n\tand lines ", 40, 0, []string{"many spaces and lines"}},
		{"abcdefghij", 4, 0, []string{"abcd", "efgh", "ij"}},
		{"one two three four five six", 9, 2, []string{"one two", "three..."}},
		{"aaaaaaaaa bbbbbbbbb ccc", 9, 1, []string{"aaaaaa..."}},
		{"café ☕", 10, 0, []string{"caf? ?"}},
	}
	for _, tt := range tests {
		got := wrap(tt.in, tt.cols, tt.maxLines)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("wrap(%q, %d, %d) = %q, want %q", tt.in, tt.cols, tt.maxLines, got, tt.want)
		}
		for _, l := range got {
			if len(l) > tt.cols {
				t.Errorf("wrap(%q, %d, %d): line %q is longer than %d", tt.in, tt.cols, tt.maxLines, l, tt.cols)
			}
		}
	}
}

func BenchmarkImagePNG(b *testing.B) {
	job := imageJob("png", "1:1")
	e := New(0)
	for b.Loop() {
		if _, err := e.Submit(context.Background(), job); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRendersBounded: the engine renders at most as many tasks' outputs at
// once as it has places (as many as processors unless SetMaxRenders says
// otherwise); a render waits for a place, a caller that gives up while it
// waits gets its context's error, and every render gives its place back.
func TestRendersBounded(t *testing.T) {
	if got, want := cap(New(0).renders), runtime.GOMAXPROCS(0); got != want {
		t.Errorf("default places = %d; want GOMAXPROCS %d", got, want)
	}
	e := New(0)
	e.SetMaxRenders(1)
	job := imageJob("png", "1:1")
	e.renders <- struct{}{} // the one place, taken by a render under way
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := e.Submit(ctx, job)
		waited <- err
	}()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("a render waiting for a place, its caller gone: %v; want context.Canceled", err)
	}
	<-e.renders // the render under way ends
	for range 3 {
		p, err := e.Submit(context.Background(), job)
		if err != nil || len(p.Outputs) != 1 {
			t.Fatalf("Submit = %d outputs, %v", len(p.Outputs), err)
		}
	}
	if n := len(e.renders); n != 0 {
		t.Errorf("%d places still taken after the renders ended; want 0", n)
	}
}

// backgroundAt is paintBackground's rule for one pixel, computed directly.
func backgroundAt(s [32]byte, w, h, x, y int) color.RGBA {
	c1, c2, _ := palette(s)
	period := 24 + int(s[6])%40
	dirX, dirY := 1, 1
	if s[7]&1 == 1 {
		dirX = -1
	}
	span := w + h
	t := x + y
	lerp := func(a, b uint8) int { return (int(a)*(span-t) + int(b)*t) / span }
	r, g, bl := lerp(c1.R, c2.R), lerp(c1.G, c2.G), lerp(c1.B, c2.B)
	if ((dirX*x+dirY*y+span)/period)%2 == 0 {
		r, g, bl = r+(255-r)/8, g+(255-g)/8, bl+(255-bl)/8
	}
	return color.RGBA{uint8(r), uint8(g), uint8(bl), 255}
}

// TestBackgroundTables: the background painted from its tables is, pixel
// for pixel, the rule computed directly, for both stripe directions and
// for square, wide, tall and one-pixel images.
func TestBackgroundTables(t *testing.T) {
	for _, size := range [][2]int{{64, 64}, {97, 31}, {13, 120}, {1, 1}} {
		for k := range 8 {
			var s [32]byte
			for i := range s {
				s[i] = byte(k*37 + i*11)
			}
			s[7] = byte(k) // both directions
			w, h := size[0], size[1]
			img := image.NewRGBA(image.Rect(0, 0, w, h))
			paintBackground(img, s)
			for y := range h {
				for x := range w {
					if got, want := img.RGBAAt(x, y), backgroundAt(s, w, h, x, y); got != want {
						t.Fatalf("%dx%d seed %d: pixel (%d,%d) = %v; want %v", w, h, k, x, y, got, want)
					}
				}
			}
		}
	}
}
