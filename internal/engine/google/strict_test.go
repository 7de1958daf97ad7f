package google

import (
	"testing"

	"github.com/gengate/gengate/internal/engine/enginetest"
)

// TestStrictFake sends every Google route of the catalog, with its
// defaults and with every allowed value of every option, through the fake
// (field names as go-genai's Gemini API converters send them, enums, and
// the per-model rules): whatever Validate accepts, the Gemini API must
// accept.
func TestStrictFake(t *testing.T) {
	_, e := newEngine(t)
	if n := enginetest.Sweep(t, e, "google"); n < 40 {
		t.Errorf("only %d submits accepted", n)
	}
}
