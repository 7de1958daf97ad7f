package upscale

import (
	"image"
	"math"
)

// Procedural test scene (no external data): a colour gradient, fine
// stripes of rising frequency, rings and discs, and stroke "text".

type seg struct{ x0, y0, x1, y1 float64 }

// glyphs on a 4×6 grid.
var glyphs = map[byte][]seg{
	'G': {{4, 1, 3, 0}, {3, 0, 1, 0}, {1, 0, 0, 1}, {0, 1, 0, 5}, {0, 5, 1, 6}, {1, 6, 3, 6}, {3, 6, 4, 5}, {4, 5, 4, 3}, {4, 3, 2, 3}},
	'E': {{0, 0, 0, 6}, {0, 0, 4, 0}, {0, 3, 3, 3}, {0, 6, 4, 6}},
	'N': {{0, 6, 0, 0}, {0, 0, 4, 6}, {4, 6, 4, 0}},
	'A': {{0, 6, 2, 0}, {2, 0, 4, 6}, {1, 3.5, 3, 3.5}},
	'T': {{0, 0, 4, 0}, {2, 0, 2, 6}},
}

type stroke struct {
	seg
	w float64
}

// sceneStrokes lays out "GENGATE" twice, large and small.
func sceneStrokes() []stroke {
	var out []stroke
	for _, line := range []struct{ x, y, size, w float64 }{{0.06, 0.08, 0.022, 0.012}, {0.06, 0.34, 0.008, 0.0045}} {
		x := line.x
		for _, c := range []byte("GENGATE") {
			for _, s := range glyphs[c] {
				out = append(out, stroke{seg{x + s.x0*line.size, line.y + s.y0*line.size, x + s.x1*line.size, line.y + s.y1*line.size}, line.w})
			}
			x += 6 * line.size
		}
	}
	return out
}

func distSeg(px, py float64, s seg) float64 {
	dx, dy := s.x1-s.x0, s.y1-s.y0
	t := ((px-s.x0)*dx + (py-s.y0)*dy) / (dx*dx + dy*dy + 1e-12)
	t = math.Max(0, math.Min(1, t))
	ex, ey := px-s.x0-t*dx, py-s.y0-t*dy
	return math.Sqrt(ex*ex + ey*ey)
}

// sceneColour is the scene at (u, v), u in 0..1 across, v in 0..0.75 down.
func sceneColour(u, v float64, strokes []stroke) (r, g, b float64) {
	// Gradient background.
	r, g, b = 40+180*u, 70+60*v, 200-150*u
	// Fine stripes, frequency rising to the right (lower right block).
	if u > 0.55 && u < 0.95 && v > 0.42 && v < 0.7 {
		f := 40 + 260*(u-0.55)
		k := 0.5 + 0.5*math.Sin(2*math.Pi*f*(u-0.55))
		r, g, b = 30+200*k, 30+200*k, 30+200*k
	}
	// Rings and discs (left lower half).
	for _, c := range []struct{ x, y, rad, w float64 }{{0.2, 0.55, 0.13, 0.006}, {0.2, 0.55, 0.09, 0.004}, {0.2, 0.55, 0.05, 0.002}} {
		d := math.Hypot(u-c.x, v-c.y)
		if math.Abs(d-c.rad) < c.w {
			r, g, b = 250, 240, 220
		}
	}
	if math.Hypot(u-0.42, v-0.58) < 0.06 {
		r, g, b = 220, 30, 40
	}
	if math.Hypot(u-0.45, v-0.52) < 0.025 {
		r, g, b = 20, 160, 60
	}
	// Stroke text.
	for _, s := range strokes {
		if distSeg(u, v, s.seg) < s.w/2 {
			return 15, 15, 25
		}
	}
	return r, g, b
}

// synthetic renders the scene at w×h with ss×ss supersampling.
func synthetic(w, h, ss int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	strokes := sceneStrokes()
	parallel(h, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			for x := 0; x < w; x++ {
				var r, g, b float64
				for sy := 0; sy < ss; sy++ {
					for sx := 0; sx < ss; sx++ {
						u := (float64(x) + (float64(sx)+0.5)/float64(ss)) / float64(w)
						v := (float64(y) + (float64(sy)+0.5)/float64(ss)) / float64(w)
						cr, cg, cb := sceneColour(u, v, strokes)
						r, g, b = r+cr, g+cg, b+cb
					}
				}
				n := float64(ss * ss)
				i := img.PixOffset(x, y)
				img.Pix[i] = uint8(r/n + 0.5)
				img.Pix[i+1] = uint8(g/n + 0.5)
				img.Pix[i+2] = uint8(b/n + 0.5)
				img.Pix[i+3] = 255
			}
		}
	})
	return img
}

// bicubicDown is the MATLAB-style degradation (antialiased Keys cubic) by
// an integer factor s, per channel, alpha dropped.
func bicubicDown(src image.Image, s int) *image.NRGBA {
	ch, _, _ := planes(src, 3)
	toYDiff(ch)
	w, h := ch[0].w, ch[0].h
	dh, dv := downTable(w-w%s, s), downTable(h-h%s, s)
	out := make([]*plane, 3)
	for c := range ch {
		p := ch[c]
		if w%s != 0 || h%s != 0 {
			q := newPlane(w-w%s, h-h%s)
			for y := 0; y < q.h; y++ {
				copy(q.p[y*q.w:(y+1)*q.w], p.p[y*w:y*w+q.w])
			}
			p = q
		}
		out[c] = resample2(p, dh, dv, nil)
	}
	return toNRGBA(out, nil)
}

// toYDiff turns R, G, B planes into Y, B−Y, R−Y in place.
func toYDiff(ch []*plane) {
	for i := range ch[0].p {
		r, g, b := ch[0].p[i], ch[1].p[i], ch[2].p[i]
		y := 0.299*r + 0.587*g + 0.114*b
		ch[0].p[i], ch[1].p[i], ch[2].p[i] = y, b-y, r-y
	}
}
