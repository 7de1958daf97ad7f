package fetch

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"

	"github.com/gengate/gengate"
)

// imageFormat is one accepted image format: how to recognise it and how to
// decode it.
type imageFormat struct {
	contentType  string
	decodeConfig func(io.Reader) (image.Config, error)
	decode       func(io.Reader) (image.Image, error)
}

// sniffImage returns the format of data by its magic bytes, or false. The
// decoders are called directly rather than through image.Decode so that
// formats other packages register (BMP, TIFF, a second WebP decoder) are
// never used.
func sniffImage(data []byte) (imageFormat, bool) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return imageFormat{"image/png", png.DecodeConfig, png.Decode}, true
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return imageFormat{"image/jpeg", jpeg.DecodeConfig, jpeg.Decode}, true
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		// gif.Decode reads the first frame only, so an animation with
		// many frames costs no more than one.
		return imageFormat{"image/gif", gif.DecodeConfig, gif.Decode}, true
	case len(data) >= 16 && string(data[0:4]) == "RIFF" && string(data[8:15]) == "WEBPVP8":
		return imageFormat{"image/webp", webp.DecodeConfig, webp.Decode}, true
	}
	return imageFormat{}, false
}

// sniffVideo returns the content type of data by its magic bytes, or false.
// Videos are not decoded; engines and upstream providers do that.
func sniffVideo(data []byte) (string, bool) {
	switch {
	case len(data) >= 16 && string(data[4:8]) == "ftyp":
		// An ISO base media file (MP4, QuickTime MOV, 3GP) starts with
		// an ftyp box: size, "ftyp", major brand, minor version.
		size := binary.BigEndian.Uint32(data[0:4])
		if size < 16 || stillImageBrand(string(data[8:12])) {
			return "", false
		}
		return "video/mp4", true
	case bytes.HasPrefix(data, []byte("\x1a\x45\xdf\xa3")):
		// The EBML magic of WebM and Matroska.
		return "video/webm", true
	}
	return "", false
}

// stillImageBrand reports whether an ftyp major brand names a still image
// format (HEIF, AVIF) that shares the MP4 container.
func stillImageBrand(brand string) bool {
	switch brand {
	case "avif", "avis", "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1":
		return true
	}
	return false
}

// checkImage sniffs data as an image, checks its pixel count and what it
// costs to decode (decodeCost) from the header alone, and then, with that
// much of the decode memory reserved, decodes it once to prove it whole.
// The caller holds held bytes of the decode memory for this input already
// (its file's size limit while it was fetched): only what the file and its
// decoding need beyond them is taken.
func (fe *Fetcher) checkImage(ctx context.Context, data []byte, held int64) (gengate.Input, error) {
	f, ok := sniffImage(data)
	if !ok {
		return gengate.Input{}, gengate.Errorf(gengate.InputNotSupported,
			"input is not a PNG, JPEG, GIF or WebP image")
	}
	cfg, err := f.decodeConfig(bytes.NewReader(data))
	if err != nil {
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable,
			"input image header cannot be decoded")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable,
			"input image has no pixels (%dx%d)", cfg.Width, cfg.Height)
	}
	if maxPixels := fe.cfg.MaxPixels; int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return gengate.Input{}, gengate.Errorf(gengate.InputTooLarge,
			"input image is %dx%d, more than the %d pixels allowed", cfg.Width, cfg.Height, maxPixels)
	}
	cost := decodeCost(data, f, cfg)
	if cost > fe.cfg.MaxInputMemory {
		return gengate.Input{}, gengate.Errorf(gengate.InputDecodeTooLarge,
			"input image (%dx%d) would take %d MB to decode, more than the %d MB allowed per input; send it smaller, in 8 bits per channel, or not progressive",
			cfg.Width, cfg.Height, cost>>20, fe.cfg.MaxInputMemory>>20)
	}
	release, err := fe.reserve(ctx, int64(len(data))+cost-held)
	if err != nil {
		return gengate.Input{}, err
	}
	defer release()
	if _, err := f.decode(bytes.NewReader(data)); err != nil {
		return gengate.Input{}, gengate.Errorf(gengate.InputUndecodable,
			"input image is truncated or corrupt")
	}
	return gengate.Input{Data: data, ContentType: f.contentType, Width: cfg.Width, Height: cfg.Height}, nil
}

// checkVideo sniffs data as a video.
func checkVideo(data []byte) (gengate.Input, error) {
	ct, ok := sniffVideo(data)
	if !ok {
		return gengate.Input{}, gengate.Errorf(gengate.InputNotSupported,
			"input is not an MP4, QuickTime or WebM video")
	}
	return gengate.Input{Data: data, ContentType: ct}, nil
}
