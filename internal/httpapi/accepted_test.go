package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAcceptedSameBytes: the 202 answer's struct encodes to the bytes the
// map it replaced gave (members sorted, HTML escaped).
func TestAcceptedSameBytes(t *testing.T) {
	for _, a := range []accepted{
		{JobID: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Status: "queued", StatusURL: "/api/generation/jobs/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{JobID: "a<b>&\"c\u2028", Status: "processing", StatusURL: "/x?y=<z>"},
		{},
	} {
		var got, want bytes.Buffer
		_ = json.NewEncoder(&got).Encode(a)
		_ = json.NewEncoder(&want).Encode(map[string]any{"jobId": a.JobID, "status": a.Status, "statusUrl": a.StatusURL})
		if got.String() != want.String() {
			t.Errorf("struct %s, map %s", got.String(), want.String())
		}
	}
}
