package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/contracttest"
	"github.com/resilience4go/resilience4go/internal/ctxtest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// shadowRun is a limiter under test and what it did: the calls it refused and the
// rejection events it published (those in shadow mode apart).
type shadowRun struct {
	clk      *clock.Manual
	l        *ratelimit.Limiter
	refused  int
	events   int
	shadowed int
}

func newShadowRun(t *testing.T, shadow bool, opts ...ratelimit.Option) *shadowRun {
	r := &shadowRun{clk: clock.NewManual()}
	r.l = newLimiter(t, r.clk, append(opts, ratelimit.Shadow(shadow), ratelimit.OnEvent(func(e policy.Event) {
		if e.Kind != ratelimit.EventRejected {
			return
		}
		if e.Attr("shadow").Any() == true {
			r.shadowed++
		} else {
			r.events++
		}
	}))...)
	return r
}

// step makes one call, op, for n permits, and counts a refusal; a reservation's delay must
// be 0 in shadow mode.
func (r *shadowRun) step(t *testing.T, op, n int) {
	var err error
	switch op {
	case 0:
		if !r.l.TryAcquire() {
			r.refused++
		}
		return
	case 1:
		err = r.l.TryAcquireN(n)
	case 2:
		var res ratelimit.Reservation
		res, err = r.l.ReserveN(n)
		if err == nil && r.l.Config().Shadow {
			assert.Zero(t, res.Delay(), "shadow mode delays nothing")
		}
	case 3:
		err = r.l.AcquireN(context.Background(), n)
	}
	if err != nil {
		r.refused++
	}
}

// SPEC SH-1, SH-2, SH-3: the same random sequence of calls (single and weighted, some for
// more than the burst, some reserved ahead within MaxWait) through a limiter with and
// without shadow mode: in shadow mode none is refused, ShadowRejected and the events
// marked shadow count exactly the refusals of the other, and the state (Snapshot) is the
// same after every call. With further windows too.
func TestSH1_ShadowRejectsNothingAndCountsWhatItWouldHave(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []ratelimit.Option
		ops  int // the calls used: 0..ops-1 (AcquireN only without MaxWait: it would wait)
	}{
		{"plain", []ratelimit.Option{ratelimit.Permits(5), ratelimit.Period(time.Second)}, 4},
		{"maxWait", []ratelimit.Option{ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.MaxWait(300 * time.Millisecond)}, 3},
		{"windows", []ratelimit.Option{ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Windows("12/5s")}, 4},
		{"windows+maxWait", []ratelimit.Option{ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.Windows("12/5s"), ratelimit.MaxWait(time.Second)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, 7))
				off, on := newShadowRun(t, false, tc.opts...), newShadowRun(t, true, tc.opts...)
				for range 300 {
					d := time.Duration(rng.IntN(250)) * time.Millisecond
					off.clk.Advance(d)
					on.clk.Advance(d)
					op, n := rng.IntN(tc.ops), 1+rng.IntN(6) // 6: more than the burst
					off.step(t, op, n)
					on.step(t, op, n)
					want := off.l.Snapshot()
					want.ShadowRejected = uint64(off.refused)
					require.Equal(t, want, on.l.Snapshot(), "seed %d", seed)
				}
				require.Positive(t, off.refused)
				assert.Zero(t, on.refused, "shadow mode refuses nothing")
				assert.Equal(t, off.refused, off.events)
				assert.Zero(t, off.shadowed)
				assert.Equal(t, off.refused, on.shadowed, "each would-be refusal is published, marked shadow")
				assert.Zero(t, on.events)
				assert.Zero(t, off.l.Snapshot().ShadowRejected)
			}
		})
	}
}

