package sandbox

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gen2brain/webp"
	xdraw "golang.org/x/image/draw"
	xwebp "golang.org/x/image/webp"

	"github.com/gengate/gengate"
)

const (
	maxImageSide    = 768  // long side of a generated image of a parsed aspect ratio
	maxUpscaledSide = 4096 // long side cap of image-upscaler outputs
	minImageSide    = 16
	jpegQuality     = 85
	webpQuality     = 80
	promptLines     = 4 // prompt lines shown before "..."
	upscalerModelID = "image-upscaler"
)

// inputKeys are the input fields checked first, in order, for the picture an
// image-to-image job starts from.
func inputKeys() []string { return []string{"imageUrl", "image", "inputImage", "personImage"} }

// seed is the hash the colours and pattern of output index of job derive
// from.
func seed(job gengate.Job, index int) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s\x00%d:%s\x00%d", len(job.ModelID), job.ModelID, len(job.Prompt), job.Prompt, index)
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// palette derives two background colours and an accent colour from a seed.
// Channels stay in a middle band so that white text on a dark panel and the
// pattern both remain visible.
func palette(s [32]byte) (c1, c2, accent color.RGBA) {
	ch := func(b byte) uint8 { return 48 + uint8(int(b)*160/255) }
	c1 = color.RGBA{ch(s[0]), ch(s[1]), ch(s[2]), 255}
	c2 = color.RGBA{ch(s[3]), ch(s[4]), ch(s[5]), 255}
	accent = color.RGBA{255 - c1.R/2, 255 - c1.G/2, 255 - c1.B/2, 255}
	return c1, c2, accent
}

// paintBackground fills img with a diagonal gradient between the seed's two
// colours crossed by faint stripes whose angle and period come from the seed.
func paintBackground(img *image.RGBA, s [32]byte) {
	c1, c2, _ := palette(s)
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	period := 24 + int(s[6])%40
	dirX, dirY := 1, 1
	if s[7]&1 == 1 {
		dirX = -1
	}
	span := w + h
	if span == 0 {
		return
	}
	// A pixel's colour depends only on its diagonal t = x+y (the
	// gradient) and on dirX*x+dirY*y (its stripe): both are tables made
	// once per image, not three divisions and a modulo per pixel
	// (backgroundAt is the rule pixel by pixel, TestBackgroundTables).
	plain, light := make([][3]uint8, span), make([][3]uint8, span)
	for t := range span {
		lerp := func(a, b uint8) int { return (int(a)*(span-t) + int(b)*t) / span }
		r, g, bl := lerp(c1.R, c2.R), lerp(c1.G, c2.G), lerp(c1.B, c2.B)
		plain[t] = [3]uint8{uint8(r), uint8(g), uint8(bl)}
		light[t] = [3]uint8{uint8(r + (255-r)/8), uint8(g + (255-g)/8), uint8(bl + (255-bl)/8)}
	}
	lit := make([]bool, 2*span) // by dirX*x+dirY*y+span, which is in [1, 2*span)
	for i := range lit {
		lit[i] = (i/period)%2 == 0
	}
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < w; x++ {
			c := plain[x+y]
			if lit[dirX*x+dirY*y+span] {
				c = light[x+y]
			}
			p := row[4*x : 4*x+4]
			p[0], p[1], p[2], p[3] = c[0], c[1], c[2], 255
		}
	}
}

// paintInput draws src scaled to cover img (cropping the overflow evenly),
// faded into img's current content so that it reads as a background.
func paintInput(img *image.RGBA, src image.Image) {
	b := img.Bounds()
	sb := src.Bounds()
	if sb.Empty() || b.Empty() {
		return
	}
	// Crop src to img's aspect ratio, centred.
	crop := sb
	if sb.Dx()*b.Dy() > sb.Dy()*b.Dx() {
		cw := sb.Dy() * b.Dx() / b.Dy()
		crop.Min.X += (sb.Dx() - cw) / 2
		crop.Max.X = crop.Min.X + max(cw, 1)
	} else {
		ch := sb.Dx() * b.Dy() / b.Dx()
		crop.Min.Y += (sb.Dy() - ch) / 2
		crop.Max.Y = crop.Min.Y + max(ch, 1)
	}
	scaled := image.NewRGBA(b)
	xdraw.ApproxBiLinear.Scale(scaled, b, src, crop, xdraw.Src, nil)
	// 5/8 input over 3/8 pattern, then lifted towards white for the fade.
	for i := 0; i < len(img.Pix); i += 4 {
		for c := 0; c < 3; c++ {
			v := (int(scaled.Pix[i+c])*5 + int(img.Pix[i+c])*3) / 8
			img.Pix[i+c] = uint8(v + (255-v)/4)
		}
		img.Pix[i+3] = 255
	}
}

