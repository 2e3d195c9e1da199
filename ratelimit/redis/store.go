package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/gcra"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// store is one limiter's state in Redis: its key and the arguments of its script. Whether
// Redis is known to be down is the backend's, shared by all its stores.
type store struct {
	b        *Backend
	keys     []string // the limiter's one key
	id       string
	permits  int
	interval int64 // T in ns, the emission interval, rounded up
	tau      int64 // (permits-1)·T in ns
	clk      clock.Clock
	listener policy.Listener
	tS, tN   int64 // T as a pair
	tauS     int64 // tau as a pair
	tauN     int64
}

var _ ratelimit.Store = (*store)(nil)

func newStore(b *Backend, bd ratelimit.Binding) *store {
	t := int64(bd.Config.EmissionInterval())
	tau := satMul(int64(bd.Config.Permits-1), t)
	clk := bd.Clock
	if clk == nil {
		clk = clock.System()
	}
	s := &store{
		b:        b,
		keys:     []string{b.Key(bd.ID)},
		id:       bd.ID,
		permits:  bd.Config.Permits,
		interval: t,
		tau:      tau,
		clk:      clk,
		listener: bd.Listener,
	}
	s.tS, s.tN = split(t)
	s.tauS, s.tauN = split(tau)
	return s
}

// Reserve runs the script's reserve: one round trip. See ratelimit.Store.
func (s *store) Reserve(ctx context.Context, maxWait time.Duration) (ratelimit.Grant, error) {
	mwS, mwN := split(int64(max(maxWait, 0)))
	res, err := s.run(ctx, "r", s.tS, s.tN, s.tauS, s.tauN, mwS, mwN)
	if err != nil {
		if ctx.Err() != nil {
			return ratelimit.Grant{}, ctx.Err()
		}
		return s.failed(), nil
	}
	switch {
	case len(res) == 3 && res[0] == 0:
		return ratelimit.Grant{Outcome: ratelimit.Refused, Wait: time.Duration(join(res[1], res[2]))}, nil
	case len(res) == 9 && res[0] == 1:
		return ratelimit.Grant{Outcome: ratelimit.Reserved, Wait: time.Duration(join(res[1], res[2])),
			Token: ratelimit.Token{Prev: join(res[3], res[4]), Next: join(res[5], res[6]), At: join(res[7], res[8])}}, nil
	}
	s.fail(fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0]))
	return s.failed(), nil
}

// Cancel runs the script's cancel: one round trip; the script restores the TAT only if it
// is still t.Next (no later reservation stands behind it) and t.At has not passed on the
// server's clock.
func (s *store) Cancel(ctx context.Context, t ratelimit.Token) {
	pS, pN := split(max(t.Prev, 0))
	nS, nN := split(max(t.Next, 0))
	aS, aN := split(max(t.At, 0))
	_, _ = s.run(ctx, "c", pS, pN, nS, nN, aS, aN)
}

// Available reads the TAT and the server's clock: one round trip.
func (s *store) Available(ctx context.Context) (int, bool) {
	res, err := s.run(ctx, "a")
	if err == nil && len(res) != 5 {
		err = fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0])
		s.fail(err)
	}
	if err != nil {
		switch s.b.cfg.OnFailure {
		case FailOpen:
			return s.permits, true
		case FailClosed:
			return 0, true
		}
		return 0, false
	}
	if res[0] == 0 {
		return s.permits, true
	}
	return gcra.Available(join(res[1]-res[3], res[2]-res[4]), s.interval, s.tau, s.permits), true
}

// failed is the grant of the failure policy.
func (s *store) failed() ratelimit.Grant {
	switch s.b.cfg.OnFailure {
	case FailOpen:
		return ratelimit.Grant{Outcome: ratelimit.Unlimited}
	case FailClosed:
		return ratelimit.Grant{Outcome: ratelimit.Refused, Wait: time.Duration(s.interval)}
	}
	return ratelimit.Grant{Outcome: ratelimit.Local}
}

// errDown: Redis is known to be down and no probe is due; the call was not tried.
var errDown = fmt.Errorf("ratelimit/redis: backend down")

// run runs the script with op and args, within the backend's timeout. While Redis is down
// it returns errDown at once, except for one call per probe interval and backend (whatever
// the limiter or key), which tries Redis.
// A failure other than ctx's end marks Redis down; a success marks it up.
func (s *store) run(ctx context.Context, op string, args ...int64) ([]int64, error) {
	if s.b.down.Load() {
		due := s.b.probeAt.Load()
		if int64(s.clk.Now()) < due || !s.b.probeAt.CompareAndSwap(due, int64(s.clk.Now())+int64(s.b.cfg.ProbeInterval)) {
			return nil, errDown
		}
	}
	argv := make([]any, 1+len(args))
	argv[0] = op
	for i, a := range args {
		argv[i+1] = a
	}
	res, err := s.exec(ctx, argv)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
		}
		return nil, err
	}
	if s.b.down.Load() && s.b.down.CompareAndSwap(true, false) {
		s.listener.Publish(policy.Event{Kind: policy.RateLimiterBackendRecovered, Instance: s.id, At: s.clk.Now()})
	}
	return res, nil
}

// exec runs the script once, bounded by the timeout: EVALSHA, and EVAL when the server
// does not know the script (after a restart or SCRIPT FLUSH).
func (s *store) exec(ctx context.Context, argv []any) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.cfg.Timeout)
	defer cancel()
	if s.b.bounded {
		return script.Run(ctx, s.b.client, s.keys, argv...).Int64Slice()
	}
	// The client ignores the deadline once a command is on the wire: leave its goroutine
	// behind at the timeout; it ends with the client's own read timeout.
	type result struct {
		res []int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := script.Run(ctx, s.b.client, s.keys, argv...).Int64Slice()
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fail marks Redis down: the next probe is one interval away. The first failure after a
// success publishes RateLimiterBackendFailed.
func (s *store) fail(err error) {
	now := s.clk.Now()
	s.b.probeAt.Store(int64(now) + int64(s.b.cfg.ProbeInterval))
	if s.b.down.CompareAndSwap(false, true) {
		s.listener.Publish(policy.Event{Kind: policy.RateLimiterBackendFailed, Instance: s.id, At: now, Err: err})
	}
}

// satMul returns a·b for a, b ≥ 0, saturating at the largest int64.
func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}
