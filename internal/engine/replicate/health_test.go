package replicate

import (
	"testing"

	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/replicate/replicatetest"
)

// TestCheckHealth: a key the provider takes is healthy, one it refuses is
// reported with its status, an address that does not answer as such.
func TestCheckHealth(t *testing.T) {
	enginetest.Health(t, replicatetest.New(t), func(key, base string) enginetest.HealthChecker {
		return New(Config{APIKey: key, BaseURL: base})
	}, 401)
}
