package builtin

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/gengate/gengate"
)

func pngBytes(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func input(t testing.TB, img image.Image) gengate.Input {
	return gengate.Input{Data: pngBytes(t, img), ContentType: "image/png"}
}

func flat(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// pngHeader is a PNG whose header claims w×h pixels and that has no pixel
// data: the size check must refuse it before decoding.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk := append([]byte("IHDR"), ihdr...)
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func decode(t *testing.T, o gengate.Output) image.Image {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(o.Data))
	if err != nil {
		t.Fatalf("output %s does not decode: %v", o.ContentType, err)
	}
	return img
}

func job(model string, opts map[string]any, inputs map[string]gengate.Input, format string) gengate.Job {
	return gengate.Job{TaskID: "t", ModelID: model, Type: "image", Route: gengate.Route{Engine: "builtin", Upstream: model},
		Options: opts, Inputs: inputs, OutputFormat: format, NumOutputs: 1}
}

func TestUpscaleEachFormat(t *testing.T) {
	e := New()
	src := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			src.Set(x, y, color.NRGBA{uint8(x * 6), uint8(y * 8), 90, 255})
		}
	}
	for _, f := range []string{"png", "jpeg", "webp"} {
		t.Run(f, func(t *testing.T) {
			p, err := e.Submit(context.Background(), job("image-upscaler", map[string]any{"scale": int64(4)},
				map[string]gengate.Input{"imageUrl": input(t, src)}, f))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Outputs) != 1 || p.Outputs[0].Ext != f {
				t.Fatalf("outputs %+v", p.Outputs)
			}
			if b := decode(t, p.Outputs[0]).Bounds(); b.Dx() != 160 || b.Dy() != 120 {
				t.Fatalf("size %v, want 160×120", b)
			}
		})
	}
}

// TestObjectRemoverFillsDisc: a disc on a flat background, masked, comes
// out as the background.
func TestObjectRemoverFillsDisc(t *testing.T) {
	bg := color.NRGBA{40, 120, 200, 255}
	img := flat(64, 64, bg)
	mask := flat(64, 64, color.NRGBA{0, 0, 0, 255})
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			if (x-32)*(x-32)+(y-32)*(y-32) < 100 {
				img.Set(x, y, color.NRGBA{250, 20, 20, 255})
				mask.Set(x, y, color.NRGBA{255, 255, 255, 255})
			}
		}
	}
	p, err := New().Submit(context.Background(), job("object-remover", nil,
		map[string]gengate.Input{"image": input(t, img), "mask": input(t, mask)}, "png"))
	if err != nil {
		t.Fatal(err)
	}
	out := decode(t, p.Outputs[0])
	r, g, b, _ := out.At(32, 32).RGBA()
	if d := absDiff(r>>8, 40) + absDiff(g>>8, 120) + absDiff(b>>8, 200); d > 6 {
		t.Fatalf("centre of the removed disc is %d,%d,%d", r>>8, g>>8, b>>8)
	}
}

func absDiff(a uint32, b int) int {
	d := int(a) - b
	if d < 0 {
		return -d
	}
	return d
}

// TestBadInputs: each is refused with a clear INVALID_REQUEST (a definite
// failure: the task fails and is refunded), before any pixel work.
func TestBadInputs(t *testing.T) {
	img := input(t, flat(32, 32, color.NRGBA{1, 2, 3, 255}))
	cases := []struct {
		name   string
		model  string
		opts   map[string]any
		inputs map[string]gengate.Input
		field  string
	}{
		{"not an image", "image-upscaler", map[string]any{"scale": int64(2)}, map[string]gengate.Input{"imageUrl": {Data: []byte("hello")}}, "imageUrl"},
		{"zero size", "image-upscaler", map[string]any{"scale": int64(2)}, map[string]gengate.Input{"imageUrl": {Data: pngHeader(0, 10)}}, "imageUrl"},
		{"huge", "image-upscaler", map[string]any{"scale": int64(2)}, map[string]gengate.Input{"imageUrl": {Data: pngHeader(20000, 20000)}}, "imageUrl"},
		{"too large to upscale", "image-upscaler", map[string]any{"scale": int64(4)}, map[string]gengate.Input{"imageUrl": {Data: pngHeader(4000, 3000)}}, "imageUrl"},
		{"mask of another size", "object-remover", nil, map[string]gengate.Input{"image": img, "mask": input(t, flat(16, 32, color.NRGBA{255, 255, 255, 255}))}, "mask"},
		{"missing mask", "object-remover", nil, map[string]gengate.Input{"image": img}, "mask"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Submit(context.Background(), job(tc.model, tc.opts, tc.inputs, "png"))
			var e *gengate.Error
			if !errorsAs(err, &e) || e.Code != gengate.EInvalid || len(e.Fields) == 0 || e.Fields[0].Field != tc.field {
				t.Fatalf("got %v, want INVALID_REQUEST on %s", err, tc.field)
			}
		})
	}
}

