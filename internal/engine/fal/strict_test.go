package fal

import (
	"testing"

	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/fal/faltest"
)

// TestStrictFake sends every fal route of the catalog, with its defaults
// and with every allowed value of every option, through the strict fake
// (faltest.Schemas, read from fal's published input types): whatever
// Validate accepts, fal must accept.
func TestStrictFake(t *testing.T) {
	e, _ := newEngine(t)
	if n := enginetest.Sweep(t, e, "fal"); n < 200 {
		t.Errorf("only %d submits accepted", n)
	}
}

// TestSchemasCoverTable checks that every endpoint the engine's table can
// send to has a published schema in the fake, with its source and date.
func TestSchemasCoverTable(t *testing.T) {
	for endpoint := range models {
		s, ok := faltest.Schemas[endpoint]
		if !ok {
			t.Errorf("%s: no schema in faltest", endpoint)
			continue
		}
		if err := s.Valid(); err != nil {
			t.Errorf("%s: %v", endpoint, err)
		}
	}
}
