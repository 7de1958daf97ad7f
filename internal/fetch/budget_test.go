package fetch

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gengate/gengate"
)

// pngChunk appends a PNG chunk to b.
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	chunk := append([]byte(typ), data...)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// pngBomb returns a whole, valid PNG of w x h black pixels of the colour
// type and bit depth given (2 = RGB, 6 = RGBA, 0 = gray), small because
// its rows of zeros compress a thousandfold.
func pngBomb(t testing.TB, w, h int, colorType, depth byte, interlaced bool) []byte {
	t.Helper()
	channels := map[byte]int{0: 1, 2: 3, 4: 2, 6: 4}[colorType]
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:4], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:8], uint32(h))
	ihdr[8], ihdr[9] = depth, colorType
	if interlaced {
		ihdr[12] = 1
	}
	b := []byte("\x89PNG\r\n\x1a\n")
	b = pngChunk(b, "IHDR", ihdr[:])
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	row := make([]byte, 1+w*channels*int(depth)/8) // filter byte 0, then zeros
	rows := h
	if interlaced {
		rows = 2 * h // more than the passes need: the rest is ignored
	}
	for range rows {
		_, _ = zw.Write(row)
	}
	_ = zw.Close()
	b = pngChunk(b, "IDAT", z.Bytes())
	return pngChunk(b, "IEND", nil)
}

// progressiveJPEGBomb returns a progressive JPEG of w x h with three
// full-resolution components whose only scan codes every DC coefficient
// as 0 in one bit: about w*h*3/64 bits (287 KB at 7000x7000), while the
// decoder keeps 64 int32 coefficients per block of every component.
func progressiveJPEGBomb(w, h int) []byte {
	b := []byte{0xff, 0xd8}
	seg := func(marker byte, data []byte) {
		b = append(b, 0xff, marker)
		b = binary.BigEndian.AppendUint16(b, uint16(len(data)+2))
		b = append(b, data...)
	}
	dqt := make([]byte, 65) // table 0, 8-bit, all ones
	for i := 1; i < 65; i++ {
		dqt[i] = 1
	}
	seg(0xdb, dqt)
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3}
	for c := byte(1); c <= 3; c++ {
		sof = append(sof, c, 0x11, 0) // 1x1 sampling: 4:4:4
	}
	seg(0xc2, sof)
	dht := make([]byte, 1+16+1) // DC table 0: one code of length 1, symbol 0
	dht[1] = 1
	seg(0xc4, dht)
	seg(0xda, []byte{3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0, 0}) // DC first scan
	blocks := ((w + 7) / 8) * ((h + 7) / 8) * 3
	b = append(b, make([]byte, (blocks+7)/8)...)
	return append(b, 0xff, 0xd9)
}

// bitWriter writes bits least significant first, as VP8L wants.
type bitWriter struct {
	b     []byte
	acc   uint64
	nbits uint
}

