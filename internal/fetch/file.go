package fetch

import (
	"bufio"
	"bytes"
	"context"
	"io"

	"github.com/gengate/gengate"
)

// headSize is how much of a stored file CheckFile reads to name its type
// and cost its decoding: the image header and, for a JPEG, the segments
// before its frame header (EXIF and ICC profiles included, as a rule).
const headSize = 256 << 10

// CheckFile checks a stored file of size bytes (an upload, an own file
// named as an input) as Check checks bytes, without holding it: the size
// from the caller (the record), the type and an image's header from its
// first bytes, and an image decoded once from a second read to prove it
// whole, with its decode cost reserved from the decode memory. The Input
// it returns has no Data: its ContentType, Size and, for an image, Width
// and Height.
func (f *Fetcher) CheckFile(ctx context.Context, open func(context.Context) (io.ReadCloser, error), size int64, kind gengate.InputKind) (gengate.Input, error) {
	limit := f.MaxBytes(kind)
	switch {
	case limit == 0:
		return gengate.Input{}, gengate.Errorf(gengate.InputNotSupported, "inputs of kind %q are not fetched", kind)
	case size > limit:
		return gengate.Input{}, gengate.Errorf(gengate.InputTooLarge, "input is larger than the %d bytes allowed", limit)
	case size == 0:
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable, "the file is empty")
	}
	rc, err := open(ctx)
	if err != nil {
		return gengate.Input{}, err
	}
	defer rc.Close()
	head := make([]byte, min(size, headSize))
	n, err := io.ReadFull(rc, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return gengate.Input{}, err
	}
	head = head[:n]
	if kind == gengate.KindVideo {
		in, err := checkVideo(head)
		in.Data, in.Size = nil, size
		return in, err
	}
	format, ok := sniffImage(head)
	if !ok {
		return gengate.Input{}, gengate.Errorf(gengate.InputNotSupported, "input is not a PNG, JPEG, GIF or WebP image")
	}
	// The header is read from the head and, past it, from the rest.
	cfg, err := format.decodeConfig(io.MultiReader(bytes.NewReader(head), rc))
	if err != nil {
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable, "input image header cannot be decoded")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable, "input image has no pixels (%dx%d)", cfg.Width, cfg.Height)
	}
	if maxPixels := f.cfg.MaxPixels; int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return gengate.Input{}, gengate.Errorf(gengate.InputTooLarge,
			"input image is %dx%d, more than the %d pixels allowed", cfg.Width, cfg.Height, maxPixels)
	}
	cost := decodeCost(head, format, cfg)
	if cost > f.cfg.MaxInputMemory {
		return gengate.Input{}, gengate.Errorf(gengate.InputDecodeTooLarge,
			"input image (%dx%d) would take %d MB to decode, more than the %d MB allowed per input; send it smaller, in 8 bits per channel, or not progressive",
			cfg.Width, cfg.Height, cost>>20, f.cfg.MaxInputMemory>>20)
	}
	release, err := f.reserve(ctx, cost+headSize)
	if err != nil {
		return gengate.Input{}, err
	}
	defer release()
	whole, err := open(ctx)
	if err != nil {
		return gengate.Input{}, err
	}
	defer whole.Close()
	if _, err := format.decode(bufio.NewReaderSize(io.LimitReader(whole, size), 32<<10)); err != nil {
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable, "input image is truncated or corrupt")
	}
	return gengate.Input{ContentType: format.contentType, Width: cfg.Width, Height: cfg.Height, Size: size}, nil
}
