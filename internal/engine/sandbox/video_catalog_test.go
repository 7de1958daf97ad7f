package sandbox

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/gengate/gengate"
)

// videoModelJob is the job the service would hand the sandbox for model m
// with every option at its default and then the given options set.
func videoModelJob(m *gengate.Model, set map[string]any) gengate.Job {
	job := gengate.Job{TaskID: "task_cat", ModelID: m.ID, Type: m.Type, Prompt: "a kite over a beach", NumOutputs: 1, Options: map[string]any{}}
	for _, f := range m.Options {
		if f.Default != nil {
			job.Options[f.Name] = f.Default
		}
	}
	for k, v := range set {
		job.Options[k] = v
	}
	job.AspectRatio, _ = job.Options["aspectRatio"].(string)
	return job
}

// allowedInts lists the values an int option allows: its values, or every
// whole number from its minimum to its maximum.
func allowedInts(t *testing.T, f gengate.Field) []int64 {
	t.Helper()
	var out []int64
	for _, v := range f.Values {
		n, ok := v.(float64) // catalog.json numbers decode as float64
		if !ok {
			if i, isInt := v.(int64); isInt {
				n, ok = float64(i), true
			}
		}
		if !ok {
			t.Fatalf("%s value %v (%T) is not a number", f.Name, v, v)
		}
		out = append(out, int64(n))
	}
	if len(out) == 0 && f.Min != nil && f.Max != nil {
		for n := int64(*f.Min); n <= int64(*f.Max); n++ {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		t.Fatalf("option %s has neither values nor a range", f.Name)
	}
	return out
}

// mp4Timing reads a file's durations from its own boxes: mvhd, tkhd (in the
// movie timescale), mdhd and the sum of the stts sample durations (in the
// media timescale), each converted to seconds.
type mp4Timing struct {
	mvhd, tkhd, mdhd, stts float64
	w, h                   int // the avc1 sample entry's size
}

func readMP4Timing(t *testing.T, data []byte) mp4Timing {
	t.Helper()
	f, err := mp4.DecodeFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("mp4.DecodeFile: %v", err)
	}
	if f.Moov == nil || len(f.Moov.Traks) != 1 {
		t.Fatalf("want one track")
	}
	trak := f.Moov.Traks[0]
	mvhd, mdhd := f.Moov.Mvhd, trak.Mdia.Mdhd
	var ticks uint64
	stts := trak.Mdia.Minf.Stbl.Stts
	for i, n := range stts.SampleCount {
		ticks += uint64(n) * uint64(stts.SampleTimeDelta[i])
	}
	avcx := trak.Mdia.Minf.Stbl.Stsd.AvcX
	return mp4Timing{
		mvhd: float64(mvhd.Duration) / float64(mvhd.Timescale),
		tkhd: float64(trak.Tkhd.Duration) / float64(mvhd.Timescale),
		mdhd: float64(mdhd.Duration) / float64(mdhd.Timescale),
		stts: float64(ticks) / float64(mdhd.Timescale),
		w:    int(avcx.Width), h: int(avcx.Height),
	}
}

// resolutionShortSide is the short side, in pixels, of a video resolution
// class as the providers use it ("720p" is 1280×720 or 720×1280).
func resolutionShortSide(t *testing.T, class string) int {
	t.Helper()
	var n int
	switch {
	case class == "4k" || class == "4K":
		return 2160
	case func() bool { _, err := fmt.Sscanf(class, "%dp", &n); return err == nil }():
		return n
	}
	t.Fatalf("unknown resolution class %q", class)
	return 0
}

// maxVideoBytes bounds every sandbox video: a placeholder stays a small file
// whatever length and resolution class was asked for.
const maxVideoBytes = 1536 << 10

