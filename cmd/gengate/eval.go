package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/gengate/gengate/internal/imageops"
	"github.com/gengate/gengate/internal/imageops/inpaint"
	"github.com/gengate/gengate/internal/imageops/matte"
	"github.com/gengate/gengate/internal/imageops/restore"
	"github.com/gengate/gengate/internal/imageops/upscale"
)

// evaluations are the built-in operations' evaluations, by model id, in
// the order they run.
var evaluations = []struct {
	model string
	run   func(dataDir, picDir string) ([]imageops.Result, error)
}{
	{"image-upscaler", upscale.Evaluate},
	{"remove-bg", matte.Evaluate},
	{"object-remover", inpaint.Evaluate},
	{"photo-restoration", restore.Evaluate},
}

// evalBuiltin runs the evaluations of the built-in image operations on the
// public evaluation sets and prints one table (docs/builtin-quality.md).
// The sets are research-licensed: they are read in place, never shipped.
func evalBuiltin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f := newFlags("eval builtin", getenv, stderr)
	var sets, pics, only string
	f.str(&sets, "sets", "", "directory of the evaluation sets (default: ../shared/data beside the checkout, or $GENGATE_EVAL_DATA)")
	f.str(&pics, "pictures", "", "directory to write before/after pictures to (not written when empty)")
	f.str(&only, "model", "", "evaluate one model only")
	if err := f.Parse(args); err != nil {
		return err
	}
	if sets == "" {
		d, ok := imageops.DataDir()
		if !ok {
			return errors.New("evaluation sets not found: pass --sets DIR (see docs/builtin-quality.md for where they come from)")
		}
		sets = d
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "model\tmetric\tgengate\tpeer here\ttarget\tmet")
	failed := 0
	for _, e := range evaluations {
		if only != "" && only != e.model {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, err := e.run(sets, pics)
		if err != nil {
			return fmt.Errorf("%s: %w", e.model, err)
		}
		for _, r := range rows {
			met := "yes"
			if !r.Pass {
				met, failed = "NO", failed+1
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Model, r.Metric, value(r), r.Peer, r.Target, met)
		}
		w.Flush()
	}
	w.Flush()
	if failed > 0 {
		fmt.Fprintf(stdout, "%d targets not met\n", failed)
	}
	return nil
}

func value(r imageops.Result) string {
	if math.IsNaN(r.Value) {
		return "n/a"
	}
	prec := 2
	switch r.Unit {
	case "IoU", "SSIM":
		prec = 3
	case "images", "px":
		prec = 0
	}
	return strings.TrimSpace(fmt.Sprintf("%.*f %s", prec, r.Value, r.Unit))
}
