package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// measureSlack bounds how late a call may record its admission time after the limiter
// admitted it (the goroutine may be descheduled in between, more so under -race). It is
// generous next to the emission interval of 100ms: a limiter that admitted one call too
// many would break the bounds below by far more.
const measureSlack = 25 * time.Millisecond

// The whole example, on the real clock: about 5s.
func TestQuota(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), &out, 1)
	require.NoError(t, err)
	t.Log("\n" + out.String())
	require.Equal(t, 9, rep.Permits)
	require.Equal(t, 900*time.Millisecond, rep.Period)

	// Phase 1: every call got through, and the server never had to refuse one.
	assert.Zero(t, rep.TooMany, "the server answered 429")
	assert.Equal(t, calls, rep.OK)
	require.Len(t, rep.Admitted, calls)
	assert.Contains(t, out.String(), fmt.Sprintf("server: %d × 200, 0 × 429\n", calls))

	// SPEC RL-3: the burst passes at once; RL-7: the rest waited for their turn.
	assert.Equal(t, calls, rep.AtOnce+rep.Waited)
	assert.GreaterOrEqual(t, rep.AtOnce, rep.Permits)
	assert.Positive(t, rep.Waited)
	assert.Contains(t, out.String(), "  0.0s #########  9\n", "the burst of 9 is in the first bucket")

	// SPEC RL-5: any window [a_i, a_j] of admissions holds at most permits + floor(d/T)
	// calls, for the client's limiter (with the measurement slack) and for the server's
	// quota (10 + floor(d/T)).
	for i := range rep.Admitted {
		for j := i; j < len(rep.Admitted); j++ {
			n := j - i + 1
			d := rep.Admitted[j] - rep.Admitted[i]
			require.LessOrEqual(t, n, rep.Permits+int((d+measureSlack)/interval),
				"%d calls admitted within %v (calls %d..%d)", n, d, i, j)
			require.LessOrEqual(t, n, quotaBurst+int((d+measureSlack)/interval),
				"%d calls within %v break the quota", n, d)
		}
	}
	// SPEC RL-4: after the burst, one call every 100ms at most: the run takes at least
	// (60 - 10) × 100ms, and it must not take much longer either.
	assert.GreaterOrEqual(t, rep.Elapsed, (calls-quotaBurst)*interval-measureSlack)
	assert.GreaterOrEqual(t, rep.Elapsed, time.Duration(calls-rep.Permits)*interval-measureSlack)
	assert.Less(t, rep.Elapsed, 10*time.Second)

	// Phase 2 (SPEC RL-6): the calls above the burst are rejected by the client; the server
	// sees only the admitted ones, and refuses none.
	assert.Equal(t, quickCalls, rep.QuickAdmitted+rep.QuickRejected)
	assert.GreaterOrEqual(t, rep.QuickAdmitted, rep.Permits)
	assert.Positive(t, rep.QuickRejected)
	assert.Equal(t, rep.QuickAdmitted, rep.QuickServer, "rejected calls never reach the server")
	assert.Zero(t, rep.QuickTooMany)
}

func TestTimeline(t *testing.T) {
	ms := time.Millisecond
	assert.Nil(t, timeline(nil, 100*ms))
	assert.Equal(t, []int{3, 0, 1, 1}, timeline([]time.Duration{0, 1 * ms, 99 * ms, 250 * ms, 300 * ms}, 100*ms))
}

func TestReserveOutOfRange(t *testing.T) {
	for _, r := range []int{-1, quotaBurst} {
		_, err := run(context.Background(), io.Discard, r)
		assert.Error(t, err, "reserve %d", r)
	}
}
