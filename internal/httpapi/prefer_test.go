package httpapi

import (
	"testing"
	"time"
)

// TestPreferWaitFor: how long a call waits for its task, and the
// Preference-Applied header, for each Prefer under each sync limit. The
// HTTP scenarios (TestPreferWait) hold their tasks so that only the wait
// decides their answers; this is where its length is checked, exactly,
// without a clock.
func TestPreferWaitFor(t *testing.T) {
	for _, c := range []struct {
		prefer   []string
		syncWait time.Duration
		wait     time.Duration
		applied  string
	}{
		{nil, 3 * time.Minute, 3 * time.Minute, ""},
		{[]string{"handling=lenient"}, 3 * time.Minute, 3 * time.Minute, ""},
		{[]string{"respond-async"}, 3 * time.Minute, 0, "respond-async"},
		{[]string{"wait=10, respond-async"}, 3 * time.Minute, 0, "respond-async"},
		{[]string{"wait=0"}, 3 * time.Minute, 0, "wait=0"},
		// A sub-second sync limit is 0 whole seconds: wait=0 is not longer.
		{[]string{"wait=0"}, 900 * time.Millisecond, 0, "wait=0"},
		// Capped at a sub-second limit: the header rounds the wait up to
		// the whole second it runs into, never to "wait=0", which would say
		// the call did not wait.
		{[]string{"wait=100"}, 900 * time.Millisecond, 900 * time.Millisecond, "wait=1"},
		{[]string{"wait=5"}, 3 * time.Minute, 5 * time.Second, "wait=5"},
		{[]string{`wait="5"`}, 3 * time.Minute, 5 * time.Second, "wait=5"},
		{[]string{"wait=180"}, 3 * time.Minute, 3 * time.Minute, "wait=180"},
		{[]string{"wait=181"}, 3 * time.Minute, 3 * time.Minute, "wait=180"},
		{[]string{"wait=100"}, 20 * time.Second, 20 * time.Second, "wait=20"},
		// Seconds past int64 nanoseconds: capped, not wrapped around.
		{[]string{"wait=18446744073"}, 20 * time.Second, 20 * time.Second, "wait=20"},
		{[]string{"wait=-1"}, 3 * time.Minute, 3 * time.Minute, ""},
		{[]string{"wait=soon"}, 3 * time.Minute, 3 * time.Minute, ""},
	} {
		wait, applied := parsePrefer(c.prefer).waitFor(c.syncWait)
		if wait != c.wait || applied != c.applied {
			t.Errorf("Prefer %q, sync limit %s: waits %s, applied %q; want %s, %q",
				c.prefer, c.syncWait, wait, applied, c.wait, c.applied)
		}
	}
}
