package adaptivelimit_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// shadowRun is an adaptive limit under test and the permits of its calls in flight, by
// number.
type shadowRun struct {
	l        *adaptivelimit.Limiter
	pending  map[int]*adaptivelimit.Permit
	refused  int
	shadowed int
}

func newShadowRun(t *testing.T, algorithm string, shadow bool) (*shadowRun, func(time.Duration)) {
	r := &shadowRun{pending: map[int]*adaptivelimit.Permit{}}
	l, clk, _ := newManual(t, adaptivelimit.UseAlgorithm(algorithm), adaptivelimit.InitialLimit(4),
		adaptivelimit.MinLimit(1), adaptivelimit.MaxLimit(8), adaptivelimit.LatencyThreshold(300*time.Millisecond),
		adaptivelimit.Shadow(shadow), adaptivelimit.OnEvent(func(e policy.Event) {
			if e.Kind == adaptivelimit.EventRejected && e.Attr("shadow").Any() == true {
				r.shadowed++
			}
		}))
	r.l = l
	return r, clk.Advance
}

func (r *shadowRun) start(t *testing.T, id int, p policy.Priority) {
	pm, err := r.l.Acquire(policy.WithPriority(context.Background(), p))
	if err != nil {
		require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
		r.refused++
		return
	}
	r.pending[id] = &pm
}

func (r *shadowRun) complete(id int, err error) {
	if p, ok := r.pending[id]; ok {
		p.Record(err)
		delete(r.pending, id)
	}
}

// SPEC SH-1, SH-2: the same random sequence of calls of every priority, which start and
// complete, some failing, in a random order while the clock moves, through an adaptive
// limit with and without shadow mode, for each algorithm: in shadow mode every call is
// let in, ShadowRejected and the events marked shadow count exactly the rejections of the
// other, and the state (Snapshot: limit, calls in flight, latencies, shed calls) is the
// same after every step: the calls let through in shadow mode leave no sample.
func TestSH1_AdaptiveLimitShadowRejectsNothingAndCountsWhatItWouldHave(t *testing.T) {
	boom := errors.New("boom")
	for _, algorithm := range []string{"aimd", "gradient2", "vegas"} {
		for seed := range uint64(10) {
			rng := rand.New(rand.NewPCG(seed, 9))
			off, advOff := newShadowRun(t, algorithm, false)
			on, advOn := newShadowRun(t, algorithm, true)
			for id := range 600 {
				switch k := rng.IntN(10); {
				case k < 2:
					d := time.Duration(rng.IntN(400)) * time.Millisecond
					advOff(d)
					advOn(d)
				case k < 6 || len(off.pending) == 0:
					p := policy.Priority(rng.IntN(4))
					off.start(t, id, p)
					on.start(t, id, p)
				default:
					var ids []int
					for k := range off.pending {
						ids = append(ids, k)
					}
					pick := ids[rng.IntN(len(ids))]
					var err error
					if rng.IntN(4) == 0 {
						err = boom
					}
					for k := range on.pending { // a call let through in shadow mode leaves no sample
						if _, held := off.pending[k]; !held && rng.IntN(2) == 0 {
							on.complete(k, boom)
						}
					}
					off.complete(pick, err)
					on.complete(pick, err)
				}
				want := off.l.Snapshot()
				want.ShadowRejected = uint64(off.refused)
				require.Equal(t, want, on.l.Snapshot(), "%s, seed %d, step %d", algorithm, seed, id)
			}
			require.Positive(t, off.refused)
			assert.Zero(t, on.refused, "shadow mode rejects nothing")
			assert.Equal(t, off.refused, on.shadowed)
		}
	}
}

// SPEC SH-4: a reload changes an adaptive limit's shadow mode live, and nothing else: a
// change of another attribute is refused with R4C-REG-012.
func TestSH4_AdaptiveLimitShadowChangesLive(t *testing.T) {
	l, _, rec := newManual(t, fixed(1)...)
	held, err := l.Acquire(context.Background())
	require.NoError(t, err)
	_, err = l.Acquire(context.Background())
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	cfg := l.Config()
	cfg.Shadow = true
	require.NoError(t, adaptivelimit.SetShadow(l, cfg))
	assert.True(t, l.Config().Shadow)
	p, err := l.Acquire(context.Background())
	require.NoError(t, err)
	p.Record(nil) // gives back nothing
	assert.Equal(t, 1, l.Snapshot().InFlight)
	assert.Equal(t, uint64(1), l.Snapshot().ShadowRejected)
	cfg.MaxLimit = 5
	require.ErrorContains(t, adaptivelimit.SetShadow(l, cfg), "R4C-REG-012")
	cfg.MaxLimit = 1
	cfg.Shadow = false
	require.NoError(t, adaptivelimit.SetShadow(l, cfg))
	_, err = l.Acquire(context.Background())
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	held.Record(nil)
	var changed [][]string
	for _, e := range rec.Events() {
		if e.Kind == policy.ConfigChanged {
			changed = append(changed, e.Changed)
		}
	}
	assert.Equal(t, [][]string{{"shadow"}, {"shadow"}}, changed)
}
