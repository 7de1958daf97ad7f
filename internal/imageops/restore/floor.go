package restore

import (
	"math"
	"sort"

	"github.com/gengate/gengate/internal/imageops"
)

// Fading or a natural low-contrast scene. From global statistics (black
// and white points, range, chroma, cast) a misty landscape or a pale
// object against a grey wall looks like a faded print. What tells them
// apart is where the blacks are: a print fades as a whole, so its black
// floor is one level and one colour across the frame, and the regions
// with detail (which in a photo nearly always hold a shadow) reach it;
// haze lifts distant detail more than near detail and tints it with the
// sky, and a pale scene has its deep tones in a few places only. floor
// measures both on a grid of floorGrid×floorGrid tiles.
//
// A fade whose floor is not uniform is still taken for one when it has a
// colour cast the illuminant estimators agree on (tintedFade): dyes fade
// unevenly, and a scene whose only deep tones are a few coloured objects
// (the procedural scene of the docs' pictures, DetailLift 0.24-0.27 and
// FloorTint up to 0.12 faded or washed out) has no uniform floor to show;
// or when its luma spans under fadeFlatRange levels (washedOut): the
// flattest clean photo the global gate takes (296007) spans 120.
//
// The gates were set on the faded set (the three fading kinds of Fadings
// on all 24 Kodak24 photos: DetailLift at most 0.18, FloorTint at most
// 0.082) and on the four clean CBSD68 photos the global gate took for
// faded until 2026-11-23: 227092 (a pale amphora against a grey wall:
// DetailLift 0.28, cast 0.010), 260058 (pyramids in a hazy desert: 0.38,
// FloorTint 0.18, cast 0.044), 296007 (a hazy savannah: FloorTint 0.125,
// cast 0) and 109053 (a coyote in backlit dust: a uniform veil, but its
// highlights reach white; fadeTopWhite in tone.go). The margins are
// narrow (0.18 / 0.22 / 0.28, 0.082 / 0.095 / 0.125, 0.044 / 0.06 /
// 0.09): the measures are priors about photos, not proofs.
const (
	floorGrid         = 8    // tiles per side
	fadeDetailLift    = 0.22 // a faded photo's detailed tiles reach within this share of the range of its black point
	fadeFloorTint     = 0.095
	fadeTintCast      = 0.06 // an agreed cast this far from neutral makes a lifted floor a fade wherever it is
	fadeFlatRange     = 100  // and so does a luma range under this
	floorTilePct      = 0.01 // a tile's black: its luma's 1st percentile
	floorTintTilePct  = 0.02 // a tile's black per channel, for its colour
	floorMinTileSide  = 4    // a smaller picture is not measured (uniform)
	floorDarkestShare = 4    // FloorTint looks at the darkest 1/4 of the tiles
)

// washedOut reports whether a photo the global gate takes for faded spans
// under fadeFlatRange levels of luma (narrowed like fadeRange after
// denoising; sigma is the noise deviation removed, 0 if none).
func washedOut(t tone, sigma float64) bool {
	return t.yhi-t.ylo < fadeFlatRange-fadeNoiseMargin*max(sigma-fadeNoiseFree, 0)
}

// tintedFade reports whether a photo the global gate takes for faded has
// a cast of fadeTintCast or more (raised like castGate after denoising;
// sigma is the noise deviation removed, 0 if none).
func tintedFade(cast [3]float64, sigma float64) bool {
	return castOf(cast) >= fadeTintCast+castNoiseMargin*max(sigma-fadeNoiseFree, 0)
}

// FloorStats is where a photo's blacks are, measured by floor.
type FloorStats struct {
	// DetailLift is the median, over the more detailed half of the tiles
	// (mean absolute luma step to the right and below), of the tile's
	// black above the photo's black point, as a share of the luma range.
	DetailLift float64
	// FloorTint is the spread (root of the summed variances of R−G and
	// B−G) of the blacks of the darkest quarter of the tiles, as a share of
	// the luma range.
	FloorTint float64
}

// uniform reports whether the blacks are those of a faded print: one
// level reached by the detailed regions, one colour.
func (f FloorStats) uniform() bool {
	return f.DetailLift <= fadeDetailLift && f.FloorTint <= fadeFloorTint
}

// floor measures m's black floor against t (its tone). A picture too
// small for the grid measures as uniform (the global gate decides).
func floor(m *imageops.RGB, t tone) FloorStats {
	var f FloorStats
	n := floorGrid
	if m.W < n*floorMinTileSide || m.H < n*floorMinTileSide {
		return f
	}
	r := math.Max(t.yhi-t.ylo, 1)
	y := lumaOf(m)
	type tile struct {
		black, detail float64
		tint          [2]float64
	}
	tiles := make([]tile, 0, n*n)
	var py, pr, pg, pb []float32
	for ty := range n {
		for tx := range n {
			x0, x1 := tx*m.W/n, (tx+1)*m.W/n
			y0, y1 := ty*m.H/n, (ty+1)*m.H/n
			py, pr, pg, pb = py[:0], pr[:0], pg[:0], pb[:0]
			var d float64
			for yy := y0; yy < y1; yy++ {
				row := yy * m.W
				py = append(py, y[row+x0:row+x1]...)
				pr = append(pr, m.R[row+x0:row+x1]...)
				pg = append(pg, m.G[row+x0:row+x1]...)
				pb = append(pb, m.B[row+x0:row+x1]...)
				for xx := x0; xx < x1; xx++ {
					i := row + xx
					if xx+1 < m.W {
						d += math.Abs(float64(y[i+1] - y[i]))
					}
					if yy+1 < m.H {
						d += math.Abs(float64(y[i+m.W] - y[i]))
					}
				}
			}
			g := percentiles(pg, floorTintTilePct)[0]
			tiles = append(tiles, tile{
				black:  percentiles(py, floorTilePct)[0],
				detail: d / float64(len(py)),
				tint:   [2]float64{percentiles(pr, floorTintTilePct)[0] - g, percentiles(pb, floorTintTilePct)[0] - g},
			})
		}
	}
	sort.Slice(tiles, func(i, j int) bool { return tiles[i].detail > tiles[j].detail })
	lifts := make([]float64, 0, len(tiles)/2)
	for _, tl := range tiles[:len(tiles)/2] {
		lifts = append(lifts, (tl.black-t.ylo)/r)
	}
	sort.Float64s(lifts)
	f.DetailLift = lifts[len(lifts)/2]

	sort.Slice(tiles, func(i, j int) bool { return tiles[i].black < tiles[j].black })
	dark := tiles[:len(tiles)/floorDarkestShare]
	var v float64
	for c := range 2 {
		var s, s2 float64
		for _, tl := range dark {
			s += tl.tint[c]
			s2 += tl.tint[c] * tl.tint[c]
		}
		k := float64(len(dark))
		v += math.Max(s2/k-(s/k)*(s/k), 0)
	}
	f.FloorTint = math.Sqrt(v) / r
	return f
}
