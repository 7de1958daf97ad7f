package upscale

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/gengate/gengate/internal/imageops"
)

// Model is the catalog id the evaluation rows are reported under.
const Model = "image-upscaler"

var (
	set5Names  = []string{"baby", "bird", "butterfly", "head", "woman"}
	set14Names = []string{"baboon", "barbara", "bridge", "coastguard", "comic", "face", "flowers",
		"foreman", "lenna", "man", "monarch", "pepper", "ppt3", "zebra"}
)

// srCase is one benchmark configuration with its peer (OpenCV
// INTER_LANCZOS4) and target figures from the project's quality anchors.
type srCase struct {
	set              string
	names            []string
	s                int
	peerPSNR, target float64
	peerSSIM         float64
}

var srCases = []srCase{
	{"Set5", set5Names, 2, 34.45, 35.3, 0.9377},
	{"Set5", set5Names, 3, 30.91, 31.5, 0.8772},
	{"Set5", set5Names, 4, 28.89, 29.4, 0.8202},
	{"Set14", set14Names, 2, 30.77, 31.2, 0.8811},
	{"Set14", set14Names, 4, 26.27, 26.5, 0.7125},
}

// srScore is the mean PSNR-Y and SSIM-Y of one method over a set.
type srScore struct{ psnr, ssim float64 }

// loadPair reads an HR image and its shipped LR_bicubic counterpart.
func loadPair(dataDir, set, name string, s int) (hr, lr image.Image, err error) {
	base := filepath.Join(dataDir, "sr-set5-set14", set)
	if hr, err = imageops.Load(filepath.Join(base, "HR", name+".png")); err != nil {
		return nil, nil, err
	}
	lr, err = imageops.Load(filepath.Join(base, "LR_bicubic", fmt.Sprintf("X%d", s), fmt.Sprintf("%sx%d.png", name, s)))
	return hr, lr, err
}

// scoreY compares out with the top-left out-sized crop of hr (mod-crop)
// on BT.601 luma, shaving s pixels at every border.
func scoreY(hr, out image.Image, s int, withSSIM bool) srScore {
	ob := out.Bounds()
	W, H := ob.Dx(), ob.Dy()
	hy := imageops.Luma(hr)
	hw := hr.Bounds().Dx()
	ref := make([]float64, W*H)
	for y := 0; y < H; y++ {
		copy(ref[y*W:(y+1)*W], hy[y*hw:y*hw+W])
	}
	oy := imageops.Luma(out)
	sc := srScore{psnr: imageops.PSNR(ref, oy, W, H, s)}
	if withSSIM {
		sc.ssim = imageops.SSIM(ref, oy, W, H, s)
	}
	return sc
}

// evalCase runs Upscale and the Lanczos baseline over one case and returns
// their mean scores.
func evalCase(dataDir string, c srCase, withSSIM bool, keep func(name string, lr, base, out image.Image)) (ours, base srScore, err error) {
	for _, n := range c.names {
		hr, lr, err := loadPair(dataDir, c.set, n, c.s)
		if err != nil {
			return ours, base, err
		}
		if lr.Bounds().Dx()*c.s > hr.Bounds().Dx() || lr.Bounds().Dy()*c.s > hr.Bounds().Dy() {
			return ours, base, fmt.Errorf("%s/%s: LR x%d larger than HR", c.set, n, c.s)
		}
		out, err := Upscale(lr, c.s)
		if err != nil {
			return ours, base, err
		}
		lz, err := lanczos(lr, c.s)
		if err != nil {
			return ours, base, err
		}
		a, b := scoreY(hr, out, c.s, withSSIM), scoreY(hr, lz, c.s, withSSIM)
		ours.psnr += a.psnr / float64(len(c.names))
		ours.ssim += a.ssim / float64(len(c.names))
		base.psnr += b.psnr / float64(len(c.names))
		base.ssim += b.ssim / float64(len(c.names))
		if keep != nil {
			keep(n, lr, lz, out)
		}
	}
	return ours, base, nil
}

// Evaluate runs the super-resolution protocol (Set5 x2/x3/x4, Set14 x2/x4:
// shipped MATLAB-bicubic LR inputs, PSNR and SSIM on BT.601 luma with s
// border pixels shaved) and a 12 MP speed measurement. dataDir is the
// directory holding sr-set5-set14 (imageops.DataDir). When picDir is not
// empty, before (Lanczos) / after crops are written there for a visual
// check; they derive from research-licensed data and stay out of the
// repository.
func Evaluate(dataDir, picDir string) ([]imageops.Result, error) {
	var rows []imageops.Result
	for _, c := range srCases {
		var keep func(string, image.Image, image.Image, image.Image)
		if picDir != "" && c.set == "Set5" && c.s != 3 {
			keep = func(name string, _, base, out image.Image) {
				if name != "butterfly" && name != "baby" {
					return
				}
				r := cropRect(out.Bounds(), 256)
				_ = writePNG(filepath.Join(picDir, fmt.Sprintf("upscale-%s-x%d-lanczos.png", name, c.s)), crop(base, r))
				_ = writePNG(filepath.Join(picDir, fmt.Sprintf("upscale-%s-x%d-gengate.png", name, c.s)), crop(out, r))
			}
			if err := os.MkdirAll(picDir, 0o755); err != nil {
				return nil, err
			}
		}
		ours, base, err := evalCase(dataDir, c, true, keep)
		if err != nil {
			return nil, err
		}
		rows = append(rows,
			imageops.Result{Model: Model, Metric: fmt.Sprintf("%s PSNR-Y x%d", c.set, c.s), Value: round(ours.psnr, 2), Unit: "dB",
				Peer: fmt.Sprintf("Lanczos %.2f (own Lanczos-4 %.2f)", c.peerPSNR, base.psnr), Target: fmt.Sprintf("≥ %.1f", c.target), Pass: ours.psnr >= c.target},
			imageops.Result{Model: Model, Metric: fmt.Sprintf("%s SSIM-Y x%d", c.set, c.s), Value: round(ours.ssim, 4), Unit: "SSIM",
				Peer: fmt.Sprintf("Lanczos %.4f", c.peerSSIM), Target: fmt.Sprintf("> %.4f", c.peerSSIM), Pass: ours.ssim > c.peerSSIM})
	}
	sec, err := time12MP(3)
	if err != nil {
		return nil, err
	}
	rows = append(rows, imageops.Result{Model: Model, Metric: "12 MP output (x2 from 2000x1500)", Value: round(sec, 3), Unit: "s",
		Peer: "cv2 Lanczos4 0.142 (no IBP)", Target: "< 1", Pass: sec < 1})
	return rows, nil
}

// time12MP returns the median wall time of Upscale x2 on a synthetic
// 2000×1500 image.
func time12MP(runs int) (float64, error) {
	src := synthetic(2000, 1500, 1)
	var ts []float64
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		if _, err := Upscale(src, 2); err != nil {
			return 0, err
		}
		ts = append(ts, time.Since(t0).Seconds())
	}
	sort.Float64s(ts)
	return ts[len(ts)/2], nil
}

func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

func cropRect(b image.Rectangle, size int) image.Rectangle {
	c := b.Min.Add(b.Size().Div(2))
	r := image.Rect(c.X-size/2, c.Y-size/2, c.X+size/2, c.Y+size/2)
	return r.Intersect(b)
}

func crop(img image.Image, r image.Rectangle) image.Image {
	out := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := 0; y < r.Dy(); y++ {
		for x := 0; x < r.Dx(); x++ {
			out.Set(x, y, img.At(r.Min.X+x, r.Min.Y+y))
		}
	}
	return out
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
