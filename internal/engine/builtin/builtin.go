// Package builtin is the engine of gengate's own CPU image operations:
// image-upscaler, remove-bg, object-remover and photo-restoration, written
// in Go in internal/imageops (no model weights, no upstream). It serves
// those models by default; an operator may still route them to an
// upstream. docs/builtin-quality.md shows how good they are.
package builtin

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"slices"

	"github.com/gen2brain/webp"

	_ "golang.org/x/image/webp" // input decoders
	_ "image/gif"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/imageops/inpaint"
	"github.com/gengate/gengate/internal/imageops/matte"
	"github.com/gengate/gengate/internal/imageops/restore"
	"github.com/gengate/gengate/internal/imageops/upscale"
)

// Limits of what one operation may be asked to do.
const (
	// MaxInputPixels matches the fetcher's limit on input images.
	MaxInputPixels = 50_000_000
	// MaxOutputPixels bounds an upscaled image (about 4 GB of working
	// memory at most).
	MaxOutputPixels = upscale.MaxOutputPixels
)

// op is one operation: its input fields, the output formats it can
// write, and the function that runs it.
type op struct {
	inputs  []string
	formats []string
	run     func(job gengate.Job, imgs map[string]image.Image) (image.Image, error)
}

// Engine runs the operations in this process. It is repeatable: running
// an operation twice costs CPU, nothing else.
type Engine struct {
	ops map[string]op
	adm *admission
}

var _ interface {
	gengate.Engine
	gengate.Validator
	gengate.Admitter
} = (*Engine)(nil)

// New returns the engine.
func New() *Engine {
	return &Engine{adm: newAdmission(0), ops: map[string]op{
		"image-upscaler": {inputs: []string{"imageUrl"}, formats: []string{"png", "jpeg", "webp"}, run: runUpscale},
		"object-remover": {inputs: []string{"image", "mask"}, formats: []string{"png", "jpeg", "webp"}, run: runInpaint},
		// remove-bg writes formats with transparency only.
		"remove-bg":         {inputs: []string{"imageUrl"}, formats: []string{"png", "webp"}, run: runRemoveBackground},
		"photo-restoration": {inputs: []string{"imageUrl"}, formats: []string{"png", "jpeg", "webp"}, run: runRestore},
	}}
}

// Name is "builtin".
func (e *Engine) Name() string { return "builtin" }

// Repeatable is true: the work is local and deterministic.
func (e *Engine) Repeatable() bool { return true }

func (e *Engine) op(job gengate.Job) (op, string, error) {
	name := job.Route.Upstream
	if name == "" {
		name = job.ModelID
	}
	o, ok := e.ops[name]
	if !ok {
		return op{}, name, &gengate.Error{Code: gengate.EUnsupportedOption, Message: "the built-in engine has no operation " + name,
			Fields: []gengate.FieldError{{Field: "modelId", Code: gengate.FieldUnsupported, Message: "no built-in operation " + name}}}
	}
	return o, name, nil
}

// Validate checks the operation exists and can write the format, and,
// when the inputs have been fetched, their sizes.
func (e *Engine) Validate(job gengate.Job) error {
	o, name, err := e.op(job)
	if err != nil {
		return err
	}
	if f := job.OutputFormat; f != "" && !slices.Contains(o.formats, f) {
		return &gengate.Error{Code: gengate.EUnsupportedOption, Message: fmt.Sprintf("%s cannot write %s", name, f),
			Fields: []gengate.FieldError{{Field: "outputFormat", Code: gengate.FieldUnsupported, Message: "not available for " + name}}}
	}
	sizes := map[string]image.Point{}
	for field, in := range job.Inputs {
		if in.Width > 0 && in.Height > 0 {
			sizes[field] = image.Pt(in.Width, in.Height)
		}
	}
	return checkSizes(name, job, sizes)
}

// checkSizes refuses inputs whose sizes the operation cannot work with.
func checkSizes(name string, job gengate.Job, sizes map[string]image.Point) error {
	for field, p := range sizes {
		if p.X*p.Y > MaxInputPixels {
			return invalid(field, fmt.Sprintf("the image is %d×%d; at most %d megapixels are accepted", p.X, p.Y, MaxInputPixels/1_000_000))
		}
	}
	switch name {
	case "image-upscaler":
		if p, ok := sizes["imageUrl"]; ok {
			s := scale(job)
			if p.X*s*p.Y*s > MaxOutputPixels {
				return invalid("imageUrl", fmt.Sprintf("the image is %d×%d; upscaled ×%d it would exceed %d megapixels", p.X, p.Y, s, MaxOutputPixels/1_000_000))
			}
		}
	case "object-remover":
		img, ok1 := sizes["image"]
		mask, ok2 := sizes["mask"]
		if ok1 && ok2 && img != mask {
			return invalid("mask", fmt.Sprintf("the mask is %d×%d but the image is %d×%d; they must be the same size", mask.X, mask.Y, img.X, img.Y))
		}
	}
	return nil
}

