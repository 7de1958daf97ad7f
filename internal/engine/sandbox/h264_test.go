package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/Eyevinn/mp4ff/avc"
)

// bitString renders the bits written so far as "0" and "1" characters.
func bitString(w *bitWriter) string {
	var b strings.Builder
	for _, x := range w.buf {
		fmt.Fprintf(&b, "%08b", x)
	}
	for i := int(w.n) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "%d", w.cur>>uint(i)&1)
	}
	return b.String()
}

func TestExpGolomb(t *testing.T) {
	tests := []struct {
		write func(*bitWriter)
		want  string
	}{
		{func(w *bitWriter) { w.ue(0) }, "1"},
		{func(w *bitWriter) { w.ue(1) }, "010"},
		{func(w *bitWriter) { w.ue(2) }, "011"},
		{func(w *bitWriter) { w.ue(3) }, "00100"},
		{func(w *bitWriter) { w.ue(30) }, "000011111"},
		{func(w *bitWriter) { w.se(0) }, "1"},
		{func(w *bitWriter) { w.se(1) }, "010"},
		{func(w *bitWriter) { w.se(-1) }, "011"},
		{func(w *bitWriter) { w.se(2) }, "00100"},
		{func(w *bitWriter) { w.se(-2) }, "00101"},
		{func(w *bitWriter) { w.u(3, 5); w.alignZero() }, "10100000"},
		{func(w *bitWriter) { w.u(1, 0); w.trailing() }, "01000000"},
		{func(w *bitWriter) { w.u(8, 0xff); w.trailing() }, "1111111110000000"},
	}
	for i, tt := range tests {
		var w bitWriter
		tt.write(&w)
		if got := bitString(&w); got != tt.want {
			t.Errorf("case %d: bits %s, want %s", i, got, tt.want)
		}
	}
}

func TestNALUnitEmulationPrevention(t *testing.T) {
	tests := []struct {
		rbsp, want []byte
	}{
		{[]byte{1, 2, 3}, []byte{1, 2, 3}},
		{[]byte{0, 0, 0, 0x80}, []byte{0, 0, 3, 0, 0x80}},
		{[]byte{0, 0, 1}, []byte{0, 0, 3, 1}},
		{[]byte{0, 0, 2}, []byte{0, 0, 3, 2}},
		{[]byte{0, 0, 3}, []byte{0, 0, 3, 3}},
		{[]byte{0, 0, 4}, []byte{0, 0, 4}},
		{[]byte{0, 0, 0, 0, 0x80}, []byte{0, 0, 3, 0, 0, 0x80}},
		{[]byte{0, 0, 0, 0, 0, 0x80}, []byte{0, 0, 3, 0, 0, 3, 0, 0x80}},
		{[]byte{0, 1, 0, 0, 1}, []byte{0, 1, 0, 0, 3, 1}},
	}
	for _, tt := range tests {
		got := nalUnit(3, nalSPS, tt.rbsp)
		want := append([]byte{0x67}, tt.want...)
		if !bytes.Equal(got, want) {
			t.Errorf("nalUnit(%x) = %x, want %x", tt.rbsp, got, want)
		}
	}
}

func TestEncoderSkipsUnchangedMacroblocks(t *testing.T) {
	const w, h = 64, 32 // 4×2 macroblocks
	enc := newH264Encoder(w, h, 12, 3)
	f := newYUVFrame(w, h)
	for i := range f.Y {
		f.Y[i] = byte(16 + i%200)
	}
	for i := range f.Cb {
		f.Cb[i], f.Cr[i] = 128, byte(60+i%100)
	}
	sps, err := avc.ParseSPSNALUnit(enc.SPS(), true)
	if err != nil {
		t.Fatal(err)
	}
	if sps.Width != w || sps.Height != h || sps.Level != h264Level {
		t.Fatalf("SPS %dx%d level %d", sps.Width, sps.Height, sps.Level)
	}
	spsMap := map[uint32]*avc.SPS{0: sps}
	pps, err := avc.ParsePPSNALUnit(enc.PPS(), spsMap)
	if err != nil {
		t.Fatal(err)
	}
	ppsMap := map[uint32]*avc.PPS{0: pps}

	mbBits := pcmBytesPerMB + 2 // PCM samples plus mb_type, skip run, alignment
	steps := []struct {
		change   func()
		idr      bool
		maxBytes int // upper bound on the NAL size
		minBytes int
	}{
		{nil, true, 8*mbBits + 16, 8 * pcmBytesPerMB},                               // all I_PCM
		{nil, false, 8, 1},                                                          // identical: all skipped
		{func() { f.Y[w*20+40]++ }, false, mbBits + 16, pcmBytesPerMB},              // one luma sample in MB (2,1)
		{func() { f.Cr[0]++ }, true, 8*mbBits + 16, 8 * pcmBytesPerMB},              // third frame: IDR again
		{func() { f.Cb[(h/2-1)*(w/2)+w/2-1]++ }, false, mbBits + 16, pcmBytesPerMB}, // last MB's chroma
	}
	for i, s := range steps {
		if s.change != nil {
			s.change()
		}
		nal, idr := enc.Encode(f)
		if idr != s.idr {
			t.Fatalf("frame %d: idr = %v, want %v", i, idr, s.idr)
		}
		if len(nal) > s.maxBytes || len(nal) < s.minBytes {
			t.Errorf("frame %d: NAL is %d bytes, want %d..%d", i, len(nal), s.minBytes, s.maxBytes)
		}
		sh, err := avc.ParseSliceHeader(nal, spsMap, ppsMap)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if sh.DisableDeblockingFilterIDC != 1 {
			t.Errorf("frame %d: deblocking idc %d, want 1", i, sh.DisableDeblockingFilterIDC)
		}
	}
}