func (w *bitWriter) write(v uint64, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

func (w *bitWriter) bytes() []byte {
	if w.nbits > 0 {
		w.b = append(w.b, byte(w.acc))
	}
	return w.b
}

// losslessWebPBomb returns a lossless (VP8L) WebP of w x h opaque black
// pixels in a few dozen bytes: its five prefix codes each have a single
// symbol, so every pixel takes no bits at all.
func losslessWebPBomb(w, h int) []byte {
	var bw bitWriter
	bw.write(0x2f, 8)
	bw.write(uint64(w-1), 14)
	bw.write(uint64(h-1), 14)
	bw.write(0, 1)                                  // alpha not used
	bw.write(0, 3)                                  // version
	bw.write(0, 1)                                  // no transform
	bw.write(0, 1)                                  // no colour cache
	bw.write(0, 1)                                  // no meta prefix codes
	for i, sym := range []uint64{0, 0, 0, 255, 0} { // green, red, blue, alpha, distance
		bw.write(1, 1) // simple code
		bw.write(0, 1) // one symbol
		if sym < 2 && i != 3 {
			bw.write(0, 1) // a 1-bit symbol
			bw.write(sym, 1)
		} else {
			bw.write(1, 1) // an 8-bit symbol
			bw.write(sym, 8)
		}
	}
	data := append(bw.bytes(), make([]byte, 64)...)
	if len(data)%2 == 1 {
		data = append(data, 0)
	}
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+8+len(data)))
	b = append(b, "WEBPVP8L"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// gifBytesPaletted returns a GIF of w x h of one colour.
func gifBomb(t testing.TB, w, h int) []byte {
	t.Helper()
	m := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, m, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// heapPeak runs f and returns how far the heap in use rose above where it
// started while f ran, sampled every 2 ms. Not for parallel tests.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, peak := m.HeapInuse, m.HeapInuse
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak - base
}

// TestDecompressionBombs: small files that decode to hundreds of MB are
// refused from their headers with INPUT_DECODE_TOO_LARGE, before any
// pixel is decoded, while the test process's heap stays under 64 MB of
// growth (a header read costs kilobytes; each of these decodes to 196 MB
// or more, the JPEG to 735 MB). The GIF, at one byte per pixel, cannot
// exceed the default budget within the pixel limit, so it is checked
// against a budget lowered below its 16 MB.
func TestDecompressionBombs(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		budget int64
	}{
		{"progressive JPEG 7000x7000", progressiveJPEGBomb(7000, 7000), 0},
		{"16-bit RGB PNG 7000x7000", pngBomb(t, 7000, 7000, 2, 16, false), 0},
		{"lossless WebP 7000x7000", losslessWebPBomb(7000, 7000), 0},
		{"GIF 4000x4000 over a 8 MB budget", gifBomb(t, 4000, 4000), 8 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) > 400<<10 {
				t.Fatalf("the bomb is %d bytes; it should be small", len(tc.data))
			}
			f := New(Config{MaxInputMemory: tc.budget})
			var err error
			peak := heapPeak(func() { _, err = f.Check(tc.data, gengate.KindImage) })
			t.Logf("%d bytes; heap +%d MB", len(tc.data), peak>>20)
			wantCode(t, err, gengate.InputDecodeTooLarge)
			if peak > 64<<20 {
				t.Errorf("heap grew by %d MB checking the header, want under 64 MB", peak>>20)
			}
			// Nothing of the decode memory is left taken.
			if !f.sem.TryAcquire(f.cfg.MaxDecodeMemory) {
				t.Error("the decode memory was not given back")
			}
		})
	}
}

// TestDecodeCost: the estimates the budget is checked against, from
// headers alone.
func TestDecodeCost(t *testing.T) {
	const px = 7000 * 7000
	cases := []struct {
		name string
		data []byte
		want int64
	}{
		{"8-bit RGBA PNG", pngHeaderOnly(7000, 7000), px * 4},
		{"16-bit RGB PNG", pngBomb(t, 700, 700, 2, 16, false), 700 * 700 * 8},
		{"16-bit gray PNG", pngBomb(t, 700, 700, 0, 16, false), 700 * 700 * 2},
		{"8-bit gray PNG", pngBomb(t, 700, 700, 0, 8, false), 700 * 700},
		{"interlaced 8-bit RGB PNG", pngBomb(t, 700, 700, 2, 8, true), 700 * 700 * 4 * 2},
		{"progressive JPEG 4:4:4", progressiveJPEGBomb(7000, 7000), 7000 * 7000 * 3 * 5},
		{"baseline JPEG 4:2:0", jpegBytes(t, 64, 48), 64*48 + 2*32*24},
		{"lossless WebP", losslessWebPBomb(7000, 7000), px * 8},
		{"GIF", gifBomb(t, 300, 200), 300 * 200},
	}
	for _, tc := range cases {
		f, ok := sniffImage(tc.data)
		if !ok {
			t.Fatalf("%s: not sniffed as an image", tc.name)
		}
		cfg, err := f.decodeConfig(bytes.NewReader(tc.data))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := decodeCost(tc.data, f, cfg); got != tc.want {
			t.Errorf("%s: decodeCost = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSmallImagesStillPass: images within the budget are checked and
// accepted as before, each format.
func TestSmallImagesStillPass(t *testing.T) {
	f := New(Config{})
	for name, data := range map[string][]byte{
		"png": pngBytes(t, 40, 30), "jpeg": jpegBytes(t, 40, 30), "gif": gifBytes(t, 40, 30),
		"webp": webpBytes(t, 40, 30, false), "webp lossless": webpBytes(t, 40, 30, true),
		"16-bit png 700x700":       pngBomb(t, 700, 700, 2, 16, false),
		"lossless webp 500x500":    losslessWebPBomb(500, 500),
		"progressive jpeg 500x500": progressiveJPEGBomb(500, 500),
	} {
		in, err := f.Check(data, gengate.KindImage)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if in.Width == 0 {
			t.Errorf("%s: no size", name)
		}
	}
}