func invalid(field, msg string) error {
	return &gengate.Error{Code: gengate.EInvalid, Message: field + ": " + msg,
		Fields: []gengate.FieldError{{Field: field, Code: gengate.FieldValue, Message: msg}}}
}

func scale(job gengate.Job) int {
	switch v := job.Options["scale"].(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	case int:
		return v
	}
	return 2
}

// Submit runs the operation and returns its output at once, when one of
// the engine's running slots is free (see SetMaxJobs).
func (e *Engine) Submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	return e.adm.run(ctx, job.TaskID, func() (gengate.Progress, error) { return e.submit(ctx, job) })
}

func (e *Engine) submit(ctx context.Context, job gengate.Job) (gengate.Progress, error) {
	o, name, err := e.op(job)
	if err != nil {
		return gengate.Progress{}, err
	}
	imgs := map[string]image.Image{}
	sizes := map[string]image.Point{}
	for _, field := range o.inputs {
		in, ok := job.Inputs[field]
		if !ok {
			return gengate.Progress{}, invalid(field, "is required")
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(in.Data))
		if err != nil {
			return gengate.Progress{}, invalid(field, "is not a readable image")
		}
		if cfg.Width <= 0 || cfg.Height <= 0 {
			return gengate.Progress{}, invalid(field, "has no pixels")
		}
		sizes[field] = image.Pt(cfg.Width, cfg.Height)
	}
	if err := checkSizes(name, job, sizes); err != nil {
		return gengate.Progress{}, err
	}
	for _, field := range o.inputs {
		img, _, err := image.Decode(bytes.NewReader(job.Inputs[field].Data))
		if err != nil {
			return gengate.Progress{}, invalid(field, "is not a readable image")
		}
		imgs[field] = img
	}
	if err := ctx.Err(); err != nil {
		return gengate.Progress{}, err
	}
	out, err := o.run(job, imgs)
	if err != nil {
		return gengate.Progress{}, gengate.Errorf(gengate.EInvalid, "%s: %v", name, err)
	}
	format := job.OutputFormat
	if format == "" {
		format = "png"
	}
	data, err := encode(out, format)
	if err != nil {
		return gengate.Progress{}, err
	}
	ctype := map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}[format]
	return gengate.Progress{Outputs: []gengate.Output{{Data: data, ContentType: ctype, Ext: format}}}, nil
}

// Check is never needed: Submit finishes the work.
func (e *Engine) Check(ctx context.Context, job gengate.Job, upstreamID string) (gengate.Progress, error) {
	return e.Submit(ctx, job)
}

func encode(img image.Image, format string) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 92})
	case "webp":
		err = webp.Encode(&buf, img, webp.Options{Quality: 90, Method: webp.DefaultMethod})
	default:
		err = fmt.Errorf("no encoder for %q", format)
	}
	if err != nil {
		return nil, fmt.Errorf("builtin: encode %s: %w", format, err)
	}
	return buf.Bytes(), nil
}

func runUpscale(job gengate.Job, imgs map[string]image.Image) (image.Image, error) {
	return upscale.Upscale(imgs["imageUrl"], scale(job))
}

// runInpaint removes what the mask marks: white on black, or transparent
// pixels of an alpha mask (inpaint.MaskFrom).
func runInpaint(job gengate.Job, imgs map[string]image.Image) (image.Image, error) {
	hole, err := inpaint.MaskFrom(imgs["mask"])
	if err != nil {
		return nil, err
	}
	return inpaint.Inpaint(imgs["image"], hole)
}

func runRemoveBackground(job gengate.Job, imgs map[string]image.Image) (image.Image, error) {
	return matte.RemoveBackground(imgs["imageUrl"])
}

// runRestore runs the whole restoration pipeline with its defaults: blind
// noise estimate, denoising, deblocking, contrast, colour and sharpening,
// and scratch filling when the removeScratches option asks for it.
func runRestore(job gengate.Job, imgs map[string]image.Image) (image.Image, error) {
	scratches, _ := job.Options["removeScratches"].(bool)
	return restore.Restore(imgs["imageUrl"], restore.Options{RemoveScratches: scratches})
}
