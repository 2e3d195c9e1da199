package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

// The failure policy: Redis killed, paused or unreachable in the middle of a test.

const (
	callTimeout = 50 * time.Millisecond
	probeEvery  = 100 * time.Millisecond
	// slack is what a loaded test machine (or the race detector) may add to a call that
	// gives up at callTimeout: 440ms was seen on a busy 2-core machine. Each test that
	// bounds a call by callTimeout+slack makes the wrong outcome (waiting for the client's
	// own read timeout, or one timeout per key) take several times longer than that.
	slack = time.Second
)

// events records the events of one test.
type events struct {
	mu   sync.Mutex
	list []policy.Event
}

func (e *events) add(ev policy.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

// kinds returns the kinds recorded so far, of the backend events only.
func (e *events) backend() []policy.EventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []policy.EventKind
	for _, ev := range e.list {
		if ev.Kind == backend.EventFailed || ev.Kind == backend.EventRecovered {
			out = append(out, ev.Kind)
		}
	}
	return out
}

func (e *events) first(kind policy.EventKind) (policy.Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.list {
		if ev.Kind == kind {
			return ev, true
		}
	}
	return policy.Event{}, false
}

// reset forgets the events recorded so far.
func (e *events) reset() {
	e.mu.Lock()
	e.list = nil
	e.mu.Unlock()
}

// onRedis returns once l has an answer from Redis, and forgets the events so far: the
// first call (a new connection, the script loaded) may take longer than the timeout on a
// loaded machine, which makes Redis down until the next probe.
func onRedis(t *testing.T, l *ratelimit.Limiter, log *events) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_ = l.Snapshot() // a call to Redis
		if k := log.backend(); len(k) == 0 || k[len(k)-1] == backend.EventRecovered {
			break
		}
		require.True(t, time.Now().Before(deadline), "Redis did not answer within 5s")
		time.Sleep(10 * time.Millisecond) // waiting for the next probe on the real clock
	}
	log.reset()
}

// verifyNoLeaks checks, when t ends and after its other cleanups (servers stopped,
// clients closed), that t left no goroutine behind. Call it first in the test.
func verifyNoLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// quickClient returns a client of addr that gives up on a refused connection at once (no
// dial or command retries), closed when t ends.
func quickClient(t *testing.T, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr, DB: testDB, ContextTimeoutEnabled: true,
		MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Redis killed in the middle of a test: the limiter falls back to its in-process state
// at once (a killed server refuses connections), publishes RateLimiterBackendFailed once,
// and when Redis is back it recovers, publishes RateLimiterBackendRecovered, and shares
// Redis's state again. Events reach the registry's listeners; no call panics or hangs; no
// goroutine leaks. The timeout is generous, so that the calls made while Redis is up do
// not fail on a loaded machine. (Fault: with a 50ms timeout, a call after the recovery
// that a busy machine slowed down was a second failure.)
func TestFailover_RedisKilledThenBack(t *testing.T) {
	verifyNoLeaks(t)
	srv := redistest.Start(t)
	c := quickClient(t, srv.Addr())
	b, err := rlredis.New(c, rlredis.Timeout(ruleTimeout), rlredis.ProbeInterval(probeEvery))
	require.NoError(t, err)
	var log events
	reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(b), resilience.WithEventListener(log.add))
	require.NoError(t, err)
	call, err := resilience.Wrap(reg, "GeoAPI.Geocode", func(context.Context) (int, error) { return 1, nil },
		resilience.RateLimiter(ratelimit.Name("failover"), ratelimit.Permits(5), ratelimit.Period(50*time.Second)))
	require.NoError(t, err)
	h, err := reg.RateLimiter("failover")
	require.NoError(t, err)
	ctx := context.Background()

	// Redis up: two permits spent in Redis.
	for range 2 {
		_, err := call(ctx)
		require.NoError(t, err)
	}
	assert.Equal(t, 3, h.Snapshot().AvailablePermits)
	require.Equal(t, int64(1), c.Exists(ctx, rlredis.Key(b, "failover")).Val())

	srv.Kill()

	// Redis down: the in-process limiter of the same configuration takes over at once, with
	// its own full burst of 5; no call takes longer than the timeout.
	var passed int
	for i := range 20 {
		var err error
		d := timed(func() { _, err = call(ctx) })
		assert.Less(t, d, callTimeout+slack, "call %d took %v", i, d)
		switch {
		case err == nil:
			passed++
		case !errors.Is(err, ratelimit.ErrExceeded):
			t.Fatalf("call %d: unexpected error %v", i, err)
		}
	}
	assert.Equal(t, 5, passed, "the local fallback limits this instance to its own burst")
	assert.Zero(t, h.Snapshot().AvailablePermits, "the fallback's state")
	assert.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend())
	failed, _ := log.first(backend.EventFailed)
	assert.Equal(t, "failover", failed.Instance)
	assert.Equal(t, srv.Addr(), failed.Attr("node").String(), "a single server is the one node (RL-18)")
	assert.Error(t, failed.Err)

	// Redis back, empty (no persistence): the next probe recovers.
	require.NoError(t, srv.Restart())
	deadline := time.Now().Add(5 * time.Second)
	for len(log.backend()) < 2 && time.Now().Before(deadline) {
		_ = h.Snapshot()                  // a call to the store
		time.Sleep(10 * time.Millisecond) // waiting for the next probe on the real clock
	}
	require.Equal(t, []policy.EventKind{backend.EventFailed, backend.EventRecovered}, log.backend())
	recovered, _ := log.first(backend.EventRecovered)
	assert.Equal(t, srv.Addr(), recovered.Attr("node").String())
	assert.Equal(t, 5, h.Snapshot().AvailablePermits, "Redis's state: a fresh key")
	_, err = call(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Exists(ctx, rlredis.Key(b, "failover")).Val(), "the state lives in Redis again")
	assert.Equal(t, 4, h.Snapshot().AvailablePermits)
}