// TestValidateWithSizes: with fetched sizes, Validate refuses what Submit
// would, so the request is refused before any charge.
func TestValidateWithSizes(t *testing.T) {
	e := New()
	j := job("object-remover", nil, map[string]gengate.Input{"image": {Width: 100, Height: 80}, "mask": {Width: 80, Height: 100}}, "png")
	if gengate.ErrorCode(e.Validate(j)) != gengate.EInvalid {
		t.Error("mask of another size accepted")
	}
	j.Inputs["mask"] = gengate.Input{Width: 100, Height: 80}
	if err := e.Validate(j); err != nil {
		t.Errorf("matching mask refused: %v", err)
	}
	j = job("image-upscaler", map[string]any{"scale": int64(4)}, map[string]gengate.Input{"imageUrl": {Width: 4000, Height: 3000}}, "png")
	if gengate.ErrorCode(e.Validate(j)) != gengate.EInvalid {
		t.Error("a 192 MP upscale accepted")
	}
	j = job("image-upscaler", map[string]any{"scale": int64(2)}, map[string]gengate.Input{"imageUrl": {}}, "gif")
	if gengate.ErrorCode(e.Validate(j)) != gengate.EUnsupportedOption {
		t.Error("gif output accepted")
	}
	if gengate.ErrorCode(e.Validate(job("flux", nil, nil, "png"))) != gengate.EUnsupportedOption {
		t.Error("a model the engine has no operation for accepted")
	}
}

// FuzzSubmit feeds arbitrary bytes as the input image: the engine never
// panics, never decodes more than its pixel limit, and refuses what it
// cannot read with INVALID_REQUEST.
func FuzzSubmit(f *testing.F) {
	f.Add(pngBytes(f, flat(3, 2, color.NRGBA{9, 9, 9, 255})))
	f.Add(pngHeader(1, 1))
	f.Add(pngHeader(100000, 100000))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Add([]byte("\xff\xd8\xff\xe0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := New().Submit(context.Background(), job("image-upscaler", map[string]any{"scale": int64(2)},
			map[string]gengate.Input{"imageUrl": {Data: data}}, "png"))
		if err != nil {
			if gengate.ErrorCode(err) != gengate.EInvalid {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(p.Outputs) != 1 {
			t.Fatalf("%d outputs", len(p.Outputs))
		}
	})
}

func errorsAs(err error, e **gengate.Error) bool {
	if err == nil {
		return false
	}
	ge, ok := err.(*gengate.Error)
	if ok {
		*e = ge
	}
	return ok
}

