package openai

import (
	"testing"

	"github.com/gengate/gengate/internal/engine/enginetest"
	"github.com/gengate/gengate/internal/engine/openai/openaitest"
)

// TestCheckHealth: a key the provider takes is healthy, one it refuses is
// reported with its status, an address that does not answer as such.
func TestCheckHealth(t *testing.T) {
	enginetest.Health(t, openaitest.New(t), func(key, base string) enginetest.HealthChecker {
		return New(Config{APIKey: key, BaseURL: base})
	}, 401)
}
