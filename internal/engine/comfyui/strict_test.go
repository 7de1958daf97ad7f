package comfyui

import (
	"testing"

	"github.com/gengate/gengate/internal/engine/enginetest"
)

// TestStrictFake sends every ComfyUI route of the catalog, with its
// defaults and with every allowed value of every option, through the fake
// (which validates the prompt graph as ComfyUI's server.py does: node
// classes, required inputs, links): whatever Validate accepts, ComfyUI
// must accept.
func TestStrictFake(t *testing.T) {
	_, e := newEngine(t)
	if n := enginetest.Sweep(t, e, "comfyui"); n < 20 {
		t.Errorf("only %d submits accepted", n)
	}
}
