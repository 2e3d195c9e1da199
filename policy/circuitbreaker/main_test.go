package circuitbreaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/policy"
	cb "github.com/resilience4go/resilience4go/policy/circuitbreaker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	errBoom    = errors.New("boom")
	errIgnored = errors.New("ignored")
	errOther   = errors.New("other")
)

// step is what the test function does: sleep on the manual clock (a slow call), then
// return err.
type step struct {
	sleep time.Duration
	err   error
}

var (
	ok   = step{}
	fail = step{err: errBoom}
)

func slow(d time.Duration, err error) step { return step{sleep: d, err: err} }

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []policy.Event
}

func (r *recorder) listen(e policy.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) all() []policy.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]policy.Event(nil), r.events...)
}

// transitions returns the transition events as "FROM→TO".
func (r *recorder) transitions() []string {
	var out []string
	for _, e := range r.all() {
		if e.Kind == cb.EventTransition {
			out = append(out, e.Attr("from").String()+"→"+e.Attr("to").String())
		}
	}
	return out
}

func (r *recorder) count(k policy.EventKind) int {
	n := 0
	for _, e := range r.all() {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// fixture is a breaker on a manual clock, its events, and a decorated function that
// counts its calls and does what its step says.
type fixture struct {
	t     *testing.T
	clk   *clock.Manual
	b     *cb.Breaker
	rec   *recorder
	calls int
	call  decorate.Func[step, string]
}

func newFixture(t *testing.T, opts ...cb.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, clk: clock.NewManual(), rec: &recorder{}}
	all := append([]cb.Option{cb.WithClock(f.clk), cb.Name("svc"), cb.OnEvent(f.rec.listen)}, opts...)
	b, err := cb.New(all...)
	require.NoError(t, err)
	f.b = b
	f.call = cb.DecorateFunc(b, func(ctx context.Context, s step) (string, error) {
		f.calls++
		if s.sleep > 0 {
			require.NoError(t, f.clk.Sleep(ctx, s.sleep))
		}
		return "done", s.err
	})
	return f
}

// do makes calls with each step and requires that every one was admitted (it returns
// the step's own error, not a rejection).
func (f *fixture) do(steps ...step) {
	f.t.Helper()
	for _, s := range steps {
		v, err := f.call(context.Background(), s)
		require.NotErrorIs(f.t, err, cb.ErrOpen, "call rejected in state %v", f.b.State())
		require.Equal(f.t, "done", v)
		require.Equal(f.t, s.err, err)
	}
}

// rejected makes a call and requires that the breaker refused it without calling the
// function.
func (f *fixture) rejected() *cb.OpenError {
	f.t.Helper()
	before := f.calls
	v, err := f.call(context.Background(), ok)
	require.ErrorIs(f.t, err, cb.ErrOpen)
	require.Empty(f.t, v)
	require.Equal(f.t, before, f.calls, "the function must not be called")
	var oe *cb.OpenError
	require.ErrorAs(f.t, err, &oe)
	return oe
}

func (f *fixture) state() string { return f.b.State() }

func repeat(s step, n int) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = s
	}
	return out
}
