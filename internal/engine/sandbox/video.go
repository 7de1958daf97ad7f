package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/gengate/gengate"
)

const (
	videoFPS = 12
	// videoDefaultSeconds is the clip length when the job has no duration.
	videoDefaultSeconds = 2
	// videoMaxSeconds caps the clip. The catalog's longest video is 15 s;
	// the cap only guards the engine against a job nobody validated.
	videoMaxSeconds = 60
	// videoGOP is the distance between IDR pictures: one every 5 seconds.
	// I_PCM pictures are large and P pictures skip nearly everything, so a
	// long GOP keeps a 15 s clip small.
	videoGOP       = 5 * videoFPS
	videoTimescale = videoFPS * 1000
	movieTimescale = 1000
	// videoScaleDown divides a resolution class's short side: 720p gives
	// 144 pixels (256×144 at 16:9), 1080p 216, 4k 432. The placeholder keeps
	// the shape and the proportions of what was asked, at a fifth of the
	// size, so the file stays small.
	videoScaleDown = 5
	// videoDefaultClass is the resolution class of models without a
	// resolution option (their providers make 720p).
	videoDefaultClass = 720
	videoMaxLong      = 1024 // long side cap for extreme aspect ratios
)

// resolutionClass reads a video resolution class ("480p", "720p", "1080p",
// "4k") as the short side in pixels; "" is videoDefaultClass.
func resolutionClass(class string) (int, error) {
	c := strings.ToLower(strings.TrimSpace(class))
	switch {
	case c == "":
		return videoDefaultClass, nil
	case c == "4k":
		return 2160, nil
	case strings.HasSuffix(c, "p"):
		if n, err := strconv.Atoi(strings.TrimSuffix(c, "p")); err == nil && n >= 144 && n <= 4320 {
			return n, nil
		}
	}
	return 0, gengate.Errorf(gengate.EFailed, "sandbox: unsupported resolution %q", class)
}

// videoSize picks the frame size for an aspect ratio and a resolution
// class: the class's short side ÷ videoScaleDown, then the long side from
// the ratio, both rounded to even (4:2:0 chroma), the long side at most
// videoMaxLong.
// Without an aspect ratio the input picture's shape is used when there is
// one, else 16:9.
func videoSize(aspect, class string, inW, inH int) (w, h int, err error) {
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
	short, err := resolutionClass(class)
	if err != nil {
		return 0, 0, err
	}
	even := func(v float64) int { return min(max(2*int(math.Round(v/2)), 2), videoMaxLong) }
	s := even(float64(short) / videoScaleDown)
	if aw >= ah {
		return even(float64(s) * aw / ah), s, nil
	}
	return s, even(float64(s) * ah / aw), nil
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
	still       *image.RGBA // base with the text: what every frame shares
	stillYUV    *yuvFrame   // still converted, at the coded size
	rgba        *image.RGBA // scratch frame
}

// newClip plans the video of job.
func newClip(job gengate.Job) (*clip, error) {
	in, inW, inH, _ := inputPicture(job)
	class, _ := job.Options["resolution"].(string)
	w, h, err := videoSize(job.AspectRatio, class, inW, inH)
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

	// The title is drawn at twice the text's scale, and the scale shrinks
	// until "SANDBOX" fits the frame's width; the other lines wrap.
	scale := max(textScale(w), 1)
	for scale > 1 && (len("SANDBOX")*glyphW+2*textPad)*2*scale > w {
		scale--
	}
	titleScale := 2 * scale
	if (len("SANDBOX")*glyphW+2*textPad)*titleScale > w {
		titleScale = 1
	}
	cols := max((w/scale-2*textPad)/glyphW, 1)
	c.title = textBlock{lines: []string{"SANDBOX"}, scale: titleScale, fg: color.RGBA{255, 214, 0, 255}, bg: color.RGBA{0, 0, 0, 200}}
	lines := append(wrap("NOT AI OUTPUT", cols, 0), wrap(job.ModelID, cols, 2)...)
	c.info = textBlock{lines: lines, scale: scale, fg: color.RGBA{255, 255, 255, 255}, bg: color.RGBA{0, 0, 0, 160}}
	tw, th := c.title.size()
	iw, ih := c.info.size()
	if th+ih > h-8 && titleScale > scale {
		// A short frame: the title at the text's own scale leaves the
		// progress line along the bottom visible.
		c.title.scale = scale
		tw, th = c.title.size()
	}
	top := max((h-th-ih)/2, 0)
	c.titleAt = image.Pt((w-tw)/2, top)
	c.infoAt = image.Pt((w-iw)/2, top+th)

	c.still = image.NewRGBA(c.base.Rect)
	copy(c.still.Pix, c.base.Pix)
	c.title.draw(c.still, c.titleAt)
	c.info.draw(c.still, c.infoAt)
	c.stillYUV = newYUVFrame(codedSide(w), codedSide(h))
	rgbToYUV(c.still, c.stillYUV)
	copy(c.rgba.Pix, c.still.Pix)
	return c, nil
}

