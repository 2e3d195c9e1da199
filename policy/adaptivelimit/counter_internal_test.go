package adaptivelimit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
)

// SPEC AL-12, AL-19: the samples of calls let in after the limit last changed count,
// however many admissions ago it changed: the admission counter wraps at 2³², and a limit
// that held for 2³¹ admissions or more (a limit at MaxLimit, a lightly loaded service) was
// taken for a change to come, and every sample was left out, for the next 2³¹ admissions
// (fault). The counter is set as that many admissions would leave it.
func TestAL12_SamplesCountAfterTheCounterWraps(t *testing.T) {
	for _, since := range []uint64{0, 1 << 30, 1<<31 - 1, 1 << 31, 1<<31 + 1, 3 << 30, 1<<32 - 5, 1<<32 - 1} {
		l, err := New(WithClock(clock.NewManual()), UseAlgorithm(AIMD), InitialLimit(10), MaxLimit(10), BackoffRatio(0.5))
		require.NoError(t, err)
		l.s.SetCounter(uint32(since)) // since admissions since the limit was set, none in flight
		for range 10 {
			p, ok := l.TryAcquire()
			require.True(t, ok)
			p.Record(context.DeadlineExceeded)
		}
		assert.Less(t, l.Limit(), 10, "%d admissions since the limit was set: the drops lower it", since)
	}
}

// SPEC AL-12: a call let in before the limit changed still has its sample left out when
// the counter wraps between its admission and the change.
func TestAL12_SampleOfACallLetInBeforeTheChangeIsLeftOutAcrossTheWrap(t *testing.T) {
	l, err := New(WithClock(clock.NewManual()), UseAlgorithm(AIMD), MinLimit(5), InitialLimit(10), MaxLimit(10), BackoffRatio(0.5))
	require.NoError(t, err)
	const start = 1<<32 - 2 // the counter 2 admissions before it wraps, as the round began
	l.s.SetCounter(start)
	l.epoch.Store(start)
	l.roundStart = start
	old, ok := l.TryAcquire()
	require.True(t, ok)
	p, ok := l.TryAcquire() // let in as the counter wraps to 0
	require.True(t, ok)
	p.Record(context.DeadlineExceeded) // a round of one drop: the limit changes
	require.Equal(t, 5, l.Limit())
	require.Zero(t, l.s.Counter(), "the counter wrapped")
	old.Record(context.DeadlineExceeded)
	assert.Equal(t, 5, l.Limit())
	assert.Zero(t, l.cur.n, "the sample of the call let in before the change was left out")
}
