package matte

import (
	"os"
	"testing"
)

// TestDumpStudio writes before/after pictures of studio composites to
// /tmp/studio for looking at (GENGATE_MATTE_DUMP="name ..."). They derive
// from the research-licensed GrabCut set: never commit them.
func TestDumpStudio(t *testing.T) {
	names := os.Getenv("GENGATE_MATTE_DUMP")
	if names == "" {
		t.Skip(`set GENGATE_MATTE_DUMP="name ..." to write studio composites and their cut-outs to /tmp/studio`)
	}
	dir := evalData(t)
	for _, set := range [][]studioBackdrop{studioBackdrops, heldOutBackdrops} {
		err := eachObject(dir, picSetFrom(names), func(o gtObject) error {
			for bi, bd := range set { // seeds as in evalStudio
				comp, _, _ := studioComposite(o.img, o.fg, o.ignore, o.w, o.h, bd, uint64(bi)+1)
				cut, alpha, err := run(comp, defaultParams)
				if err != nil {
					return err
				}
				if err := writeBeforeAfter("/tmp/studio", o.name+"-"+bd.Name, cut, alpha); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
