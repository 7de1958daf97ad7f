package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/gengate/gengate"
)

const (
	videoFPS = 12
	// videoDefaultSeconds is the clip length when the job has no duration.
	videoDefaultSeconds = 2
	// videoMaxSeconds caps the encoded clip. The sandbox video is a
	// placeholder, and I_PCM frames are large, so a job asking for 10 s still
	// gets at most this much; the credits charged are the domain's business.
	videoMaxSeconds = 4
	videoGOP        = 2 * videoFPS // an IDR picture every 2 seconds
	videoTimescale  = videoFPS * 1000
	movieTimescale  = 1000
	videoShortSide  = 144 // 9 macroblocks
	videoSquareSide = 192
	videoMaxLong    = 384 // long side cap for unusual aspect ratios
)

// videoSize picks a small frame size, in whole macroblocks, for an aspect
// ratio: 256×144 for 16:9, 144×256 for 9:16, 192×192 for 1:1, and a short
// side of 144 for other shapes. Without an aspect ratio the input picture's
// shape is used when there is one, else 16:9.
func videoSize(aspect string, inW, inH int) (w, h int, err error) {
	var aw, ah float64
	switch {
	case aspect == "" && inW > 0 && inH > 0:
		aw, ah = float64(inW), float64(inH)
	case aspect == "":
		aw, ah = 16, 9
	default:
		if aw, ah, err = parseAspect(aspect); err != nil {
			return 0, 0, err
		}
	}
	round16 := func(v float64) int {
		return min(max(int(math.Round(v/mbSize))*mbSize, mbSize), videoMaxLong)
	}
	switch {
	case aw == ah:
		return videoSquareSide, videoSquareSide, nil
	case aw > ah:
		return round16(videoShortSide * aw / ah), videoShortSide, nil
	default:
		return videoShortSide, round16(videoShortSide * ah / aw), nil
	}
}

// videoFrames returns the number of frames for the job's duration option:
// videoDefaultSeconds when absent or not positive, at most videoMaxSeconds.
func videoFrames(opts map[string]any) int {
	secs, ok := number(opts, "duration")
	if !ok || secs <= 0 {
		secs = videoDefaultSeconds
	}
	secs = min(secs, videoMaxSeconds)
	return max(int(math.Round(secs*videoFPS)), 1)
}

// clip draws the frames of a job's video.
type clip struct {
	w, h, n     int // frame size and count
	base        *image.RGBA
	accent      color.RGBA
	title, info textBlock
	titleAt     image.Point
	infoAt      image.Point
	barW        int
	rgba        *image.RGBA // scratch frame
}

// newClip plans the video of job.
func newClip(job gengate.Job) (*clip, error) {
	in, inW, inH, _ := inputPicture(job)
	w, h, err := videoSize(job.AspectRatio, inW, inH)
	if err != nil {
		return nil, err
	}
	c := &clip{w: w, h: h, n: videoFrames(job.Options), barW: max(w/8, 8)}
	s := seed(job, 0)
	c.base = image.NewRGBA(image.Rect(0, 0, w, h))
	paintBackground(c.base, s)
	if in != nil {
		paintInput(c.base, in)
	}
	c.rgba = image.NewRGBA(c.base.Rect)
	_, _, c.accent = palette(s)

	// Frames are at most 144 or 192 pixels on their short side: the font at
	// its own size, with the title doubled, fits every shape.
	const scale = 1
	cols := max(w/glyphW-2, 1)
	c.title = textBlock{lines: []string{"SANDBOX"}, scale: 2 * scale, fg: color.RGBA{255, 214, 0, 255}, bg: color.RGBA{0, 0, 0, 200}}
	lines := append([]string{"NOT AI OUTPUT"}, wrap(job.ModelID, cols, 2)...)
	c.info = textBlock{lines: lines, scale: scale, fg: color.RGBA{255, 255, 255, 255}, bg: color.RGBA{0, 0, 0, 160}}
	tw, th := c.title.size()
	iw, ih := c.info.size()
	top := max((h-th-ih)/2, 0)
	c.titleAt = image.Pt((w-tw)/2, top)
	c.infoAt = image.Pt((w-iw)/2, top+th)
	return c, nil
}

// frame draws frame i (0-based) into dst.
func (c *clip) frame(i int, dst *yuvFrame) {
	copy(c.rgba.Pix, c.base.Pix)
	// A bar slides along the top once every two seconds, and a thin line
	// along the bottom shows how far the clip has got. Both stay inside one
	// row of macroblocks each, so P pictures skip nearly everything else.
	x0 := i*(c.w+c.barW)/(2*videoFPS)%(c.w+c.barW) - c.barW
	fillRect(c.rgba, image.Rect(x0, 0, x0+c.barW, mbSize), c.accent)
	fillRect(c.rgba, image.Rect(0, c.h-4, (i+1)*c.w/c.n, c.h), color.RGBA{255, 255, 255, 255})
	c.title.draw(c.rgba, c.titleAt)
	c.info.draw(c.rgba, c.infoAt)
	rgbToYUV(c.rgba, dst)
}

