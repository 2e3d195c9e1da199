package retrybudget_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy/retrybudget"
)

// SPEC RB-6, RB-10: an extra attempt allowed before a reload changes the window, and given
// back after it, is given back from the new window: it is not counted again once the
// old time it was counted at leaves the new window, nor kept while the new window holds
// the counts carried over from the old one.
func TestRB6_AnAttemptGivenBackAcrossAWindowChangeStaysGivenBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		changeAt time.Duration // when the reload changes the window
		window   time.Duration // the new window
	}{
		{"longer window", time.Second, 20 * time.Second},
		{"shorter window, the attempt's bucket still in it", 500 * time.Millisecond, 2 * time.Second},
		{"shorter window, the attempt's time already out of it", 5 * time.Second, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, clk, _ := newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0.5))
			at, ok := b.Gate().TryAttempt(context.Background(), "retry", "r", 2)
			require.True(t, ok)
			assert.Equal(t, 1, b.Snapshot().ExtraAttempts)

			clk.AdvanceTo(tc.changeAt)
			c := b.Config()
			c.Window = tc.window
			require.NoError(t, b.Reconfigure(c))
			assert.Equal(t, 1, b.Snapshot().ExtraAttempts, "carried over")

			b.Gate().ReturnAttempt(at) // the retry's wait ended with its context
			assert.Equal(t, 0, b.Snapshot().ExtraAttempts, "given back")
			for range 60 {
				clk.Advance(tc.window / 20)
				require.Equal(t, 0, b.Snapshot().ExtraAttempts, "still given back at %v", clk.Now())
			}
		})
	}
}

// SPEC RB-6: an extra attempt given back after it has left the window, and after a
// reload that changed the window since, takes nothing from the attempts counted since.
func TestRB6_AnAttemptThatLeftTheWindowIsNotGivenBackTwice(t *testing.T) {
	b, clk, _ := newBudget(t, retrybudget.Ratio(0), retrybudget.MinPerSecond(0.5), retrybudget.Window(2*time.Second))
	at, ok := b.Gate().TryAttempt(context.Background(), "retry", "r", 2)
	require.True(t, ok)

	clk.AdvanceTo(5 * time.Second) // the attempt has left the 2s window
	assert.Equal(t, 0, b.Snapshot().ExtraAttempts)
	c := b.Config()
	c.Window = 10 * time.Second
	require.NoError(t, b.Reconfigure(c))
	_, ok = b.Gate().TryAttempt(context.Background(), "retry", "r", 2)
	require.True(t, ok)
	assert.Equal(t, 1, b.Snapshot().ExtraAttempts)

	b.Gate().ReturnAttempt(at)
	assert.Equal(t, 1, b.Snapshot().ExtraAttempts, "the later attempt stays counted")
}
