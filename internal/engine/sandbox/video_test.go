package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/Eyevinn/mp4ff/avc"
	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/gengate/gengate"
)

func videoJob(aspect string, duration any) gengate.Job { return videoJobAt(aspect, "", duration) }

// videoJobAt is videoJob with a resolution class ("" for none).
func videoJobAt(aspect, class string, duration any) gengate.Job {
	job := gengate.Job{
		TaskID:      "task_v",
		ModelID:     "wan-2-5-t2v",
		Type:        "video",
		Prompt:      "a paper boat drifting down a rainy street",
		AspectRatio: aspect,
		NumOutputs:  1,
		Options:     map[string]any{},
	}
	if duration != nil {
		job.Options["duration"] = duration
	}
	if class != "" {
		job.Options["resolution"] = class
	}
	return job
}

// mp4Sample returns the bytes of 1-based sample nr of the file's only track.
func mp4Sample(tb testing.TB, data []byte, trak *mp4.TrakBox, nr uint32) []byte {
	tb.Helper()
	ranges, err := trak.GetRangesForSampleInterval(nr, nr)
	if err != nil || len(ranges) != 1 {
		tb.Fatalf("sample %d ranges = %v, %v", nr, ranges, err)
	}
	r := ranges[0]
	if r.Offset+r.Size > uint64(len(data)) {
		tb.Fatalf("sample %d at %d+%d is outside the %d-byte file", nr, r.Offset, r.Size, len(data))
	}
	return data[r.Offset : r.Offset+r.Size]
}

func TestVideo(t *testing.T) {
	tests := []struct {
		name     string
		aspect   string
		class    string
		duration any
		w, h     int
		frames   int
	}{
		{"16:9 default duration", "16:9", "", nil, 256, 144, 24},
		{"9:16 int", "9:16", "", int64(3), 144, 256, 36},
		{"1:1 float", "1:1", "", 1.5, 144, 144, 18},
		{"4:3 string", "4:3", "", "10", 192, 144, 120},
		{"no aspect, seconds string", "", "", "1s", 256, 144, 12},
		{"21:9 zero duration", "21:9", "", int64(0), 336, 144, 24},
		{"16:9 1080p, cropped to 216 rows", "16:9", "1080p", int64(2), 384, 216, 24},
		{"9:16 480p", "9:16", "480p", int64(2), 96, 170, 24},
		{"4:3 768p", "4:3", "768p", int64(1), 206, 154, 12},
		{"3:4 360p", "3:4", "360p", int64(1), 72, 96, 12},
		{"capped at videoMaxSeconds", "16:9", "", int64(100), 256, 144, videoMaxSeconds * videoFPS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := videoJobAt(tt.aspect, tt.class, tt.duration)
			outs := submit(t, job)
			if len(outs) != 1 {
				t.Fatalf("got %d outputs, want 1", len(outs))
			}
			out := outs[0]
			if out.ContentType != "video/mp4" || out.Ext != "mp4" {
				t.Errorf("ContentType, Ext = %q, %q", out.ContentType, out.Ext)
			}
			checkMP4(t, out.Data, tt.w, tt.h, tt.frames)
			checkWithFFmpeg(t, job, out.Data)
		})
	}
}

// checkMP4 parses data with mp4ff and checks it is a progressive MP4 with
// one avc1 track of w×h and frames samples, whose parameter sets are in
// avcC and whose slices parse.
func checkMP4(t *testing.T, data []byte, w, h, frames int) {
	t.Helper()
	f, err := mp4.DecodeFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("mp4.DecodeFile: %v", err)
	}
	if f.IsFragmented() || f.Moov == nil || f.Mdat == nil {
		t.Fatalf("want a progressive ftyp+moov+mdat file")
	}
	if len(f.Moov.Traks) != 1 {
		t.Fatalf("%d tracks, want 1", len(f.Moov.Traks))
	}
	trak := f.Moov.Traks[0]
	stbl := trak.Mdia.Minf.Stbl
	avcx := stbl.Stsd.AvcX
	if avcx == nil || avcx.Type() != "avc1" || avcx.AvcC == nil {
		t.Fatalf("no avc1 sample entry with avcC")
	}
	if int(avcx.Width) != w || int(avcx.Height) != h {
		t.Errorf("avc1 size = %dx%d, want %dx%d", avcx.Width, avcx.Height, w, h)
	}
	if got := trak.GetNrSamples(); int(got) != frames {
		t.Errorf("%d samples, want %d", got, frames)
	}
	wantDur := uint64(frames) * movieTimescale / videoFPS
	if f.Moov.Mvhd.Duration != wantDur || trak.Tkhd.Duration != wantDur {
		t.Errorf("durations mvhd %d tkhd %d, want %d ms", f.Moov.Mvhd.Duration, trak.Tkhd.Duration, wantDur)
	}

	rec := avcx.AvcC.DecConfRec
	if len(rec.SPSnalus) != 1 || len(rec.PPSnalus) != 1 {
		t.Fatalf("avcC has %d SPS and %d PPS, want 1 each", len(rec.SPSnalus), len(rec.PPSnalus))
	}
	if avc.GetNaluType(rec.SPSnalus[0][0]) != avc.NALU_SPS || avc.GetNaluType(rec.PPSnalus[0][0]) != avc.NALU_PPS {
		t.Fatalf("avcC parameter sets have NAL types %d, %d; want 7, 8",
			avc.GetNaluType(rec.SPSnalus[0][0]), avc.GetNaluType(rec.PPSnalus[0][0]))
	}
	sps, err := avc.ParseSPSNALUnit(rec.SPSnalus[0], true)
	if err != nil {
		t.Fatalf("SPS: %v", err)
	}
	if sps.Profile != 66 || sps.ProfileCompatibility&0xc0 != 0xc0 || int(sps.Width) != w || int(sps.Height) != h {
		t.Errorf("SPS profile %d constraints %#x size %dx%d, want Constrained Baseline %dx%d",
			sps.Profile, sps.ProfileCompatibility, sps.Width, sps.Height, w, h)
	}
	pps, err := avc.ParsePPSNALUnit(rec.PPSnalus[0], map[uint32]*avc.SPS{sps.ParameterID: sps})
	if err != nil {
		t.Fatalf("PPS: %v", err)
	}
	spsMap := map[uint32]*avc.SPS{sps.ParameterID: sps}
	ppsMap := map[uint32]*avc.PPS{pps.PicParameterSetID: pps}

	for nr := uint32(1); nr <= trak.GetNrSamples(); nr++ {
		sample := mp4Sample(t, data, trak, nr)
		nalus, err := avc.GetNalusFromSample(sample)
		if err != nil || len(nalus) != 1 {
			t.Fatalf("sample %d: %d NAL units, %v; want 1", nr, len(nalus), err)
		}
		wantIDR := (nr-1)%videoGOP == 0
		typ := avc.GetNaluType(nalus[0][0])
		if wantIDR && typ != avc.NALU_IDR || !wantIDR && typ != avc.NALU_NON_IDR {
			t.Fatalf("sample %d: NAL type %d, want IDR %v", nr, typ, wantIDR)
		}
		if sync := stbl.Stss.IsSyncSample(nr); sync != wantIDR {
			t.Errorf("sample %d: stss sync = %v, want %v", nr, sync, wantIDR)
		}
		sh, err := avc.ParseSliceHeader(nalus[0], spsMap, ppsMap)
		if err != nil {
			t.Fatalf("sample %d: slice header: %v", nr, err)
		}
		wantType := avc.SLICE_P
		if wantIDR {
			wantType = avc.SLICE_I
		}
		if sh.SliceType%5 != wantType || sh.FrameNum != (nr-1)%videoGOP%maxFrameNum {
			t.Errorf("sample %d: slice type %v frame_num %d", nr, sh.SliceType, sh.FrameNum)
		}
	}
}

