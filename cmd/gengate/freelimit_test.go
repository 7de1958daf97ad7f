package main

import (
	"io"
	"testing"
)

// TestFreeModelsPacedByDefault: calls of free models are paced per key
// unless the operator turns it off.
func TestFreeModelsPacedByDefault(t *testing.T) {
	getenv := func(string) string { return "" }
	c, err := parseServeFlags(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.FreeRateLimit <= 0 || c.FreeRateBurst <= 0 {
		t.Errorf("free-model pace %v/s burst %d by default, want one", c.FreeRateLimit, c.FreeRateBurst)
	}
	c, err = parseServeFlags([]string{"--free-rate-limit", "0"}, getenv, io.Discard)
	if err != nil || c.FreeRateLimit != 0 {
		t.Errorf("--free-rate-limit 0: %v %v", c, err)
	}
}
