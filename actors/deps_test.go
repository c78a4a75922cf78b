package actors

import (
	"testing"
	"time"
)

// TestRestartPolicyBackoff: the backoff starts at Initial (within the
// jitter), doubles, is capped at Max, and a zero field takes its default.
func TestRestartPolicyBackoff(t *testing.T) {
	within := func(d, center time.Duration, jitter float64) bool {
		return float64(d) >= float64(center)*(1-jitter) && float64(d) <= float64(center)*(1+jitter)
	}
	b := RestartPolicy{Initial: 100 * time.Millisecond, Max: 350 * time.Millisecond, Jitter: 0.1}.Backoff()
	for i, center := range []time.Duration{100, 200, 350, 350} {
		if d := b.NextBackOff(); !within(d, center*time.Millisecond, 0.1) {
			t.Errorf("delay %d = %v, want %v ±10 %%", i, d, center*time.Millisecond)
		}
	}
	b.Reset()
	if d := b.NextBackOff(); !within(d, 100*time.Millisecond, 0.1) {
		t.Errorf("after Reset: %v, want 100ms ±10 %%", d)
	}
	zero := RestartPolicy{}.Backoff()
	if zero.InitialInterval != 200*time.Millisecond || zero.MaxInterval != 30*time.Second || zero.RandomizationFactor != 0.2 || zero.Multiplier != 2 {
		t.Errorf("zero policy: %+v, want the defaults", zero)
	}
}