// frame draws frame i (0-based) into dst, a frame of the coded size.
func (c *clip) frame(i int, dst *yuvFrame) {
	copy(dst.Y, c.stillYUV.Y)
	copy(dst.Cb, c.stillYUV.Cb)
	copy(dst.Cr, c.stillYUV.Cr)
	// A bar slides along the top once every two seconds, and a thin line
	// along the bottom shows how far the clip has got. Both stay inside one
	// row of macroblocks each, so P pictures skip nearly everything else,
	// and only their rows are drawn and converted again.
	top, bottom := image.Rect(0, 0, c.w, mbSize), image.Rect(0, c.h-4, c.w, c.h)
	for _, strip := range []image.Rectangle{top, bottom} {
		lo, hi := c.still.PixOffset(0, strip.Min.Y), c.still.PixOffset(0, strip.Max.Y)
		copy(c.rgba.Pix[lo:hi], c.still.Pix[lo:hi])
	}
	x0 := i*(c.w+c.barW)/(2*videoFPS)%(c.w+c.barW) - c.barW
	fillRect(c.rgba, image.Rect(x0, 0, x0+c.barW, mbSize), c.accent)
	fillRect(c.rgba, image.Rect(0, c.h-4, (i+1)*c.w/c.n, c.h), color.RGBA{255, 255, 255, 255})
	rgbToYUVRows(c.rgba, dst, top.Min.Y, top.Max.Y)
	rgbToYUVRows(c.rgba, dst, bottom.Min.Y, bottom.Max.Y)
}

// renderVideo makes the job's MP4. Video is always MP4, whatever the job's
// OutputFormat says, and always a single output.
func renderVideo(ctx context.Context, job gengate.Job) (gengate.Output, error) {
	c, err := newClip(job)
	if err != nil {
		return gengate.Output{}, err
	}
	enc := newH264Encoder(c.w, c.h, videoFPS, videoGOP)
	yuv := enc.newFrame()
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
// from the average of each 2×2 block. img's sides must be even and at most
// f's; the rest of f (the padding to whole macroblocks) is left as it is.
func rgbToYUV(img *image.RGBA, f *yuvFrame) { rgbToYUVRows(img, f, 0, img.Rect.Dy()) }

// rgbToYUVRows is rgbToYUV for rows y0 to y1 (exclusive) of img, both even.
func rgbToYUVRows(img *image.RGBA, f *yuvFrame, y0, y1 int) {
	w := img.Rect.Dx()
	for y := y0; y < y1; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			r, g, b := int(row[4*x]), int(row[4*x+1]), int(row[4*x+2])
			f.Y[y*f.W+x] = uint8((66*r+129*g+25*b+128)>>8 + 16)
		}
	}
	cw := f.W / 2
	for y := y0 / 2; y < y1/2; y++ {
		r0 := img.Pix[2*y*img.Stride:]
		r1 := img.Pix[(2*y+1)*img.Stride:]
		for x := 0; x < w/2; x++ {
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
// lists the 1-based numbers of the IDR samples. The movie, track and media
// durations are all n ÷ videoFPS seconds, exactly (both timescales are
// multiples of videoFPS).
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
