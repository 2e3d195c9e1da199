package throttle_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/plot"
	"github.com/resilience4go/resilience4go/internal/plottest"
	"github.com/resilience4go/resilience4go/policy/throttle"
)

// The simulation's phases, in seconds of the manual clock: the backend accepts every
// call, then every other call it receives (50%), then at most 25 calls a second (a
// quarter of the offered load), then every call again.
const (
	simHalf      = 20
	simCapacity  = 60
	simRecovered = 100
	simEnd       = 130
	simRate      = 100 // calls offered per second, evenly spaced
	simWindow    = 10 * time.Second
)

// simSecond is what one second of the simulation saw.
type simSecond struct{ offered, sent, accepted, rejected int }

// simulate runs the offered load through a throttle (K 2, a 10s window, a seeded random
// source) in front of the backend of the phases above, on a manual clock, and returns
// each second's counts.
func simulate(t *testing.T) []simSecond {
	clk := clock.NewManual()
	th, err := throttle.New(throttle.WithClock(clk), throttle.Window(simWindow),
		throttle.RandomSource(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	secs := make([]simSecond, simEnd)
	received, acceptedThisSecond := 0, 0
	backend := func(_ context.Context, sec int) (int, error) {
		secs[sec].sent++
		received++
		ok := true
		switch {
		case sec >= simRecovered:
		case sec >= simCapacity:
			ok = acceptedThisSecond < simRate/4
		case sec >= simHalf:
			ok = received%2 == 0
		}
		if !ok {
			return 0, errRefused
		}
		acceptedThisSecond++
		secs[sec].accepted++
		return 1, nil
	}
	call := throttle.DecorateFunc(th, backend)
	for sec := range simEnd {
		acceptedThisSecond = 0
		for range simRate {
			secs[sec].offered++
			if _, err := call(context.Background(), sec); err != nil && err != errRefused {
				require.ErrorIs(t, err, throttle.ErrThrottled)
				secs[sec].rejected++
			}
			clk.Advance(time.Second / simRate)
		}
	}
	return secs
}

// sums returns the counts of the seconds [from, to).
func sums(secs []simSecond, from, to int) (s simSecond) {
	for _, x := range secs[from:to] {
		s.offered += x.offered
		s.sent += x.sent
		s.accepted += x.accepted
		s.rejected += x.rejected
	}
	return s
}

// SPEC TH-11: the throttle's promise, simulated (manual clock, seeded random source): over every
// window once the backend's acceptance has settled, the calls sent are within 10% of K
// (2) times the calls accepted, when the backend accepts half of the calls it receives
// and when it accepts a quarter of the offered load; and once it accepts every call
// again, throttling stops within one window. The chart on the docs page is drawn from
// this run.
func TestSimulation_SentSettlesAtKTimesAccepts(t *testing.T) {
	secs := simulate(t)
	w := int(simWindow / time.Second)

	assert.Zero(t, sums(secs, 0, simHalf).rejected, "a healthy backend: nothing rejected")
	for _, phase := range []struct {
		name     string
		from, to int
	}{
		{"50% accepted", simHalf + w, simCapacity},
		{"a quarter of the offered load accepted", simCapacity + w, simRecovered},
	} {
		for end := phase.from + w; end <= phase.to; end++ {
			s := sums(secs, end-w, end)
			bound := 2 * float64(s.accepted)
			assert.InEpsilon(t, bound, float64(s.sent), 0.10,
				"%s, window [%ds, %ds): sent %d, K×accepted %.0f", phase.name, end-w, end, s.sent, bound)
		}
	}
	capacity := sums(secs, simCapacity+w, simRecovered)
	assert.InEpsilon(t, 0.5, float64(capacity.rejected)/float64(capacity.offered), 0.10,
		"at a quarter of the offered load, about half the calls are rejected locally")

	lastRejection := -1
	for sec, s := range secs {
		if s.rejected > 0 {
			lastRejection = sec
		}
	}
	require.GreaterOrEqual(t, lastRejection, simRecovered-1, "it throttled until the backend recovered")
	assert.Less(t, lastRejection, simRecovered+w, "throttling stops within one window of the recovery")
	after := sums(secs, simRecovered+w, simEnd)
	assert.Equal(t, after.offered, after.sent)
	t.Logf("last rejection in second %d; phases: %+v %+v", lastRejection,
		sums(secs, simHalf+w, simCapacity), capacity)

	series := func(name string, of func(simSecond) int, scale float64, dashed bool) plot.Series {
		s := plot.Series{Name: name, Dashed: dashed}
		for sec, x := range secs {
			s.Points = append(s.Points, plot.Point{X: float64(sec), Y: scale * float64(of(x))})
		}
		return s
	}
	plottest.Check(t, "throttle.svg", plot.Chart{
		Title:  fmt.Sprintf("Client-side throttle, K = 2, %v window: backend accepts all, 50%%, 25/s, all", simWindow),
		XLabel: "time (s)", YLabel: "calls per second",
		Series: []plot.Series{
			series("offered", func(s simSecond) int { return s.offered }, 1, false),
			series("sent", func(s simSecond) int { return s.sent }, 1, false),
			series("accepted", func(s simSecond) int { return s.accepted }, 1, false),
			series("K × accepted", func(s simSecond) int { return s.accepted }, 2, true),
		},
	})
}
