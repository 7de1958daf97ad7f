package matte

import (
	"fmt"
	"hash/fnv"
	"os"
	"testing"
)

// TestFingerprint prints, for every GrabCut-50 image, its IoU, an FNV-64a
// hash of its matte and the process CPU seconds runHint took, then the
// CPU seconds per megapixel over the set (GENGATE_MATTE_FP=1;
// GENGATE_MATTE_FP=all also hashes the procedural portraits' and the
// synthetic product shots' mattes; GENGATE_MATTE_ONLY="name ..."
// restricts the set). Two builds whose lines agree give the same mattes
// byte for byte: a change meant only to be faster is checked by diffing
// the FP lines of main and of the change (docs/builtin-quality.md, "remove-bg
// CPU").
func TestFingerprint(t *testing.T) {
	if os.Getenv("GENGATE_MATTE_FP") == "" {
		t.Skip("set GENGATE_MATTE_FP=1 (or all) to print per-image IoU, matte hash and CPU")
	}
	dir := evalData(t)
	only := onlyPics()
	var cpu, mp float64
	err := eachObject(dir, only, func(o gtObject) error {
		c0 := cpuTime()
		_, alpha, err := runHint(o.img, defaultParams, nil)
		if err != nil {
			return err
		}
		c := (cpuTime() - c0).Seconds()
		h := fnv.New64a()
		h.Write(alpha.Pix)
		cpu += c
		mp += float64(o.w*o.h) / 1e6
		fmt.Printf("FP %-12s %.5f %016x cpu %.2f\n", o.name, maskIoU(alpha, o.fg, o.ignore), h.Sum64(), c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("GENGATE_MATTE_FP") == "all" {
		for i, s := range portraitSet {
			img, _ := drawPortrait(s, uint64(i)+1)
			_, alpha, _ := run(img, defaultParams)
			h := fnv.New64a()
			h.Write(alpha.Pix)
			fmt.Printf("FP portrait-%s %016x\n", s.Name, h.Sum64())
		}
		for i, c := range syntheticShots {
			img, _ := productShot(480, 360, c.cx, c.cy, c.size, c.textured, c.shadow)
			a, _ := Matte(img)
			h := fnv.New64a()
			h.Write(a.Pix)
			fmt.Printf("FP synth-%d %016x\n", i, h.Sum64())
		}
	}
	fmt.Printf("CPU %.2f s over %.2f MP = %.3f cpu-s/MP\n", cpu, mp, cpu/mp)
}
