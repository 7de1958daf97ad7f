package inpaint

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gengate/gengate/internal/imageops"
)

// TestEvaluate prints the Evaluate table (GENGATE_EVAL=1; picDir from
// GENGATE_EVAL_PICS, optional).
func TestEvaluate(t *testing.T) {
	if os.Getenv("GENGATE_EVAL") != "1" {
		t.Skip("set GENGATE_EVAL=1 to run the full evaluation (about 2 minutes)")
	}
	dir, ok := imageops.DataDir()
	if !ok {
		t.Skip("evaluation data not found at ../shared/data: set GENGATE_EVAL_DATA or check out shared/data beside the repository")
	}
	t0 := time.Now()
	rows, err := Evaluate(dir, os.Getenv("GENGATE_EVAL_PICS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("%-16s %-50s %8.3f %-5s %-55s %-8s %v\n", r.Model, r.Metric, r.Value, r.Unit, r.Peer, r.Target, r.Pass)
	}
	fmt.Println("evaluation took", time.Since(t0).Round(time.Second))
}
