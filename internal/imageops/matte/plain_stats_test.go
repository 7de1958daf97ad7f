package matte

import (
	"fmt"
	"os"
	"sort"
	"testing"
)

// TestPlainStats prints the plain-background statistics of every GrabCut
// image (GENGATE_MATTE_PLAIN=1), the data the subset threshold was fixed from.
func TestPlainStats(t *testing.T) {
	if os.Getenv("GENGATE_MATTE_PLAIN") == "" {
		t.Skip("set GENGATE_MATTE_PLAIN=1 to print the plain-background statistics")
	}
	dir := evalData(t)
	type row struct {
		name  string
		comps int
		std   float64
		grad  float64
	}
	var rows []row
	err := eachObject(dir, nil, func(o gtObject) error {
		c, s, g := plainStats(o.img, o.fg, o.ignore, o.w, o.h)
		rows = append(rows, row{o.name, c, s, g})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a].grad < rows[b].grad })
	for _, r := range rows {
		fmt.Printf("%-10s comps %d std %6.2f grad %6.2f plain %v\n", r.name, r.comps, r.std, r.grad, isPlain(r.comps, r.std, r.grad))
	}
}