// TestRemoveBackgroundDisc: a disc on a flat background comes out opaque
// inside and transparent outside, as PNG or WebP with alpha.
func TestRemoveBackgroundDisc(t *testing.T) {
	img := flat(96, 96, color.NRGBA{230, 230, 225, 255})
	for y := 0; y < 96; y++ {
		for x := 0; x < 96; x++ {
			if (x-48)*(x-48)+(y-48)*(y-48) < 25*25 {
				img.Set(x, y, color.NRGBA{200, 40, 30, 255})
			}
		}
	}
	for _, f := range []string{"png", "webp"} {
		t.Run(f, func(t *testing.T) {
			p, err := New().Submit(context.Background(), job("remove-bg", nil, map[string]gengate.Input{"imageUrl": input(t, img)}, f))
			if err != nil {
				t.Fatal(err)
			}
			out := decode(t, p.Outputs[0])
			if _, _, _, a := out.At(48, 48).RGBA(); a < 0xf000 {
				t.Errorf("centre alpha %d, want opaque", a>>8)
			}
			if _, _, _, a := out.At(3, 3).RGBA(); a > 0x1000 {
				t.Errorf("corner alpha %d, want transparent", a>>8)
			}
		})
	}
	if gengate.ErrorCode(New().Validate(job("remove-bg", nil, nil, "jpeg"))) != gengate.EUnsupportedOption {
		t.Error("remove-bg accepted jpeg, which has no transparency")
	}
}

// TestRestoreRemovesNoise: noise on a smooth picture is removed: the
// mean second difference along rows (zero for the clean gradient, large
// for noise; contrast and colour corrections barely move it) falls by at
// least three quarters.
func TestRestoreRemovesNoise(t *testing.T) {
	noisy := image.NewNRGBA(image.Rect(0, 0, 96, 64))
	seed := uint32(7)
	n := func() int {
		seed = seed*1664525 + 1013904223
		return int(seed>>24)%41 - 20
	}
	clamp := func(v int) uint8 { return uint8(min(255, max(0, v))) }
	for y := 0; y < 64; y++ {
		for x := 0; x < 96; x++ {
			noisy.Set(x, y, color.NRGBA{clamp(60 + x + n()), clamp(80 + y + n()), clamp(140 + n()), 255})
		}
	}
	p, err := New().Submit(context.Background(), job("photo-restoration", nil, map[string]gengate.Input{"imageUrl": input(t, noisy)}, "png"))
	if err != nil {
		t.Fatal(err)
	}
	rough := func(img image.Image) float64 {
		var s float64
		for y := 0; y < 64; y++ {
			for x := 1; x < 95; x++ {
				for c := 0; c < 3; c++ {
					v := func(x int) float64 {
						r, g, b, _ := img.At(x, y).RGBA()
						return float64([3]uint32{r, g, b}[c] >> 8)
					}
					d := v(x-1) - 2*v(x) + v(x+1)
					if d < 0 {
						d = -d
					}
					s += d
				}
			}
		}
		return s
	}
	if before, after := rough(noisy), rough(decode(t, p.Outputs[0])); after > before/4 {
		t.Fatalf("roughness %.0f after restoration, %.0f before", after, before)
	}
}

// TestRestoreScratchOption: a dark scratch across a smooth gradient stays
// when removeScratches is false (the default) and is filled when true.
func TestRestoreScratchOption(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 160, 120))
	for y := 0; y < 120; y++ {
		for x := 0; x < 160; x++ {
			v := uint8(y) + 100
			if x == 80 || x == 81 {
				v = 20 // the scratch
			}
			src.Set(x, y, color.NRGBA{v, v, uint8(int(v) * 9 / 10), 255})
		}
	}
	scratchDepth := func(opts map[string]any) float64 {
		p, err := New().Submit(context.Background(), job("photo-restoration", opts, map[string]gengate.Input{"imageUrl": input(t, src)}, "png"))
		if err != nil {
			t.Fatal(err)
		}
		out := decode(t, p.Outputs[0])
		var s float64 // how much darker the scratch is than its neighbours
		for y := 10; y < 110; y++ {
			g := func(x int) float64 { _, g, _, _ := out.At(x, y).RGBA(); return float64(g >> 8) }
			s += (g(76)+g(85))/2 - (g(80)+g(81))/2
		}
		return s / 100
	}
	kept := scratchDepth(map[string]any{"removeScratches": false})
	removed := scratchDepth(map[string]any{"removeScratches": true})
	t.Logf("scratch depth: %.1f levels kept, %.1f removed", kept, removed)
	if kept < 50 {
		t.Errorf("scratch depth %.1f without removeScratches, want it kept", kept)
	}
	if removed > 5 {
		t.Errorf("scratch depth %.1f with removeScratches, want it filled", removed)
	}
}