// findInput returns the job's input picture, if it has one: the first of
// inputKeys holding an image, else the image input with the smallest key.
func findInput(job gengate.Job) (gengate.Input, bool) {
	isImage := func(in gengate.Input) bool { return strings.HasPrefix(in.ContentType, "image/") }
	for _, k := range inputKeys() {
		if in, ok := job.Inputs[k]; ok && isImage(in) {
			return in, true
		}
	}
	keys := make([]string, 0, len(job.Inputs))
	for k, in := range job.Inputs {
		if isImage(in) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return gengate.Input{}, false
	}
	slices.Sort(keys)
	return job.Inputs[keys[0]], true
}

// decodeInput decodes an input picture. A nil image with nil error means the
// format is one the sandbox does not decode; the caller then goes on without
// a background picture.
func decodeInput(in gengate.Input) (image.Image, error) {
	r := bytes.NewReader(in.Data)
	switch in.ContentType {
	case "image/png":
		return png.Decode(r)
	case "image/jpeg", "image/jpg":
		return jpeg.Decode(r)
	case "image/gif":
		return gif.Decode(r)
	case "image/webp":
		return xwebp.Decode(r)
	}
	return nil, nil
}

// inputPicture returns the job's input picture decoded, and its size (from
// the decoded picture, or from the input's header fields when it could not
// be decoded). ok is false when the job has no usable input picture.
func inputPicture(job gengate.Job) (img image.Image, w, h int, ok bool) {
	in, found := findInput(job)
	if !found {
		return nil, 0, 0, false
	}
	img, err := decodeInput(in)
	if err == nil && img != nil {
		b := img.Bounds()
		return img, b.Dx(), b.Dy(), true
	}
	if in.Width > 0 && in.Height > 0 {
		return nil, in.Width, in.Height, true
	}
	return nil, 0, 0, false
}

// imageSize returns the pixel size of a named aspect ratio. Common ratios
// have fixed sizes; any other "W:H" is fitted within maxImageSide.
func imageSize(aspect string) (w, h int, err error) {
	switch aspect {
	case "", "1:1":
		return 512, 512, nil
	case "16:9":
		return 768, 432, nil
	case "9:16":
		return 432, 768, nil
	case "4:3":
		return 640, 480, nil
	case "3:4":
		return 480, 640, nil
	case "3:2":
		return 768, 512, nil
	case "2:3":
		return 512, 768, nil
	case "21:9":
		return 896, 384, nil
	}
	aw, ah, err := parseAspect(aspect)
	if err != nil {
		return 0, 0, err
	}
	w, h = fit(aw, ah, maxImageSide)
	return w, h, nil
}

// parseAspect parses "W:H" with positive, possibly fractional, numbers.
func parseAspect(aspect string) (w, h float64, err error) {
	a, b, ok := strings.Cut(aspect, ":")
	if ok {
		w, err = strconv.ParseFloat(strings.TrimSpace(a), 64)
	}
	if ok && err == nil {
		h, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
	}
	if !ok || err != nil || !(w > 0 && h > 0) || math.IsInf(w, 0) || math.IsInf(h, 0) {
		return 0, 0, gengate.Errorf(gengate.EFailed, "sandbox: unsupported aspect ratio %q", aspect)
	}
	return w, h, nil
}

// fit scales aw×ah so that its long side is long, keeping each side at least
// minImageSide.
func fit(aw, ah float64, long int) (w, h int) {
	if aw >= ah {
		w, h = long, int(math.Round(float64(long)*ah/aw))
	} else {
		w, h = int(math.Round(float64(long)*aw/ah)), long
	}
	return max(w, minImageSide), max(h, minImageSide)
}