// checkWithFFmpeg decodes data with ffmpeg, when it is installed, and
// requires a clean decode whose YUV is exactly the frames the clip drew.
func checkWithFFmpeg(t *testing.T, job gengate.Job, data []byte) {
	t.Helper()
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Log("ffprobe not on PATH; skipping the ffmpeg decode check")
		return
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Log("ffmpeg not on PATH; skipping the ffmpeg decode check")
		return
	}
	path := filepath.Join(t.TempDir(), "clip.mp4")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ffmpeg, "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("ffmpeg decode: %v\n%s", err, out)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(ffmpeg, "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg rawvideo: %v\n%s", err, stderr.String())
	}

	c, err := newClip(job)
	if err != nil {
		t.Fatal(err)
	}
	frame := newH264Encoder(c.w, c.h, videoFPS, videoGOP).newFrame()
	var want []byte
	for i := 0; i < c.n; i++ {
		c.frame(i, frame)
		want = append(want, frame.crop(c.w, c.h)...)
	}
	if !bytes.Equal(got, want) {
		size := c.w * c.h * 3 / 2
		first := 0
		for first < min(len(got), len(want)) && got[first] == want[first] {
			first++
		}
		t.Fatalf("ffmpeg decoded %d bytes (%d frames), want %d (%d frames); first difference in frame %d",
			len(got), len(got)/size, len(want), c.n, first/size)
	}
}

func TestVideoInputPicture(t *testing.T) {
	job := videoJob("", nil)
	job.ModelID = "wan-2-5-i2v"
	job.Inputs = map[string]gengate.Input{"imageUrl": pngInput(t, 90, 160, color.RGBA{0, 200, 0, 255})}
	out := submit(t, job)[0]
	checkMP4(t, out.Data, 144, 256, 24)
}

func TestVideoSize(t *testing.T) {
	// A 2 s 16:9 clip should stay small: one I_PCM picture (~56 KB) plus
	// P pictures that skip all but a few macroblocks.
	out := submit(t, videoJob("16:9", nil))[0]
	if len(out.Data) > 200<<10 {
		t.Errorf("2 s 16:9 clip is %d bytes, want under 200 KiB", len(out.Data))
	}
	t.Logf("2 s 16:9 clip: %d bytes", len(out.Data))
	// The first sample is length-prefixed.
	f, err := mp4.DecodeFile(bytes.NewReader(out.Data))
	if err != nil {
		t.Fatal(err)
	}
	s := mp4Sample(t, out.Data, f.Moov.Traks[0], 1)
	if n := binary.BigEndian.Uint32(s); int(n) != len(s)-4 {
		t.Errorf("first sample length prefix %d, sample %d bytes", n, len(s))
	}
}

func BenchmarkVideo(b *testing.B) {
	for _, c := range []struct {
		name, aspect, class string
		secs                int64
	}{
		{"2s-720p", "16:9", "", 2},
		{"15s-1080p", "16:9", "1080p", 15},
		{"8s-4k", "16:9", "4k", 8},
	} {
		b.Run(c.name, func(b *testing.B) {
			job := videoJobAt(c.aspect, c.class, c.secs)
			e := New(0)
			var size int
			for b.Loop() {
				p, err := e.Submit(context.Background(), job)
				if err != nil {
					b.Fatal(err)
				}
				size = len(p.Outputs[0].Data)
			}
			b.ReportMetric(float64(size), "bytes/file")
		})
	}
}
