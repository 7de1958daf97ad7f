package matte

import (
	"os"
	"testing"

	"github.com/gengate/gengate/internal/imageops"
)

// TestDumpStudio writes before/after pictures of studio composites to
// /tmp/studio for looking at (GENGATE_MATTE_DUMP="name ..."). They derive
// from the research-licensed GrabCut set: never commit them.
func TestDumpStudio(t *testing.T) {
	names := os.Getenv("GENGATE_MATTE_DUMP")
	if names == "" {
		t.Skip(`set GENGATE_MATTE_DUMP="name ..." to write studio composites and their cut-outs to /tmp/studio`)
	}
	dir, ok := imageops.DataDir()
	if !ok {
		t.Skip("evaluation data not found at ../shared/data")
	}
	set, err := grabcutSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	only := picSetFrom(names)
	for _, it := range set {
		if !only[it[0]] {
			continue
		}
		img, err := imageops.Load(it[1])
		if err != nil {
			t.Fatal(err)
		}
		fg, ign, w, h, err := loadGT(it[2])
		if err != nil {
			t.Fatal(err)
		}
		for bi, bd := range append(studioBackdrops[:len(studioBackdrops):len(studioBackdrops)], heldOutBackdrops...) {
			comp, _, _ := studioComposite(img, fg, ign, w, h, bd, uint64(bi)+1)
			cut, alpha, err := run(comp, defaultParams)
			if err != nil {
				t.Fatal(err)
			}
			if err := writeBeforeAfter("/tmp/studio", it[0]+"-"+bd.Name, cut, alpha); err != nil {
				t.Fatal(err)
			}
		}
	}
}
