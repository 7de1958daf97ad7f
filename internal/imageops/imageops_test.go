package imageops

import (
	"image"
	"image/color"
	"math"
	"testing"
)

func TestPSNR(t *testing.T) {
	a := []float64{0, 0, 0, 0}
	b := []float64{0, 0, 0, 10}
	// MSE 25 → 10 log10(65025/25) = 34.15 dB.
	if got := PSNR(a, b, 2, 2, 0); math.Abs(got-34.151) > 0.01 {
		t.Fatalf("PSNR = %.3f, want 34.151", got)
	}
	if !math.IsInf(PSNR(a, a, 2, 2, 0), 1) {
		t.Fatal("identical planes should give +Inf")
	}
}

func TestSSIMIdenticalIsOne(t *testing.T) {
	w, h := 32, 32
	a := make([]float64, w*h)
	for i := range a {
		a[i] = float64((i * 37) % 255)
	}
	if s := SSIM(a, a, w, h, 0); math.Abs(s-1) > 1e-9 {
		t.Fatalf("SSIM(a,a) = %v", s)
	}
	b := make([]float64, len(a))
	copy(b, a)
	for i := range b {
		b[i] = 255 - b[i]
	}
	if s := SSIM(a, b, w, h, 0); s > 0.5 {
		t.Fatalf("SSIM of an inverted image = %v, want low", s)
	}
}

func TestRoundTripAndIoU(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.NRGBA{10, 20, 30, 255})
	back := FromImage(img).NRGBA()
	if back.NRGBAAt(1, 1) != (color.NRGBA{10, 20, 30, 255}) {
		t.Fatalf("round trip gave %v", back.NRGBAAt(1, 1))
	}
	if got := IoU([]bool{true, true, false}, []bool{true, false, false}, nil); got != 0.5 {
		t.Fatalf("IoU = %v", got)
	}
}