// SPEC SH-3: a call that would wait for its permit reserves it, as without shadow mode,
// and runs at once: Acquire returns without the clock moving, Waiting stays 0, and the
// next permit is where it would be.
func TestSH3_ShadowDelaysNothing(t *testing.T) {
	clk := clock.NewManual()
	var waited int
	l := newLimiter(t, clk, ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.MaxWait(time.Second),
		ratelimit.Shadow(true), ratelimit.OnEvent(func(e policy.Event) {
			if e.Kind == ratelimit.EventWaited {
				waited++
			}
		}))
	require.NoError(t, l.AcquireN(context.Background(), 2))
	require.NoError(t, l.Acquire(context.Background()), "would wait 500ms: runs at once")
	assert.Zero(t, l.Snapshot().Waiting)
	assert.Zero(t, l.Snapshot().ShadowRejected, "it would have been let through")
	assert.Zero(t, waited)
	res, err := l.Reserve()
	require.NoError(t, err)
	assert.Zero(t, res.Delay(), "would wait 1s: no delay")
	require.NoError(t, l.Acquire(context.Background()), "would wait 1.5s, more than MaxWait: let through")
	assert.Equal(t, uint64(1), l.Snapshot().ShadowRejected)
	clk.Advance(time.Second)
	assert.True(t, l.TryAcquire())
	assert.Equal(t, uint64(2), l.Snapshot().ShadowRejected, "two permits reserved ahead: none free at 1s")
	clk.Advance(500 * time.Millisecond)
	assert.True(t, l.TryAcquire())
	assert.Equal(t, uint64(2), l.Snapshot().ShadowRejected, "the next one at 1.5s")
}

// SPEC SH-4: shadow mode is a configuration key, and a reload changes it live: the calls
// decided after the change are let through, those after the change back refused again;
// the change is published naming "shadow".
func TestSH4_ShadowChangesLive(t *testing.T) {
	clk := clock.NewManual()
	var changed [][]string
	l := newLimiter(t, clk, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.OnEvent(func(e policy.Event) {
		if e.Kind == policy.ConfigChanged {
			changed = append(changed, e.Changed)
		}
	}))
	require.True(t, l.TryAcquire())
	require.False(t, l.TryAcquire())
	cfg := l.Config()
	cfg.Shadow = true
	require.NoError(t, l.Reconfigure(cfg))
	assert.True(t, l.TryAcquire())
	assert.True(t, l.TryAcquire())
	assert.Equal(t, uint64(2), l.Snapshot().ShadowRejected)
	cfg.Shadow = false
	require.NoError(t, l.Reconfigure(cfg))
	assert.False(t, l.TryAcquire(), "the shadowed calls took nothing, and the permit is still spent")
	clk.Advance(time.Second)
	assert.True(t, l.TryAcquire(), "the next permit where it would be")
	assert.Equal(t, [][]string{{"shadow"}, {"shadow"}}, changed)
}

// SPEC SH-5: a call let through in shadow mode is recorded as what happened, admitted
// without a wait; its would-be refusal reaches the recorder as an EventRejected marked
// shadow, with the rejection it would have had. A decorated call runs.
func TestSH5_ShadowRecordsTheCallAsAdmitted(t *testing.T) {
	l, _, rec := observedLimiter(t, ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.Shadow(true))
	calls := 0
	call := ratelimit.NewPolicy[int](l).Decorate(func(context.Context) (int, error) { calls++; return calls, nil })
	for range 3 {
		_, err := call(context.Background())
		require.NoError(t, err)
	}
	assert.Equal(t, 3, calls)
	contracttest.RequireOutcomes(t, rec, admitted0, admitted0, admitted0)
	ev := rec.Events()
	require.Len(t, ev, 2)
	for _, e := range ev {
		assert.Equal(t, ratelimit.EventRejected, e.Kind)
		assert.Equal(t, true, e.Attr("shadow").Any())
		assert.ErrorIs(t, e.Err, ratelimit.ErrExceeded)
		assert.Equal(t, time.Second, e.RetryAfter)
	}
	assert.Equal(t, uint64(2), l.Snapshot().ShadowRejected)
}

