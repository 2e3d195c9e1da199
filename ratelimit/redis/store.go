package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/gcra"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// store is one limiter's state in Redis: its key and the arguments of its script. Whether
// Redis is known to be down is the backend's, shared by all its stores; whether the key
// holds a value the script cannot use is the store's own.
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

	// The key's own health. A data error (the key holds a list, or a string that is not a
	// TAT) says nothing about Redis, which answered: it keeps this key on the failure
	// policy and leaves every other key and limiter on Redis.
	keyBad     atomic.Bool  // the key's last answer was a data error
	keyRetryAt atomic.Int64 // while keyBad: the clock time from which one call may try the key
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

// Reserve runs the script's reserve: one round trip. A nil or done ctx is not sent: its
// error (policy.ErrNilContext for a nil one) is returned at once. See ratelimit.Store.
func (s *store) Reserve(ctx context.Context, maxWait time.Duration) (ratelimit.Grant, error) {
	if err := policy.ContextErr(ctx); err != nil {
		return ratelimit.Grant{}, err
	}
	mwS, mwN := split(int64(max(maxWait, 0)))
	res, err := s.run(ctx, "r", s.tS, s.tN, s.tauS, s.tauN, mwS, mwN)
	if err != nil {
		if err := ctx.Err(); err != nil {
			return ratelimit.Grant{}, err
		}
		return s.failed(), nil
	}
	switch {
	case len(res) == 3 && res[0] == 0:
		return ratelimit.Grant{Outcome: ratelimit.Refused, Wait: time.Duration(max(join(res[1], res[2]), 0))}, nil
	case len(res) == 9 && res[0] == 1:
		return ratelimit.Grant{Outcome: ratelimit.Reserved, Wait: time.Duration(max(join(res[1], res[2]), 0)),
			Token: ratelimit.Token{Prev: join(res[3], res[4]), Next: join(res[5], res[6]), At: join(res[7], res[8])}}, nil
	}
	s.keyFailed(fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0]))
	return s.failed(), nil
}

// Cancel runs the script's cancel: one round trip; the script restores the TAT only if it
// is still t.Next (no later reservation stands behind it) and t.At has not passed on the
// server's clock. A nil or done ctx restores nothing.
func (s *store) Cancel(ctx context.Context, t ratelimit.Token) {
	if policy.ContextErr(ctx) != nil {
		return
	}
	pS, pN := split(max(t.Prev, 0))
	nS, nN := split(max(t.Next, 0))
	aS, aN := split(max(t.At, 0))
	_, _ = s.run(ctx, "c", pS, pN, nS, nN, aS, aN)
}

// Available reads the TAT and the server's clock: one round trip. A nil or done ctx is
// not sent, and has no answer (ok false).
func (s *store) Available(ctx context.Context) (int, bool) {
	if policy.ContextErr(ctx) != nil {
		return 0, false
	}
	res, err := s.run(ctx, "a")
	if err == nil && len(res) != 5 {
		err = fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0])
		s.keyFailed(err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, false
		}
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

var (
	// errDown: Redis is known to be down and no probe is due; the call was not tried.
	errDown = errors.New("ratelimit/redis: backend down")
	// errKeyBad: the key's last answer was a data error and no retry is due; the call was
	// not tried.
	errKeyBad = errors.New("ratelimit/redis: key holds no TAT")
)

