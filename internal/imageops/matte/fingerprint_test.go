package matte

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gengate/gengate/internal/imageops"
)

// goldenFingerprints is the file of expected matte hashes: one line per
// image, "<name> <FNV-64a of the matte's bytes>". The procedural portraits
// and synthetic product shots are drawn by the tests; the GrabCut-50
// images are read from ../shared/data (not part of the project), and only
// their hashes live here.
const goldenFingerprints = "testdata/fingerprints.txt"

// quickGrabCut are the GrabCut-50 images the default run checks (every
// one under GENGATE_MATTE_FP=all): a spread of easy and hard scenes, so
// that any change to the matte's rules or arithmetic changes some hash.
var quickGrabCut = []string{"106024", "153077", "181079", "189080", "21077", "227092", "banana1", "llama"}

// TestFingerprint checks that every matte is byte for byte the one in
// goldenFingerprints: a change meant only to be faster must leave them
// all unchanged, and a change of the rules must say so by regenerating
// the file (GENGATE_MATTE_FP=update GENGATE_MATTE_FP_ALL=1 rewrites it
// from the current code; review the diff). It draws the procedural
// portraits and the synthetic product shots every time, and matte
// GrabCut-50 images where ../shared/data is present: a spread of eight by
// default, all 50 with GENGATE_MATTE_FP_ALL=1. With -v it logs each
// image's IoU and CPU seconds.
func TestFingerprint(t *testing.T) {
	want, err := readFingerprints(goldenFingerprints)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	hash := func(pix []byte) string {
		h := fnv.New64a()
		h.Write(pix)
		return fmt.Sprintf("%016x", h.Sum64())
	}
	for i, s := range portraitSet {
		img, _ := drawPortrait(s, uint64(i)+1)
		_, alpha, err := run(img, defaultParams)
		if err != nil {
			t.Fatal(err)
		}
		got["portrait-"+strings.ReplaceAll(s.Name, " ", "_")] = hash(alpha.Pix)
	}
	for i, c := range syntheticShots {
		img, _ := productShot(480, 360, c.cx, c.cy, c.size, c.textured, c.shadow)
		a, err := Matte(img)
		if err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("synth-%d", i)] = hash(a.Pix)
	}
	all := os.Getenv("GENGATE_MATTE_FP_ALL") != ""
	only := map[string]bool{}
	for _, n := range quickGrabCut {
		only[n] = true
	}
	if all {
		only = nil
	}
	if dir, ok := dataDirOrLog(t); ok {
		var cpu, mp float64
		err := eachObject(dir, only, func(o gtObject) error {
			c0 := cpuTime()
			_, alpha, err := runHint(o.img, defaultParams, nil)
			if err != nil {
				return err
			}
			c := (cpuTime() - c0).Seconds()
			cpu += c
			mp += float64(o.w*o.h) / 1e6
			got[o.name] = hash(alpha.Pix)
			t.Logf("%-12s IoU %.5f %s cpu %.2f", o.name, maskIoU(alpha, o.fg, o.ignore), got[o.name], c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if mp > 0 {
			t.Logf("CPU %.2f s over %.2f MP = %.3f cpu-s/MP", cpu, mp, cpu/mp)
		}
	}
	if os.Getenv("GENGATE_MATTE_FP") == "update" {
		if err := writeFingerprints(goldenFingerprints, want, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d fingerprints to %s", len(got), goldenFingerprints)
		return
	}
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	changed := 0
	for _, n := range names {
		w, ok := want[n]
		switch {
		case !ok:
			t.Errorf("%s: matte %s has no line in %s", n, got[n], goldenFingerprints)
		case w != got[n]:
			changed++
			t.Errorf("%s: matte %s, want %s", n, got[n], w)
		}
	}
	if changed > 0 {
		t.Logf("%d of %d mattes changed; if the change of rules is meant, regenerate %s (see this test's comment)", changed, len(got), goldenFingerprints)
	}
}

// dataDirOrLog is the evaluation data's directory, or false with a log
// line saying the GrabCut part was not checked.
func dataDirOrLog(t *testing.T) (string, bool) {
	dir, ok := imageops.DataDir()
	if !ok {
		t.Log("evaluation data not found at ../shared/data: the GrabCut-50 mattes were not checked (the drawn ones were)")
	}
	return dir, ok
}

func readFingerprints(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, h, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		m[name] = strings.TrimSpace(h)
	}
	return m, sc.Err()
}

// writeFingerprints writes old's lines updated with got's.
func writeFingerprints(path string, old, got map[string]string) error {
	merged := map[string]string{}
	for n, h := range old {
		merged[n] = h
	}
	for n, h := range got {
		merged[n] = h
	}
	names := make([]string, 0, len(merged))
	for n := range merged {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("# Matte hashes (FNV-64a of the alpha bytes) checked by TestFingerprint.\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", n, merged[n])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