// SPEC SH-6: a keyed limiter in shadow mode refuses nothing, through any of its methods,
// counts what it would have refused over all keys (ShadowRejected), and each key's quota
// moves as without shadow mode. Decide admits, reporting Remaining 0 and no Retry-After
// for a call it would have refused.
func TestSH6_KeyedShadow(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 11))
		offClk, onClk := clock.NewManual(), clock.NewManual()
		opts := []ratelimit.Option{ratelimit.Permits(3), ratelimit.Period(time.Second)}
		off := newKeyed[string](t, offClk, opts...)
		var shadowed int
		on := newKeyed[string](t, onClk, append(opts, ratelimit.Shadow(true), ratelimit.OnEvent(func(e policy.Event) {
			if e.Kind == ratelimit.EventRejected && e.Attr("shadow").Any() == true && e.Key != "" {
				shadowed++
			}
		}))...)
		refused := 0
		for range 300 {
			d := time.Duration(rng.IntN(200)) * time.Millisecond
			offClk.Advance(d)
			onClk.Advance(d)
			key, n := []string{"a", "b", "c"}[rng.IntN(3)], 1+rng.IntN(4)
			switch rng.IntN(4) {
			case 0:
				a, b := off.TryAcquire(key, n), on.TryAcquire(key, n)
				require.NoError(t, b)
				refused += count(a)
			case 1:
				a, b := off.Acquire(context.Background(), key, n), on.Acquire(context.Background(), key, n)
				require.NoError(t, b)
				refused += count(a)
			case 2:
				_, a := off.Reserve(key, n)
				_, b := on.Reserve(key, n)
				require.NoError(t, b)
				refused += count(a)
			case 3:
				a, b := off.Decide(context.Background(), key), on.Decide(context.Background(), key)
				require.True(t, b.Admitted)
				if !a.Admitted {
					refused++
					assert.Zero(t, b.Remaining)
					assert.Zero(t, b.RetryAfter)
					a.Admitted, a.RetryAfter = true, 0
				}
				assert.Equal(t, a, b)
			}
			for _, k := range []string{"a", "b", "c"} {
				require.Equal(t, off.AvailablePermits(k), on.AvailablePermits(k))
			}
		}
		require.Positive(t, refused)
		assert.Equal(t, uint64(refused), on.ShadowRejected())
		assert.Equal(t, refused, shadowed)
		assert.Zero(t, off.ShadowRejected())
	}
}

// count is 1 for an error, 0 for nil.
func count(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

// SPEC SH-7: what is not the limiter's decision is refused in shadow mode as before: a nil
// or done context (with the limiter's rejection, as without shadow mode), a count below
// 1; a call for more than the burst is let through.
func TestSH7_ShadowLeavesBadCallsRefused(t *testing.T) {
	l := newLimiter(t, clock.NewManual(), ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.Shadow(true))
	for _, over := range ctxtest.OverContexts() {
		err := l.Acquire(over.Ctx)
		require.ErrorIs(t, err, over.Want, over.Name)
		require.ErrorIs(t, err, ratelimit.ErrExceeded, "%s: the rejection it has without shadow mode", over.Name)
	}
	var ce *policy.ConfigError
	require.ErrorAs(t, l.TryAcquireN(0), &ce)
	assert.Zero(t, l.Snapshot().ShadowRejected)
	require.NoError(t, l.TryAcquireN(3))
	assert.Equal(t, uint64(1), l.Snapshot().ShadowRejected)
}

// SPEC SH-8: a call let through in shadow mode allocates nothing, and neither do the
// admitted ones.
func TestSH8_ShadowAllocatesNothing(t *testing.T) {
	l := newLimiter(t, clock.NewManual(), ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.Shadow(true),
		ratelimit.OnEvent(func(policy.Event) {}))
	assert.Zero(t, testing.AllocsPerRun(100, func() { l.TryAcquire() }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = l.Acquire(context.Background()) }))
	assert.Positive(t, l.Snapshot().ShadowRejected)
}

// SPEC SH-1, SH-3: with a backend, a call its store refuses is let through in shadow
// mode, by every method, and one its store grants with a delay runs at once; each refusal
// is counted and published marked shadow.
func TestSH1_ShadowWithABackend(t *testing.T) {
	st := &scriptedStore{grant: backend.Grant{Verdict: backend.Refused, Wait: time.Second}}
	var log []policy.Event
	l := backedLimiter(t, st, &log)
	cfg := l.Config()
	cfg.Shadow = true
	require.NoError(t, l.Reconfigure(cfg))
	assert.True(t, l.TryAcquire())
	require.NoError(t, l.Acquire(context.Background()))
	res, err := l.Reserve()
	require.NoError(t, err)
	assert.Zero(t, res.Delay())
	res.Cancel() // holds nothing: nothing to give back
	assert.Equal(t, uint64(3), l.Snapshot().ShadowRejected)
	shadowed := 0
	for _, e := range log {
		if e.Kind == ratelimit.EventRejected && e.Attr("shadow").Any() == true {
			shadowed++
			assert.Equal(t, time.Second, e.RetryAfter)
		}
	}
	assert.Equal(t, 3, shadowed)

	st.grant = backend.Grant{Verdict: backend.Admitted, Wait: time.Second, At: int64(time.Second), Prev: 1, Next: 2}
	require.NoError(t, l.Acquire(context.Background()), "would wait 1s: runs at once")
	res, err = l.Reserve()
	require.NoError(t, err)
	assert.Zero(t, res.Delay())
	assert.Equal(t, uint64(3), l.Snapshot().ShadowRejected)
	assert.Zero(t, l.Snapshot().Waiting)
	cfg.Shadow = false
	require.NoError(t, l.Reconfigure(cfg))
	res, err = l.Reserve()
	require.NoError(t, err)
	assert.Equal(t, time.Second, res.Delay(), "the delay shadow mode did not wait")
}