// run runs the script with op and args, within the backend's timeout. While the key's
// last answer was a data error, it returns errKeyBad at once, except for one call per
// probe interval, which tries the key again. While Redis is down it returns errDown at
// once, except for one call per probe interval and backend (whatever the limiter or key),
// which tries Redis.
//
// Any answer from Redis marks Redis up; a data error (dataError) marks only the key bad,
// and another failure other than ctx's end marks Redis down.
func (s *store) run(ctx context.Context, op string, args ...int64) ([]int64, error) {
	if s.keyBad.Load() && !due(&s.keyRetryAt, s.clk, s.b.cfg.ProbeInterval) {
		return nil, errKeyBad
	}
	if o := s.b.outage.Load(); o != nil && !due(&o.probeAt, o.clk, s.b.cfg.ProbeInterval) {
		return nil, errDown
	}
	argv := make([]any, 1+len(args))
	argv[0] = op
	for i, a := range args {
		argv[i+1] = a
	}
	res, err := s.exec(ctx, argv)
	switch {
	case err == nil:
		s.answered()
		if s.keyBad.Load() {
			s.keyBad.Store(false)
		}
		return res, nil
	case ctx.Err() != nil:
		// The caller gave up: nothing is learned about Redis or the key.
	case dataError(err):
		s.answered()
		s.keyFailed(fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
	default:
		s.fail(fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
	}
	return nil, err
}

// due reports whether a try is due at *at on clk, and if so takes it: the next one is
// every later. Of the calls that find it due at once, one takes it.
func due(at *atomic.Int64, clk clock.Clock, every time.Duration) bool {
	next := at.Load()
	now := clk.Now()
	return int64(now) >= next && at.CompareAndSwap(next, int64(sat.Add(now, every)))
}

// dataError reports whether err is Redis's answer about the key's value, not about Redis:
// WRONGTYPE (the key holds another type) or the script's BADTAT (a string that is not a
// TAT). Any other error, an error reply such as LOADING, READONLY, OOM or BUSY included,
// is a failure of Redis.
func dataError(err error) bool {
	return goredis.HasErrorPrefix(err, "WRONGTYPE") || goredis.HasErrorPrefix(err, badTAT)
}

// exec runs the script once, bounded by the timeout: EVALSHA, and EVAL when the server
// does not know the script (after a restart or SCRIPT FLUSH).
func (s *store) exec(ctx context.Context, argv []any) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.cfg.Timeout)
	defer cancel()
	if s.b.bounded {
		res, err := script.Run(ctx, s.b.client, s.keys, argv...).Int64Slice()
		return res, tooLate(ctx, err)
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
		// A reply that came in time wins over the timer, even when the caller's goroutine
		// runs late and finds both ready (select would pick either).
		select {
		case r := <-done:
			return r.res, r.err
		default:
		}
		return nil, ctx.Err()
	}
}

// tooLate makes the error of a call that ran out of time match context.DeadlineExceeded,
// whichever timer fired first: the context's, or the socket deadline that the client
// derives from it (a net.Error whose Timeout is true).
func tooLate(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// answered marks Redis up after any answer: the first after a failure publishes
// RateLimiterBackendRecovered.
func (s *store) answered() {
	if o := s.b.outage.Load(); o != nil && s.b.outage.CompareAndSwap(o, nil) {
		s.listener.Publish(policy.Event{Kind: policy.RateLimiterBackendRecovered, Instance: s.id, At: s.clk.Now()})
	}
}

// fail marks Redis down: the next probe is one interval away, on the clock of the limiter
// that found it down. The first failure after a success publishes RateLimiterBackendFailed.
func (s *store) fail(err error) {
	if o := s.b.outage.Load(); o != nil {
		o.probeAt.Store(int64(sat.Add(o.clk.Now(), s.b.cfg.ProbeInterval)))
		return
	}
	now := s.clk.Now()
	o := &outage{clk: s.clk}
	o.probeAt.Store(int64(sat.Add(now, s.b.cfg.ProbeInterval)))
	if s.b.outage.CompareAndSwap(nil, o) {
		s.listener.Publish(policy.Event{Kind: policy.RateLimiterBackendFailed, Instance: s.id, At: now, Err: err})
	}
}

// keyFailed marks the key bad: its next try is one interval away. The first data error
// after a good answer publishes RateLimiterBackendKeyFailed with the key.
func (s *store) keyFailed(err error) {
	now := s.clk.Now()
	s.keyRetryAt.Store(int64(sat.Add(now, s.b.cfg.ProbeInterval)))
	if s.keyBad.CompareAndSwap(false, true) {
		s.listener.Publish(policy.Event{Kind: policy.RateLimiterBackendKeyFailed, Instance: s.id, At: now,
			Key: s.keys[0], Err: err})
	}
}

// satMul returns a·b for a, b ≥ 0, saturating at the largest int64.
func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}