// number reads a numeric option given as int64, float64, int or a string
// such as "5" or "5s". ok is false when the option is absent or unreadable.
func number(opts map[string]any, key string) (v float64, ok bool) {
	switch x := opts[key].(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(strings.ToLower(x)), "s"), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// imagePlan is what every output image of a job shares.
type imagePlan struct {
	w, h   int
	input  image.Image // nil without an input picture
	format imageFormat
}

// imageFormat names an output encoding.
type imageFormat struct {
	contentType, ext string
}

// outputFormat resolves a job's OutputFormat; empty means PNG.
func outputFormat(f string) (imageFormat, error) {
	switch strings.ToLower(f) {
	case "", "png":
		return imageFormat{"image/png", "png"}, nil
	case "jpeg", "jpg":
		return imageFormat{"image/jpeg", "jpeg"}, nil
	case "webp":
		return imageFormat{"image/webp", "webp"}, nil
	}
	return imageFormat{}, gengate.Errorf(gengate.EFailed, "sandbox: unsupported image output format %q", f)
}

// planImages works out the format and size of a job's images. With an input
// picture and no aspect ratio the input's shape is kept; the image-upscaler
// multiplies the input's size by the scale option instead.
func planImages(job gengate.Job) (imagePlan, error) {
	var p imagePlan
	var err error
	if p.format, err = outputFormat(job.OutputFormat); err != nil {
		return p, err
	}
	in, iw, ih, hasInput := inputPicture(job)
	p.input = in
	switch {
	case hasInput && job.ModelID == upscalerModelID:
		scale, ok := number(job.Options, "scale")
		if !ok || scale <= 0 {
			scale = 1
		}
		w, h := float64(iw)*scale, float64(ih)*scale
		if long := max(w, h); long > maxUpscaledSide {
			w, h = w*maxUpscaledSide/long, h*maxUpscaledSide/long
		}
		p.w, p.h = max(int(math.Round(w)), 1), max(int(math.Round(h)), 1)
	case hasInput && job.AspectRatio == "":
		p.w, p.h = fit(float64(iw), float64(ih), maxImageSide)
	default:
		p.w, p.h, err = imageSize(job.AspectRatio)
	}
	return p, err
}

// renderImage paints output index (0-based) of n for job.
func renderImage(job gengate.Job, p imagePlan, index, n int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	s := seed(job, index)
	paintBackground(img, s)
	if p.input != nil {
		paintInput(img, p.input)
	}

	scale := textScale(p.w)
	margin := 4 * scale
	cols := max((p.w-2*margin)/(glyphW*scale)-1, 1)
	banner := textBlock{
		lines: bannerLines(cols),
		scale: scale,
		fg:    color.RGBA{255, 214, 0, 255},
		bg:    color.RGBA{0, 0, 0, 220},
	}
	bw, bh := banner.size()
	banner.draw(img, image.Pt((p.w-bw)/2, margin))

	prompt := job.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = noPrompt
	}
	lines := wrap(job.ModelID, cols, 2)
	lines = append(lines, fmt.Sprintf("image %d/%d", index+1, n), "")
	lines = append(lines, wrap(prompt, cols, promptLines)...)
	info := textBlock{lines: lines, scale: scale, fg: color.RGBA{255, 255, 255, 255}, bg: color.RGBA{0, 0, 0, 160}}
	iw, ih := info.size()
	top := margin + bh + margin
	// Centre the info panel in the space under the banner when it fits.
	y := max(top, top+(p.h-top-ih)/2)
	info.draw(img, image.Pt((p.w-iw)/2, y))

	// A seed-coloured swatch in the corner tells outputs apart at a glance.
	_, _, accent := palette(s)
	sw := 6 * scale
	for y := p.h - margin - sw; y < p.h-margin; y++ {
		for x := p.w - margin - sw; x < p.w-margin; x++ {
			if x >= 0 && y >= 0 {
				img.SetRGBA(x, y, accent)
			}
		}
	}
	return img
}

// bannerLines lays out bannerText in lines of at most cols characters,
// breaking at its dash first.
func bannerLines(cols int) []string {
	if len(bannerText) <= cols {
		return []string{bannerText}
	}
	first, second, _ := strings.Cut(bannerText, " - ")
	return append(wrap(first, cols, 0), wrap(second, cols, 0)...)
}

// encodeImage encodes img in format f.
func encodeImage(img image.Image, f imageFormat) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch f.ext {
	case "png":
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	case "webp":
		err = webp.Encode(&buf, img, webp.Options{Quality: webpQuality, Method: webp.DefaultMethod})
	default:
		err = fmt.Errorf("sandbox: no encoder for %q", f.ext)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode %s: %w", f.ext, err)
	}
	return buf.Bytes(), nil
}
