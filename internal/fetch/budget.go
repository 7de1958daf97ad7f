package fetch

import (
	"context"
	"encoding/binary"
	"image"
	"image/color"

	"github.com/gengate/gengate"
)

// Defaults of the decode budgets.
const (
	// DefaultMaxInputMemory is the most one input image may cost to
	// decode, in bytes (--max-input-memory): a 16-bit 7000x7000 PNG (392
	// MB) or a progressive 7000x7000 JPEG (about 730 MB) is over it, an
	// 8-bit 7000x7000 RGBA PNG (196 MB) or a 50 megapixel baseline JPEG
	// (150 MB at 4:4:4) within it.
	DefaultMaxInputMemory = 256 << 20
	// DefaultMaxDecodeMemory is how many bytes the inputs being fetched and
	// decoded at once may cost together (--max-decode-memory).
	DefaultMaxDecodeMemory = 1 << 30
)

// decodeCost estimates from an image's header the bytes decoding it takes
// with the decoders gengate uses: width x height x bytes per pixel of the
// image the decoder builds, with what the decoder keeps beside it.
//
//   - PNG: the decoded image's pixel size follows the colour type and bit
//     depth (gray 1, gray 16-bit 2, paletted 1, colour 4, colour 16-bit 8);
//     an interlaced (Adam7) image is decoded pass by pass into sub-images
//     first, which doubles it.
//   - JPEG: one byte per sample of each component at its sampling factor;
//     a progressive JPEG also keeps every component's DCT coefficients
//     (64 int32 per 8x8 block: 4 bytes per sample) until its last scan,
//     and a 4-component or non-YCbCr 3-component one is converted to a
//     4-byte-per-pixel image.
//   - GIF: only the first frame is decoded, 1 byte per pixel.
//   - WebP: lossy 1.5 bytes per pixel (rounded to 2), lossy with alpha 7
//     (its alpha plane is decoded losslessly), lossless 8 (the ARGB words
//     and the transforms' copy).
func decodeCost(data []byte, f imageFormat, cfg image.Config) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	switch f.contentType {
	case "image/png":
		bpp := int64(4)
		switch cfg.ColorModel {
		case color.GrayModel:
			bpp = 1
		case color.Gray16Model:
			bpp = 2
		case color.RGBA64Model, color.NRGBA64Model:
			bpp = 8
		default:
			if _, ok := cfg.ColorModel.(color.Palette); ok {
				bpp = 1
			}
		}
		cost := px * bpp
		if len(data) > 28 && data[28] == 1 { // IHDR interlace method: Adam7
			cost *= 2
		}
		return cost
	case "image/jpeg":
		if c, ok := jpegCost(data, cfg); ok {
			return c
		}
		return px * 15 // no frame header found: the worst case
	case "image/gif":
		return px
	case "image/webp":
		switch cfg.ColorModel {
		case color.YCbCrModel:
			return px * 2
		case color.NYCbCrAModel:
			return px * 7
		}
		return px * 8
	}
	return px * 8
}

// jpegCost reads a JPEG's frame header (SOFn) for its components, their
// sampling factors and whether it is progressive.
func jpegCost(data []byte, cfg image.Config) (int64, bool) {
	i := 2 // after SOI
	for i+4 <= len(data) {
		if data[i] != 0xff {
			return 0, false
		}
		marker := data[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		if marker == 0xd8 || marker >= 0xd0 && marker <= 0xd7 || marker == 0x01 {
			i += 2 // markers without a length
			continue
		}
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		seg := data[i+4 : min(len(data), i+2+n)]
		isSOF := marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc
		if !isSOF {
			if marker == 0xda || marker == 0xd9 { // scan data or end before any frame
				return 0, false
			}
			i += 2 + n
			continue
		}
		if len(seg) < 6 {
			return 0, false
		}
		w, h := int64(binary.BigEndian.Uint16(seg[3:])), int64(binary.BigEndian.Uint16(seg[1:]))
		if w == 0 || h == 0 {
			w, h = int64(cfg.Width), int64(cfg.Height)
		}
		nc := int(seg[5])
		if nc < 1 || len(seg) < 6+3*nc {
			return 0, false
		}
		var hmax, vmax int64 = 1, 1
		for c := range nc {
			hv := seg[6+3*c+1]
			hmax, vmax = max(hmax, int64(hv>>4)), max(vmax, int64(hv&15))
		}
		var samples int64
		for c := range nc {
			hv := seg[6+3*c+1]
			// Each component is stored in whole 8x8 blocks of whole MCUs.
			cw := ceilDiv(w, 8*hmax) * 8 * max(1, int64(hv>>4))
			ch := ceilDiv(h, 8*vmax) * 8 * max(1, int64(hv&15))
			samples += cw * ch
		}
		cost := samples
		if marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce { // progressive
			cost += 4 * samples
		}
		if nc == 4 || nc == 3 && cfg.ColorModel != color.YCbCrModel {
			cost += 4 * w * h
		}
		return cost, true
	}
	return 0, false
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// overloaded is the refusal when the decode memory is all taken.
func overloaded() error {
	return gengate.Errorf(gengate.EOverloaded, "the server is busy checking other input files; retry in a few seconds")
}

// reserve takes n bytes of the decode memory for the caller, who must
// call the release it returns; it never waits: when the memory is taken it
// refuses with OVERLOADED at once, before anything is charged.
func (f *Fetcher) reserve(ctx context.Context, n int64) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	if ctx.Err() != nil {
		return nil, gengate.Errorf(gengate.InputFetchFailed, "fetching the input was canceled")
	}
	if !f.sem.TryAcquire(n) {
		return nil, overloaded()
	}
	return func() { f.sem.Release(n) }, nil
}
