package restore

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/gengate/gengate/internal/imageops"
)

// Figures of the pipeline before it measured whether a photo needed
// colour and contrast (commit 777af9d, same protocol, same machine):
// every photo got grey-edge balance, CLAHE and sharpening.
const (
	beforeCleanKodak = 28.14 // clean Kodak24, PSNR vs themselves
	beforeCleanCBSD  = 27.73 // clean CBSD68
	beforeNoisy15    = 27.33 // Kodak24 σ 15, whole pipeline, blind σ
	beforeNoisy50    = 24.97 // Kodak24 σ 50
)

// beforeFade is the old pipeline's PSNR on the faded sets, by Fadings.
var beforeFade = [...]float64{20.85, 20.70, 21.67, 26.58}

// harmResult is what EvaluateHarm measures.
type harmResult struct {
	kodak, cbsd      cleanResult
	noisy15, noisy50 float64 // Kodak24 with noise, whole pipeline, PSNR vs clean
	fadeIn, fadeOut  []float64
}

// cleanResult is a clean set through the whole pipeline, each photo's
// PSNR against itself.
type cleanResult struct {
	n, under38, unchanged, faded, texture int
	worst                                 float64
	harmed                                []string // the photos under 38 dB, with their PSNR
}

// cleanSet runs each photo of files through the whole pipeline with the
// default options and measures it against itself.
func cleanSet(files []string) (c cleanResult, err error) {
	c.n, c.worst = len(files), math.Inf(1)
	for _, f := range files {
		img, err := imageops.Load(f)
		if err != nil {
			return c, err
		}
		out, rep, err := RestoreReport(img, Options{})
		if err != nil {
			return c, err
		}
		p := imageops.PSNRRGB(img, out)
		c.worst = math.Min(c.worst, p)
		switch {
		case math.IsInf(p, 1):
			c.unchanged++
		case p < 38:
			c.under38++
			c.harmed = append(c.harmed, fmt.Sprintf("%s %.2f dB (σ %.2f, denoised %v, faded %v, cast %.3f)",
				filepath.Base(f), p, rep.Sigma, rep.Denoised, rep.Faded, castOf(rep.Cast)))
		}
		if rep.Faded {
			c.faded++
		}
		if rep.Texture {
			c.texture++
		}
	}
	return c, nil
}

func (c cleanResult) row(set string, before string) imageops.Result {
	return imageops.Result{Model: model,
		Metric: fmt.Sprintf("clean %s photos, whole pipeline: photos under 38 dB from themselves (worst; unchanged; taken for faded; texture, not denoised)", set),
		Value:  float64(c.under38), Unit: fmt.Sprintf("of %d (%.2f dB; %d; %d; %d)", c.n, c.worst, c.unchanged, c.faded, c.texture),
		Peer: before, Target: "0", Pass: c.under38 == 0}
}

// EvaluateHarm measures that photo-restoration does no harm to good photos
// and still repairs bad ones, on Kodak24 and CBSD68 under dataDir: clean
// photos through the whole pipeline (PSNR against themselves), Kodak24
// with Gaussian noise σ 15 and 50 through the whole pipeline with the
// blind σ (PSNR against the clean photo), and Kodak24 faded in each of the
// Fadings ways (PSNR of the faded and of the restored photo against the
// clean one). When picDir is not empty the first Kodak photo's faded and
// restored versions are written there (research-licensed: never commit).
func EvaluateHarm(dataDir, picDir string) ([]imageops.Result, error) {
	kodak, err := listPNG(filepath.Join(dataDir, "denoise-kodak24"))
	if err != nil {
		return nil, err
	}
	cbsd, err := listPNG(filepath.Join(dataDir, "denoise-cbsd68"))
	if err != nil {
		return nil, err
	}
	if picDir != "" {
		if err := os.MkdirAll(picDir, 0o755); err != nil {
			return nil, err
		}
	}
	h, err := evalHarm(kodak, cbsd, picDir)
	if err != nil {
		return nil, err
	}
	res := []imageops.Result{
		h.kodak.row("Kodak24", fmt.Sprintf("before all 24, mean %.2f dB (worst 23.45)", beforeCleanKodak)),
		h.cbsd.row("CBSD68", fmt.Sprintf("before mean %.2f dB (worst 22.36)", beforeCleanCBSD)),
		{Model: model, Metric: "Kodak24 σ 15, whole pipeline, blind σ, PSNR", Value: h.noisy15, Unit: "dB",
			Peer: fmt.Sprintf("before %.2f", beforeNoisy15), Target: fmt.Sprintf("≥ %.2f", beforeNoisy15), Pass: h.noisy15 >= beforeNoisy15-0.005},
		{Model: model, Metric: "Kodak24 σ 50, whole pipeline, blind σ, PSNR", Value: h.noisy50, Unit: "dB",
			Peer: fmt.Sprintf("before %.2f", beforeNoisy50), Target: fmt.Sprintf("≥ %.2f", beforeNoisy50), Pass: h.noisy50 >= beforeNoisy50-0.005},
	}
	for i, f := range Fadings {
		res = append(res, imageops.Result{Model: model, Metric: fmt.Sprintf("faded Kodak24 (%s), PSNR faded → restored", f.Name),
			Value: h.fadeOut[i], Unit: fmt.Sprintf("dB (faded %.2f)", h.fadeIn[i]), Peer: fmt.Sprintf("before %.2f", beforeFade[i]),
			Target: "≥ faded + 2", Pass: h.fadeOut[i] >= h.fadeIn[i]+2})
	}
	return res, nil
}

func evalHarm(kodak, cbsd []string, picDir string) (h harmResult, err error) {
	h.fadeIn, h.fadeOut = make([]float64, len(Fadings)), make([]float64, len(Fadings))
	if h.kodak, err = cleanSet(kodak); err != nil {
		return h, err
	}
	if h.cbsd, err = cleanSet(cbsd); err != nil {
		return h, err
	}
	for i, f := range kodak {
		img, err := imageops.Load(f)
		if err != nil {
			return h, err
		}
		name := filepath.Base(f)
		for _, s := range []struct {
			sigma float64
			sum   *float64
		}{{15, &h.noisy15}, {50, &h.noisy50}} {
			out, err := Restore(AddNoise(img, s.sigma, SeedFor(name)), Options{})
			if err != nil {
				return h, err
			}
			*s.sum += imageops.PSNRRGB(img, out) / float64(len(kodak))
		}
		for k, fd := range Fadings {
			in := Fade(img, fd)
			out, err := Restore(in, Options{})
			if err != nil {
				return h, err
			}
			h.fadeIn[k] += imageops.PSNRRGB(img, in) / float64(len(kodak))
			h.fadeOut[k] += imageops.PSNRRGB(img, out) / float64(len(kodak))
			if picDir != "" && i == 0 {
				base := "restore-" + strings.TrimSuffix(name, ".png") + "-" + strings.ReplaceAll(strings.ReplaceAll(fd.Name, " ", "-"), ",", "")
				if err := savePNG(filepath.Join(picDir, base+"-faded.png"), in); err != nil {
					return h, err
				}
				if err := savePNG(filepath.Join(picDir, base+"-restored.png"), out); err != nil {
					return h, err
				}
			}
		}
	}
	return h, nil
}
