package inpaint

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"

	"github.com/gengate/gengate/internal/imageops"
)

// showHole returns a copy of src with the hole painted over in red (half
// transparent, so the object stays recognisable).
func showHole(src image.Image, hole *image.Gray) *image.NRGBA {
	out := toNRGBA(src)
	b := out.Bounds()
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			if hole.Pix[y*hole.Stride+x] < 128 {
				continue
			}
			o := y*out.Stride + 4*x
			out.Pix[o] = uint8((int(out.Pix[o]) + 3*255) / 4)
			out.Pix[o+1] = uint8(int(out.Pix[o+1]) / 4)
			out.Pix[o+2] = uint8(int(out.Pix[o+2]) / 4)
			out.Pix[o+3] = 255
		}
	}
	return out
}

// sideBySide places the images left to right with a 4-pixel white gap.
func sideBySide(imgs ...image.Image) *image.NRGBA {
	const gap = 4
	w, h := 0, 0
	for _, m := range imgs {
		w += m.Bounds().Dx() + gap
		h = max(h, m.Bounds().Dy())
	}
	out := image.NewNRGBA(image.Rect(0, 0, w-gap, h))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	x := 0
	for _, m := range imgs {
		b := m.Bounds()
		draw.Draw(out, image.Rect(x, 0, x+b.Dx(), b.Dy()), m, b.Min, draw.Src)
		x += b.Dx() + gap
	}
	return out
}

func savePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDeepFillCases writes, for every DeepFill v2 case, a side-by-side
// PNG: input with the hole in red | object-remover | Telea diffusion |
// DeepFill v2 (the learned peer), to picDir/objectremover-caseN.png.
func writeDeepFillCases(dataDir, picDir string, fill func(image.Image, *image.Gray) (*image.NRGBA, error)) error {
	dir := filepath.Join(dataDir, "inpaint-deepfill-places2-cases")
	if err := os.MkdirAll(picDir, 0o755); err != nil {
		return err
	}
	for n := 1; ; n++ {
		base := filepath.Join(dir, fmt.Sprintf("case%d", n))
		raw, err := imageops.Load(base + "_raw.png")
		if err != nil {
			if n == 1 {
				return err
			}
			return nil // no more cases
		}
		mimg, err := imageops.Load(base + "_mask.png")
		if err != nil {
			return err
		}
		peer, err := imageops.Load(base + "_output.png")
		if err != nil {
			return err
		}
		hole, err := MaskFrom(mimg)
		if err != nil {
			return err
		}
		ours, err := fill(raw, hole)
		if err != nil {
			return fmt.Errorf("case%d: %w", n, err)
		}
		diff, err := Telea(raw, hole)
		if err != nil {
			return fmt.Errorf("case%d: %w", n, err)
		}
		out := sideBySide(showHole(raw, hole), ours, diff, peer)
		if err := savePNG(filepath.Join(picDir, fmt.Sprintf("objectremover-case%d.png", n)), out); err != nil {
			return err
		}
	}
}