// renderVideo makes the job's MP4. Video is always MP4, whatever the job's
// OutputFormat says, and always a single output.
func renderVideo(ctx context.Context, job gengate.Job) (gengate.Output, error) {
	c, err := newClip(job)
	if err != nil {
		return gengate.Output{}, err
	}
	enc := newH264Encoder(c.w, c.h, videoFPS, videoGOP)
	yuv := newYUVFrame(c.w, c.h)
	samples := make([][]byte, 0, c.n)
	var sync []uint32
	for i := 0; i < c.n; i++ {
		if err := ctx.Err(); err != nil {
			return gengate.Output{}, err
		}
		c.frame(i, yuv)
		nal, idr := enc.Encode(yuv)
		if idr {
			sync = append(sync, uint32(i+1))
		}
		samples = append(samples, lengthPrefixed(nal))
	}
	data, err := muxMP4(enc.SPS(), enc.PPS(), samples, sync)
	if err != nil {
		return gengate.Output{}, err
	}
	return gengate.Output{Data: data, ContentType: "video/mp4", Ext: "mp4"}, nil
}

// fillRect fills r (clipped to img) with c.
func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// rgbToYUV converts img to limited-range BT.601 YUV 4:2:0; chroma is taken
// from the average of each 2×2 block. img must be f's size, with even sides.
func rgbToYUV(img *image.RGBA, f *yuvFrame) {
	w, h := f.W, f.H
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			r, g, b := int(row[4*x]), int(row[4*x+1]), int(row[4*x+2])
			f.Y[y*w+x] = uint8((66*r+129*g+25*b+128)>>8 + 16)
		}
	}
	cw := w / 2
	for y := 0; y < h/2; y++ {
		r0 := img.Pix[2*y*img.Stride:]
		r1 := img.Pix[(2*y+1)*img.Stride:]
		for x := 0; x < cw; x++ {
			i := 8 * x
			r := (int(r0[i]) + int(r0[i+4]) + int(r1[i]) + int(r1[i+4]) + 2) / 4
			g := (int(r0[i+1]) + int(r0[i+5]) + int(r1[i+1]) + int(r1[i+5]) + 2) / 4
			b := (int(r0[i+2]) + int(r0[i+6]) + int(r1[i+2]) + int(r1[i+6]) + 2) / 4
			f.Cb[y*cw+x] = uint8((-38*r-74*g+112*b+128)>>8 + 128)
			f.Cr[y*cw+x] = uint8((112*r-94*g-18*b+128)>>8 + 128)
		}
	}
}

// lengthPrefixed turns one NAL unit into an MP4 sample (a 4-byte big-endian
// length, then the NAL unit).
func lengthPrefixed(nal []byte) []byte {
	s := make([]byte, 4+len(nal))
	binary.BigEndian.PutUint32(s, uint32(len(nal)))
	copy(s[4:], nal)
	return s
}

// muxMP4 writes a progressive MP4 (ftyp, moov, mdat) with one avc1 track
// holding samples, one per frame at videoFPS, all in a single chunk. sync
// lists the 1-based numbers of the IDR samples.
func muxMP4(sps, pps []byte, samples [][]byte, sync []uint32) ([]byte, error) {
	n := uint32(len(samples))
	ftyp := mp4.NewFtyp("isom", 0x200, []string{"isom", "iso2", "avc1", "mp41"})

	moov := mp4.NewMoovBox()
	mvhd := mp4.CreateMvhd()
	mvhd.Timescale = movieTimescale
	mvhd.Duration = uint64(n) * movieTimescale / videoFPS
	moov.AddChild(mvhd)

	trak := mp4.CreateEmptyTrak(1, videoTimescale, "video", "und")
	moov.AddChild(trak)
	if err := trak.SetAVCDescriptor("avc1", [][]byte{sps}, [][]byte{pps}, true); err != nil {
		return nil, fmt.Errorf("sandbox: avc1 descriptor: %w", err)
	}
	trak.Tkhd.Duration = mvhd.Duration
	trak.Mdia.Mdhd.Duration = uint64(n) * (videoTimescale / videoFPS)

	stbl := trak.Mdia.Minf.Stbl
	stbl.Stts.SampleCount = []uint32{n}
	stbl.Stts.SampleTimeDelta = []uint32{videoTimescale / videoFPS}
	if err := stbl.Stsc.AddEntry(1, n, 1); err != nil {
		return nil, fmt.Errorf("sandbox: stsc: %w", err)
	}
	stbl.Stsz.SampleNumber = n
	total := 0
	for _, s := range samples {
		stbl.Stsz.SampleSize = append(stbl.Stsz.SampleSize, uint32(len(s)))
		total += len(s)
	}
	stbl.AddChild(&mp4.StssBox{SampleNumber: sync})
	stbl.Stco.ChunkOffset = []uint32{0}

	// The single chunk starts right after the mdat header, which follows
	// ftyp and moov; the offset's value does not change moov's size.
	const mdatHeader = 8
	offset := ftyp.Size() + moov.Size() + mdatHeader
	if offset+uint64(total) > math.MaxUint32 {
		return nil, fmt.Errorf("sandbox: video too large (%d bytes)", total)
	}
	stbl.Stco.ChunkOffset[0] = uint32(offset)

	payload := make([]byte, 0, total)
	for _, s := range samples {
		payload = append(payload, s...)
	}
	mdat := &mp4.MdatBox{Data: payload}

	var buf bytes.Buffer
	buf.Grow(int(offset) + total)
	for _, b := range []mp4.Box{ftyp, moov, mdat} {
		if err := b.Encode(&buf); err != nil {
			return nil, fmt.Errorf("sandbox: write %s: %w", b.Type(), err)
		}
	}
	if uint64(buf.Len()) != offset+uint64(total) {
		return nil, fmt.Errorf("sandbox: mp4 is %d bytes, want %d", buf.Len(), offset+uint64(total))
	}
	return buf.Bytes(), nil
}
