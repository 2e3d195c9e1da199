package contracttest

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/hedge"
)

// An empty recorder reports nothing, as nil slices and zero counts.
func TestRecorderEmpty(t *testing.T) {
	var r Recorder
	assert.Nil(t, r.Events())
	assert.Nil(t, r.Of(bulkhead.EventRejected))
	assert.Nil(t, r.Kinds())
	assert.Zero(t, r.Count(bulkhead.EventRejected))
}

// The recorder keeps events in the order published; Of, Count and Kinds read them by
// kind; Events returns a copy that later events and the caller's writes leave alone.
func TestRecorderOrderAndKinds(t *testing.T) {
	var r Recorder
	var l policy.Listener = r.Listen
	boom := errors.New("boom")
	l(policy.Event{Kind: hedge.EventHedged, Attempt: 2})
	l(policy.Event{Kind: hedge.EventSkipped})
	l(policy.Event{Kind: hedge.EventHedged, Attempt: 3})
	l(policy.Event{Kind: hedge.EventFailed, Err: boom})

	events := r.Events()
	require.Len(t, events, 4)
	assert.Equal(t, []policy.EventKind{hedge.EventHedged, hedge.EventSkipped, hedge.EventHedged, hedge.EventFailed}, r.Kinds())
	assert.Equal(t, []policy.Event{{Kind: hedge.EventHedged, Attempt: 2}, {Kind: hedge.EventHedged, Attempt: 3}}, r.Of(hedge.EventHedged))
	assert.Equal(t, 2, r.Count(hedge.EventHedged))
	assert.Equal(t, 1, r.Count(hedge.EventFailed))
	assert.Zero(t, r.Count(hedge.EventWon))
	assert.Nil(t, r.Of(hedge.EventWon))
	assert.Same(t, boom, r.Of(hedge.EventFailed)[0].Err)

	events[0].Attempt = 99
	r.Listen(policy.Event{Kind: hedge.EventWon})
	assert.Len(t, events, 4, "a copy: a later event does not show in it")
	assert.Equal(t, 2, r.Events()[0].Attempt, "a copy: the caller's writes do not show in the recorder")
	assert.Len(t, r.Events(), 5)
}

// Listen and the readers may run on many goroutines at once (run with -race): no event
// is lost.
func TestRecorderConcurrent(t *testing.T) {
	var r Recorder
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r.Listen(policy.Event{Kind: bulkhead.EventWaited, Attempt: g*each + i})
				if i%50 == 0 {
					assert.GreaterOrEqual(t, r.Count(bulkhead.EventWaited), i+1, "its own events are there")
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, goroutines*each, r.Count(bulkhead.EventWaited))
	seen := map[int]bool{}
	for _, e := range r.Events() {
		seen[e.Attempt] = true
	}
	assert.Len(t, seen, goroutines*each, "every event once")
}