// pauseScripts holds every script on the server behind admin (CLIENT PAUSE WRITE, which
// holds EVAL and EVALSHA) until unpauseScripts, or for a minute; t's cleanup unpauses it.
// Unlike PAUSE ALL, it lets CLIENT UNPAUSE through at once.
func pauseScripts(t *testing.T, admin *goredis.Client) {
	t.Helper()
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", time.Minute.Milliseconds(), "WRITE").Err())
	t.Cleanup(func() { unpauseScripts(t, admin) })
}

func unpauseScripts(t *testing.T, admin *goredis.Client) {
	t.Helper()
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "UNPAUSE").Err())
}

// Redis too slow (its scripts paused): a call gives up at the timeout and takes the
// fallback, both with a client that bounds its I/O by the context (ContextTimeoutEnabled)
// and with one that does not, whose calls the backend bounds itself. No call waits longer
// than the timeout while Redis is paused; when the pause ends, the limiter recovers.
// The test makes no call after it has seen the recovery: on a loaded machine any call can
// take longer than the 50ms timeout, and that is a new failure, rightly published.
// (Fault: the test kept calling Redis for a while after the pause, and on a busy machine
// saw a second failure after the recovery.)
func TestFailover_RedisTooSlow(t *testing.T) {
	for name, opts := range map[string]*goredis.Options{
		"ContextTimeoutEnabled": {ContextTimeoutEnabled: true},
		"client timeouts only":  {ReadTimeout: 10 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			verifyNoLeaks(t)
			srv := redistest.Start(t)
			opts.Addr = srv.Addr()
			c := goredis.NewClient(opts)
			t.Cleanup(func() { _ = c.Close() })
			admin := newClient(t, srv.Addr())
			b, err := rlredis.New(c, rlredis.Timeout(callTimeout), rlredis.ProbeInterval(probeEvery))
			require.NoError(t, err)
			var log events
			l := limiter(t, b, "slow", ratelimit.Permits(3), ratelimit.Period(30*time.Second), ratelimit.OnEvent(log.add))
			onRedis(t, l, &log)
			require.True(t, l.TryAcquire())

			pauseScripts(t, admin)
			var ok bool
			d := timed(func() { ok = l.TryAcquire() })
			assert.True(t, ok, "the local fallback has its full burst")
			assert.GreaterOrEqual(t, d, callTimeout, "waited for Redis up to the timeout")
			assert.Less(t, d, callTimeout+slack, "and no longer")
			assert.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend())
			ev, _ := log.first(backend.EventFailed)
			assert.ErrorIs(t, ev.Err, context.DeadlineExceeded)

			// Three probe intervals of calls while paused: the probes time out, the other
			// calls take the fallback at once.
			for start := time.Now(); time.Since(start) < 3*probeEvery; {
				d := timed(func() { l.TryAcquire() })
				require.Less(t, d, callTimeout+slack, "no call hangs while Redis is paused")
			}
			assert.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend(), "no answer while paused")

			unpauseScripts(t, admin)
			deadline := time.Now().Add(5 * time.Second)
			for len(log.backend()) < 2 && time.Now().Before(deadline) {
				_ = l.Snapshot()                  // a call to the store
				time.Sleep(10 * time.Millisecond) // waiting for the next probe on the real clock
			}
			assert.Equal(t, []policy.EventKind{backend.EventFailed, backend.EventRecovered}, log.backend())
		})
	}
}