// TestVideoCatalogDurations renders every video model of the catalog at
// every duration it allows and reads the length back from the MP4's own
// boxes: the clip lasts exactly what was paid for.
func TestVideoCatalogDurations(t *testing.T) {
	cat, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	models := 0
	for _, m := range cat.Models() {
		if m.Type != "video" {
			continue
		}
		f, ok := m.Field("duration")
		if !ok {
			t.Errorf("%s: video model without a duration option", m.ID)
			continue
		}
		models++
		for _, secs := range allowedInts(t, f) {
			out := submit(t, videoModelJob(m, map[string]any{"duration": secs}))[0]
			got := readMP4Timing(t, out.Data)
			want := float64(secs)
			if got.mvhd != want || got.tkhd != want || got.mdhd != want || got.stts != want {
				t.Errorf("%s duration %d: the MP4 lasts mvhd %.3f s, tkhd %.3f s, mdhd %.3f s, stts %.3f s",
					m.ID, secs, got.mvhd, got.tkhd, got.mdhd, got.stts)
			}
			if len(out.Data) > maxVideoBytes {
				t.Errorf("%s duration %d: %d bytes, want at most %d", m.ID, secs, len(out.Data), maxVideoBytes)
			}
		}
	}
	if models < 10 {
		t.Fatalf("only %d video models in the catalog", models)
	}
}

// TestVideoCatalogShapes renders every video model at each aspect ratio and
// resolution class it takes (the longest duration it allows) and checks the
// frame: its shape is the aspect ratio asked for, and its short side is the
// resolution class scaled down by videoScaleDown (720p when the model has
// no resolution option).
func TestVideoCatalogShapes(t *testing.T) {
	cat, err := gengate.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cat.Models() {
		if m.Type != "video" {
			continue
		}
		f, _ := m.Field("duration")
		durs := allowedInts(t, f)
		longest := durs[len(durs)-1]
		aspects := []any{nil}
		if f, ok := m.Field("aspectRatio"); ok {
			aspects = f.Values
		}
		classes := []any{nil}
		if f, ok := m.Field("resolution"); ok {
			classes = f.Values
		}
		for _, a := range aspects {
			for _, c := range classes {
				set := map[string]any{"duration": longest}
				if a != nil {
					set["aspectRatio"] = a
				}
				if c != nil {
					set["resolution"] = c
				}
				job := videoModelJob(m, set)
				out := submit(t, job)[0]
				got := readMP4Timing(t, out.Data)
				name := fmt.Sprintf("%s %v %v %d s", m.ID, job.AspectRatio, job.Options["resolution"], longest)

				aw, ah := 16.0, 9.0
				if job.AspectRatio != "" {
					if aw, ah, err = parseAspect(job.AspectRatio); err != nil {
						t.Fatal(err)
					}
				}
				// Sides are even (4:2:0), so a ratio is met to within a
				// pixel on each side.
				if ratio := float64(got.w) / float64(got.h); math.Abs(ratio-aw/ah) > aw/ah*(1.0/float64(got.w)+1.0/float64(got.h)) {
					t.Errorf("%s: frame %dx%d (%.3f), want aspect %.3f", name, got.w, got.h, ratio, aw/ah)
				}
				class := "720p"
				if r, ok := job.Options["resolution"].(string); ok {
					class = r
				}
				wantShort := float64(resolutionShortSide(t, class)) / videoScaleDown
				if short := float64(min(got.w, got.h)); math.Abs(short-wantShort) > 1 {
					t.Errorf("%s: frame %dx%d, want a short side of %.1f (%s ÷ %d)", name, got.w, got.h, wantShort, class, videoScaleDown)
				}
				if got.mvhd != float64(longest) {
					t.Errorf("%s: lasts %.3f s", name, got.mvhd)
				}
				if len(out.Data) > maxVideoBytes {
					t.Errorf("%s: %d bytes, want at most %d", name, len(out.Data), maxVideoBytes)
				}
				t.Logf("%s: %dx%d, %d bytes", name, got.w, got.h, len(out.Data))
			}
		}
	}
}