// SPEC SH-6, SH-1, SH-3: keys with limits of their own (PerKey), further windows and a
// MaxWait: the same random sequence of calls through a keyed limiter with and without
// shadow mode leaves every key with the same permits, ShadowRejected and the events
// marked shadow count exactly the refusals of the other, and nothing reserved in shadow
// mode is delayed; reservations canceled in both give back the same.
func TestSH6_KeyedShadowWithOwnLimits(t *testing.T) {
	for _, extra := range [][]ratelimit.Option{
		nil,
		{ratelimit.MaxWait(500 * time.Millisecond)},
		{ratelimit.Windows("10/10s")},
		{ratelimit.Windows("10/10s"), ratelimit.MaxWait(500 * time.Millisecond)},
	} {
		for seed := range uint64(10) {
			rng := rand.New(rand.NewPCG(seed, 11))
			offClk, onClk := clock.NewManual(), clock.NewManual()
			opts := append([]ratelimit.Option{ratelimit.Permits(3), ratelimit.Period(time.Second),
				keyed.PerKey(func(k string) string {
					if k == "b" {
						return "2/1s, 5/10s"
					}
					if k == "c" {
						return "5/2s"
					}
					return ""
				})}, extra...)
			off := newKeyed[string](t, offClk, opts...)
			var shadowed int
			on := newKeyed[string](t, onClk, append(opts, ratelimit.Shadow(true), ratelimit.OnEvent(func(e policy.Event) {
				if e.Kind == ratelimit.EventRejected && e.Attr("shadow").Any() == true && e.Key != "" {
					shadowed++
				}
			}))...)
			refused := 0
			for i := range 300 {
				d := time.Duration(rng.IntN(200)) * time.Millisecond
				offClk.Advance(d)
				onClk.Advance(d)
				key, n := []string{"a", "b", "c"}[rng.IntN(3)], 1+rng.IntN(4)
				if rng.IntN(2) == 0 {
					n = 1
				}
				switch rng.IntN(5) {
				case 0:
					a, b := off.TryAcquire(key, n), on.TryAcquire(key, n)
					require.NoError(t, b)
					refused += count(a)
				case 1:
					_, a := off.Reserve(key, n)
					res, b := on.Reserve(key, n)
					require.NoError(t, b)
					assert.Zero(t, res.Delay(), "shadow mode delays nothing")
					refused += count(a)
				case 2:
					_, a := off.Reserve(key, n)
					_, b := on.Reserve(key, n)
					require.NoError(t, b)
					refused += count(a)
				case 3:
					a, b := off.DecideN(context.Background(), key, n), on.DecideN(context.Background(), key, n)
					require.True(t, b.Admitted)
					if !a.Admitted {
						refused++
						assert.Zero(t, b.Remaining)
						assert.Zero(t, b.RetryAfter)
						a.Admitted, a.RetryAfter = true, 0
					}
					assert.Equal(t, a, b, "seed %d step %d", seed, i)
				case 4:
					res, a := off.Reserve(key, n)
					resb, b := on.Reserve(key, n)
					require.NoError(t, b)
					refused += count(a)
					if a == nil && rng.IntN(2) == 0 {
						res.Cancel()
						resb.Cancel()
					}
				}
				for _, k := range []string{"a", "b", "c"} {
					require.Equal(t, off.AvailablePermits(k), on.AvailablePermits(k), "seed %d step %d key %s", seed, i, k)
				}
			}
			require.Positive(t, refused)
			assert.Zero(t, off.ShadowRejected())
			assert.Equal(t, uint64(refused), on.ShadowRejected())
			assert.Equal(t, refused, shadowed)
		}
	}
}