// A server that accepts connections and never answers: each call still returns within the
// timeout, with either kind of client.
func TestFailover_SilentServerNeverHangs(t *testing.T) {
	verifyNoLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	conns.Go(func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, cn)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		conns.Wait()
		mu.Lock()
		for _, cn := range open {
			_ = cn.Close()
		}
		mu.Unlock()
	})
	for name, opts := range map[string]*goredis.Options{
		"ContextTimeoutEnabled": {ContextTimeoutEnabled: true, Protocol: 2, DisableIdentity: true},
		"client timeouts only":  {ReadTimeout: 10 * time.Second, Protocol: 2, DisableIdentity: true},
	} {
		opts.Addr = ln.Addr().String()
		c := goredis.NewClient(opts)
		b, err := rlredis.New(c, rlredis.Timeout(callTimeout), rlredis.ProbeInterval(probeEvery))
		require.NoError(t, err)
		l := limiter(t, b, "silent", ratelimit.Permits(2), ratelimit.Period(time.Hour), ratelimit.MaxWait(time.Second))
		for i := range 5 {
			d := timed(func() { _, _ = l.Reserve() })
			assert.Less(t, d, callTimeout+slack, "%s: call %d took %v", name, i, d)
		}
		assert.Zero(t, l.Snapshot().AvailablePermits, "%s: the fallback's state", name)
		_ = c.Close()
	}
}

