package restore

import (
	"image"
)

// Fading is one procedural way a photo fades or takes a colour cast, for
// the faded-photo evaluation: the picture is desaturated toward its luma
// by Desaturate (0..1), then each channel's 0..255 is mapped linearly onto
// Lo[c]..Hi[c] (lifted blacks, dimmed or tinted whites).
type Fading struct {
	Name       string
	Desaturate float64
	Lo, Hi     [3]float64
}

// Fadings are the faded-photo set's kinds, made from clean photos: an aged
// print (lifted blacks, yellowed whites, dull colour), a magenta fade (the
// cyan dye gone), a cool cast with a mild fade, and a warm white-balance
// cast with no fading at all.
var Fadings = []Fading{
	{Name: "aged print", Desaturate: 0.35, Lo: [3]float64{58, 48, 36}, Hi: [3]float64{238, 226, 196}},
	{Name: "magenta fade", Desaturate: 0.25, Lo: [3]float64{52, 30, 44}, Hi: [3]float64{250, 206, 232}},
	{Name: "cool, mild fade", Desaturate: 0.1, Lo: [3]float64{18, 28, 42}, Hi: [3]float64{212, 228, 252}},
	{Name: "warm cast", Desaturate: 0, Lo: [3]float64{0, 0, 0}, Hi: [3]float64{255, 228, 184}},
}

// Fade returns img faded by f, rounded to 8 bits, alpha opaque.
func Fade(img image.Image, f Fading) *image.NRGBA {
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bb, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			v := [3]float64{float64(r >> 8), float64(g >> 8), float64(bb >> 8)}
			l := 0.299*v[0] + 0.587*v[1] + 0.114*v[2]
			o := y*out.Stride + 4*x
			for c := range v {
				s := v[c] + f.Desaturate*(l-v[c])
				out.Pix[o+c] = clampByte(f.Lo[c] + (f.Hi[c]-f.Lo[c])*s/255)
			}
			out.Pix[o+3] = 255
		}
	}
	return out
}
