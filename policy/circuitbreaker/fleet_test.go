package circuitbreaker_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker/internal/fleet"
)

// fakeFleet is a fleet in memory: it records what the breaker hands it and lets the test
// play the other instances through follow.
type fakeFleet struct {
	mu        sync.Mutex
	follow    func(fleet.State, bool)
	proposed  []string
	trialErr  error
	granted   bool
	trialS    fleet.State
	recorded  []fleet.Outcome
	recordS   fleet.State
	recordErr error
}

func (f *fakeFleet) Join(_ string, follow func(fleet.State, bool)) (fleet.Member, error) {
	f.follow = follow
	return f, nil
}

func (f *fakeFleet) Propose(from fleet.State, to string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proposed = append(f.proposed, from.State+"@"+string(rune('0'+from.Epoch))+"->"+to)
}

func (f *fakeFleet) Trial(context.Context, uint64, int) (fleet.State, bool, error) {
	return f.trialS, f.granted, f.trialErr
}

func (f *fakeFleet) Record(_ context.Context, _ uint64, o fleet.Outcome) (fleet.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recorded = append(f.recorded, o)
	return f.recordS, f.recordErr
}

func newFleetBreaker(t *testing.T, f *fakeFleet, events *[]policy.Event) (*cb.Breaker, *clock.Manual) {
	clk := clock.NewManual()
	b, err := cb.New(cb.Name("inventory"), cb.WithFleet(f), cb.WithClock(clk), cb.SlidingWindowSize(2),
		cb.MinimumCalls(2), cb.WaitInOpen(time.Minute), cb.PermittedInHalfOpen(2),
		cb.OnEvent(func(e policy.Event) {
			if e.Kind == cb.EventTransition {
				*events = append(*events, e)
			}
		}))
	require.NoError(t, err)
	return b, clk
}

func fails(context.Context) (int, error) { return 0, errBoom }
func works(context.Context) (int, error) { return 1, nil }

func do(b *cb.Breaker, fn func(context.Context) (int, error)) error {
	_, err := cb.NewPolicy[int](b).Decorate(fn)(context.Background())
	return err
}

// SPEC CB-5: a transition of the breaker's own is proposed from the fleet state it left;
// one from the fleet is followed, with fleet=true, and not proposed back.
func TestFleet_ProposesItsOwnAndFollowsTheFleets(t *testing.T) {
	f := &fakeFleet{}
	var events []policy.Event
	b, _ := newFleetBreaker(t, f, &events)
	require.ErrorIs(t, do(b, fails), errBoom)
	require.ErrorIs(t, do(b, fails), errBoom)
	assert.Equal(t, []string{"closed@0->open"}, f.proposed)
	require.Len(t, events, 1)
	assert.Equal(t, slog.KindAny, events[0].Attr("fleet").Kind(), "its own transition has no fleet attribute")

	f.follow(fleet.State{State: cb.Open, Epoch: 1}, false) // its own, confirmed: no change
	f.follow(fleet.State{State: cb.Closed, Epoch: 2}, false)
	assert.Equal(t, cb.Closed, b.Snapshot().State)
	require.Len(t, events, 2)
	assert.True(t, events[1].Attr("fleet").Bool())
	f.follow(fleet.State{State: cb.Open, Epoch: 1}, true)  // older: ignored
	f.follow(fleet.State{State: cb.Open, Epoch: 2}, false) // same epoch, not read: ignored
	assert.Equal(t, cb.Closed, b.Snapshot().State)
	f.follow(fleet.State{State: cb.Open, Epoch: 2}, true) // read: the fleet wins
	assert.Equal(t, cb.Open, b.Snapshot().State)
	assert.Equal(t, []string{"closed@0->open"}, f.proposed, "followed transitions are not proposed")

	require.NoError(t, b.TransitionTo(cb.ForcedOpen))
	f.follow(fleet.State{State: cb.Closed, Epoch: 3}, false)
	assert.Equal(t, cb.ForcedOpen, b.Snapshot().State, "a state set by hand is not followed")
}

// SPEC CB-6: half-open trials need the fleet's ticket, and the fleet decides.
func TestFleet_TrialsNeedATicket(t *testing.T) {
	f := &fakeFleet{}
	var events []policy.Event
	b, clk := newFleetBreaker(t, f, &events)
	f.follow(fleet.State{State: cb.Open, Epoch: 1}, false)
	clk.Advance(time.Minute)

	f.trialS = fleet.State{State: cb.HalfOpen, Epoch: 2}
	require.ErrorIs(t, do(b, works), cb.ErrOpen, "no ticket: refused")
	assert.Equal(t, 0, b.Snapshot().BufferedCalls)

	f.granted = true
	f.recordS = fleet.State{State: cb.HalfOpen, Epoch: 2}
	require.NoError(t, do(b, works))
	require.NoError(t, do(b, works))
	assert.Equal(t, cb.HalfOpen, b.Snapshot().State, "the local trials do not decide while the fleet answers")
	require.Len(t, f.recorded, 2)
	assert.Equal(t, fleet.Outcome{Permitted: 2, FailedToOpen: 1, SlowToOpen: 2}, f.recorded[0],
		"50% of 2 trials: 1 failure opens; 100%: 2 slow calls")

	f.follow(fleet.State{State: cb.Closed, Epoch: 3}, false)
	assert.Equal(t, cb.Closed, b.Snapshot().State)
}

// SPEC CB-8: a fleet that does not answer leaves the half-open to the breaker alone.
func TestFleet_UnansweredTrialsDecideLocally(t *testing.T) {
	f := &fakeFleet{trialErr: assert.AnError}
	var events []policy.Event
	b, clk := newFleetBreaker(t, f, &events)
	f.follow(fleet.State{State: cb.Open, Epoch: 1}, false)
	clk.Advance(time.Minute)
	require.NoError(t, do(b, works))
	require.NoError(t, do(b, works))
	assert.Equal(t, cb.Closed, b.Snapshot().State)
	assert.Empty(t, f.recorded)
	assert.Equal(t, []string{"half-open@1->closed"}, f.proposed)
}