// FailOpen lets every call pass while Redis is unreachable; FailClosed refuses every call
// with the limiter's own rejection and a retry-after of T. Each publishes one
// RateLimiterBackendFailed.
func TestFailover_FailOpenAndFailClosed(t *testing.T) {
	verifyNoLeaks(t)
	// Nothing listens there: connections are refused.
	c := goredis.NewClient(&goredis.Options{Addr: redistest.ClosedAddr(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })

	open, err := rlredis.New(c, rlredis.OnFailure(backend.Admitted), rlredis.Timeout(callTimeout))
	require.NoError(t, err)
	var openLog events
	lo := limiter(t, open, "open", ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.OnEvent(openLog.add))
	for range 20 {
		require.True(t, lo.TryAcquire())
		require.NoError(t, lo.Acquire(context.Background()))
		r, err := lo.Reserve()
		require.NoError(t, err)
		assert.Zero(t, r.Delay())
		r.Cancel()
	}
	assert.Equal(t, 1, lo.Snapshot().AvailablePermits)
	assert.Equal(t, []policy.EventKind{backend.EventFailed}, openLog.backend())

	closed, err := rlredis.New(c, rlredis.OnFailure(backend.Refused), rlredis.Timeout(callTimeout))
	require.NoError(t, err)
	var closedLog events
	lc := limiter(t, closed, "closed", ratelimit.Permits(10), ratelimit.Period(time.Second), ratelimit.OnEvent(closedLog.add))
	rejection := lc.TryAcquireN(1) // the limiter's one rejection
	require.ErrorIs(t, rejection, ratelimit.ErrExceeded)
	for range 20 {
		require.False(t, lc.TryAcquire())
		assert.Same(t, rejection, lc.Acquire(context.Background()))
		r, err := lc.Reserve()
		assert.Same(t, rejection, err)
		assert.Equal(t, 100*time.Millisecond, r.Delay(), "retry-after T")
	}
	assert.Zero(t, lc.Snapshot().AvailablePermits)
	kinds := closedLog.backend()
	require.NotEmpty(t, kinds)
	assert.Equal(t, []policy.EventKind{backend.EventFailed}, kinds)
	rejected, ok := closedLog.first(ratelimit.EventRejected)
	require.True(t, ok)
	assert.ErrorIs(t, rejected.Err, ratelimit.ErrExceeded)
}

// Redis's health is the backend's: when Redis is paused, the first call of a keyed
// limiter finds it down, and the calls of the other keys take the local fallback at once
// instead of each waiting for the timeout.
func TestFailover_HealthIsSharedByEveryKey(t *testing.T) {
	verifyNoLeaks(t)
	srv := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	admin := newClient(t, srv.Addr())
	b, err := rlredis.New(c, rlredis.Timeout(callTimeout), rlredis.ProbeInterval(time.Hour))
	require.NoError(t, err)
	var log events
	k, err := keyed.New[string](ratelimit.Name(rlredis.UniquePrefix(t)+"keyed"), ratelimit.WithBackend(b),
		ratelimit.Permits(5), ratelimit.Period(time.Second), ratelimit.OnEvent(log.add))
	require.NoError(t, err)
	require.True(t, k.TryAcquire("warm", 1) == nil, "Redis up")

	pauseScripts(t, admin)
	d := timed(func() {
		for i := range 60 { // one timeout per key would take 3s
			require.True(t, k.TryAcquire(fmt.Sprint("client-", i), 1) == nil, "the local fallback admits")
		}
	})
	assert.Less(t, d, callTimeout+slack, "one timeout for the backend, not one per key")
	assert.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend(), "one failure event")
}

// Limiters that share a backend may have clocks with different origins. Redis's outage is
// measured on the clock of the limiter that found it: a limiter whose clock reads later
// neither probes at once nor pushes the next probe beyond the other clock's reach; one
// call per interval of that clock probes, whichever limiter makes it. (Fault: each
// limiter compared its own clock with a probe time set on another's.)
func TestFailover_ProbeIntervalOnOneClock(t *testing.T) {
	verifyNoLeaks(t)
	c := goredis.NewClient(&goredis.Options{Addr: redistest.ClosedAddr(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	var cmds commands
	c.AddHook(&cmds)
	b, err := rlredis.New(c, rlredis.Timeout(callTimeout), rlredis.ProbeInterval(time.Second))
	require.NoError(t, err)
	early, late := clock.NewManual(), clock.NewManual()
	late.Advance(time.Hour)
	var log events
	a := limiter(t, b, "early", ratelimit.Permits(100), ratelimit.Period(time.Second),
		ratelimit.WithClock(early), ratelimit.OnEvent(log.add))
	z := limiter(t, b, "late", ratelimit.Permits(100), ratelimit.Period(time.Second),
		ratelimit.WithClock(late), ratelimit.OnEvent(log.add))

	require.True(t, a.TryAcquire(), "Redis down: Local")
	require.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend())
	require.Equal(t, []string{"evalsha"}, cmds.take())
	for range 5 {
		require.True(t, z.TryAcquire())
	}
	assert.Empty(t, cmds.take(), "no probe due on the clock that found the outage")
	early.Advance(time.Second)
	for range 5 {
		require.True(t, z.TryAcquire())
	}
	assert.Equal(t, []string{"evalsha"}, cmds.take(), "one probe per interval, whoever makes it")
	early.Advance(time.Second)
	for range 5 {
		require.True(t, a.TryAcquire())
	}
	assert.Equal(t, []string{"evalsha"}, cmds.take(), "and the next an interval later")
	assert.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend())
}
