package sandbox

import (
	"testing"
	"time"

	"github.com/gengate/gengate/internal/engine/enginetest"
)

func TestConformance(t *testing.T) {
	t.Run("no delay", func(t *testing.T) {
		enginetest.Run(t, New(0), enginetest.DefaultCases(), func(time.Duration) {
			t.Fatal("an engine without delay should not ask to be checked")
		})
	})
	t.Run("delay", func(t *testing.T) {
		e := New(3 * time.Second)
		clock := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
		e.now = func() time.Time { return clock }
		enginetest.Run(t, e, enginetest.DefaultCases(), func(d time.Duration) { clock = clock.Add(d) })
	})
}
