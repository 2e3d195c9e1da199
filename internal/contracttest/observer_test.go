package contracttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/observe"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// Marked contexts carry their marker, also through their children; an unmarked context
// has none, and a nil one reads as "nil context". Markers keeps the order and the length.
func TestMarkers(t *testing.T) {
	type other struct{}
	parent := context.WithValue(context.Background(), other{}, "kept")
	m := Mark(parent, "call1")
	assert.Equal(t, "call1", MarkOf(m))
	assert.Equal(t, "kept", m.Value(other{}), "a child of its parent")
	assert.Equal(t, "marker", MarkOf(MarkedContext()))
	child, cancel := context.WithCancel(Marked("x"))
	defer cancel()
	assert.Equal(t, "x", MarkOf(child))
	assert.Nil(t, MarkOf(context.Background()))
	var none context.Context
	assert.Equal(t, "nil context", MarkOf(none))

	assert.Equal(t, []any{"marker", nil, "nil context", "call1"},
		Markers([]context.Context{MarkedContext(), context.Background(), nil, m}))
	assert.Equal(t, []any{}, Markers(nil))
}

// failRecorder is a testing.TB that keeps the failures instead of failing the test.
type failRecorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (f *failRecorder) Helper() {}

func (f *failRecorder) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *failRecorder) FailNow() { f.fatal = true; panic(f) }

// run calls check on f and reports whether it failed and whether it stopped.
func (f *failRecorder) run(check func(t testing.TB)) (failed, stopped bool) {
	func() {
		defer func() {
			if r := recover(); r != nil && r != any(f) {
				panic(r)
			}
		}()
		check(f)
	}()
	return len(f.errors) > 0, f.fatal
}

// RequireOutcomes accepts outcomes equal field by field, errors matched by errors.Is;
// it fails on another field, an error where none is wanted or the wrong one, and stops
// on another count.
func TestRequireOutcomes(t *testing.T) {
	boom := errors.New("boom")
	rec := &Observed{}
	rec.Record(context.Background(), observe.Outcome{Result: observe.ResultAdmitted, Wait: time.Second})
	rec.Record(context.Background(), observe.Outcome{Result: observe.ResultRejected, Err: fmt.Errorf("wrapped: %w", boom)})
	good := []observe.Outcome{{Result: observe.ResultAdmitted, Wait: time.Second}, {Result: observe.ResultRejected, Err: boom}}
	RequireOutcomes(t, rec, good...)

	for name, c := range map[string]struct {
		want    []observe.Outcome
		stopped bool
	}{
		"another wait":    {[]observe.Outcome{{Result: observe.ResultAdmitted}, good[1]}, false},
		"another error":   {[]observe.Outcome{good[0], {Result: observe.ResultRejected, Err: errors.New("other")}}, false},
		"no error wanted": {[]observe.Outcome{good[0], {Result: observe.ResultRejected}}, false},
		"an error wanted": {[]observe.Outcome{{Result: observe.ResultAdmitted, Wait: time.Second, Err: boom}, good[1]}, false},
		"another result":  {[]observe.Outcome{good[0], {Result: observe.ResultFailed, Err: boom}}, false},
		"fewer":           {good[:1], true},
		"more":            {append(append([]observe.Outcome(nil), good...), good[0]), true},
	} {
		t.Run(name, func(t *testing.T) {
			f := &failRecorder{TB: t}
			failed, stopped := f.run(func(tb testing.TB) { RequireOutcomes(tb, rec, c.want...) })
			assert.True(t, failed, "%v", f.errors)
			assert.Equal(t, c.stopped, stopped)
		})
	}
}

// NopObserver hands out a recorder that drops everything and allocates nothing;
// NilObserver hands out none and counts how often it was asked, also concurrently.
func TestNopAndNilObservers(t *testing.T) {
	var obs observe.Observer = NopObserver{}
	r := obs.Instrument(bulkhead.Layer, "bh")
	require.NotNil(t, r)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		rec := NopObserver{}.Instrument(retry.Layer, "r")
		rec.Record(ctx, observe.Outcome{Result: observe.ResultSucceeded})
		rec.Event(ctx, policy.Event{Kind: retry.EventAttempt})
	}))

	none := &NilObserver{}
	assert.Zero(t, none.Asked())
	obs = none
	assert.Nil(t, obs.Instrument(timeout.Layer, "t"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_ = none.Instrument(timeout.Layer, "t")
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 401, none.Asked())
}

// CountingClock counts the reads of Now, and only those, until Reset; it passes every
// call on to the clock it wraps; its count holds with many goroutines reading.
func TestCountingClock(t *testing.T) {
	m := clock.NewManual()
	c := NewCountingClock(m)
	var clk clock.Clock = c
	assert.Zero(t, c.Reads())
	m.Advance(time.Second)
	assert.Equal(t, time.Second, clk.Now())
	ran := false
	clk.AfterFunc(time.Millisecond, func() { ran = true })
	m.Advance(time.Millisecond)
	assert.True(t, ran, "AfterFunc goes to the wrapped clock")
	assert.NoError(t, clk.Sleep(context.Background(), 0))
	assert.Equal(t, 1, c.Reads(), "only Now is counted")
	c.Reset()
	assert.Zero(t, c.Reads())

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_ = clk.Now()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 400, c.Reads())

	sys := NewCountingClock(clock.System())
	before := sys.Now()
	assert.GreaterOrEqual(t, sys.Now(), before, "the system clock, read through it")
	assert.Equal(t, 2, sys.Reads())
}
