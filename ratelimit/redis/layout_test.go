package redis_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
	"github.com/resilience4go/resilience4go/resilience"
)

// commands counts the commands a client sends, by name.
type commands struct {
	mu    sync.Mutex
	names []string
}

func (c *commands) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *commands) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.mu.Lock()
		c.names = append(c.names, cmd.Name())
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (c *commands) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.mu.Lock()
		c.names = append(c.names, "pipeline")
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (c *commands) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.names
	c.names = nil
	return out
}

// Every call of the limiter is one command, EVALSHA: one round trip. After SCRIPT FLUSH
// (or a restart), the first call also sends EVAL, which loads the script again.
func TestOneRoundTripPerCall(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		var cmds commands
		c.AddHook(&cmds)
		l := limiter(t, b, "round-trips", ratelimit.Permits(3), ratelimit.Period(3*time.Hour), ratelimit.MaxWait(time.Hour)) // T = 1h
		ctx := context.Background()
		l.TryAcquire() // may load the script: EVALSHA, then EVAL
		cmds.take()

		calls := map[string]func(){
			"TryAcquire admitted": func() { l.TryAcquire() },
			"Acquire admitted":    func() { require.NoError(t, l.Acquire(ctx)) },
			"Reserve delayed":     func() { _, _ = l.Reserve() },
			"Reserve refused":     func() { _, _ = l.Reserve() },
			"TryAcquire refused":  func() { l.TryAcquire() },
			"Snapshot":            func() { l.Snapshot() },
		}
		for _, name := range []string{"TryAcquire admitted", "Acquire admitted", "Reserve delayed", "Reserve refused", "TryAcquire refused", "Snapshot"} {
			calls[name]()
			assert.Equal(t, []string{"evalsha"}, cmds.take(), name)
		}
		r, err := l.Reserve()
		require.Error(t, err)
		cmds.take()
		r.Cancel() // a refused reservation: nothing to cancel, no command
		assert.Empty(t, cmds.take())
		// ... the tail's Cancel is one round trip too
		l2 := limiter(t, b, "round-trips-2", ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.MaxWait(time.Hour))
		require.True(t, l2.TryAcquire())
		r, err = l2.Reserve()
		require.NoError(t, err)
		cmds.take()
		r.Cancel()
		assert.Equal(t, []string{"evalsha"}, cmds.take(), "Cancel")

		require.NoError(t, c.ScriptFlush(ctx).Err())
		cmds.take()
		l.TryAcquire()
		assert.Equal(t, []string{"evalsha", "eval"}, cmds.take(), "NOSCRIPT: EVAL loads the script again")
		l.TryAcquire()
		assert.Equal(t, []string{"evalsha"}, cmds.take())
	})
}

// The key layout: "{" + prefix + name + "}", the TAT in nanoseconds since the epoch, and a
// TTL of the time until the burst is full again. A registry's limiter is keyed by its name.
func TestKeyLayout(t *testing.T) {
	c := newClient(t, redistest.Addr(t))
	requireServer(t, c)
	b, err := rlredis.New(c)
	require.NoError(t, err)
	assert.Equal(t, "{r4c:geocoding}", rlredis.Key(b, "geocoding"))
	assert.True(t, rlredis.HasDefaults(b), "prefix r4c:, 50ms, Local, probe every 1s, one instance")
	prefix := rlredis.UniquePrefix(t)
	b, err = rlredis.New(c, rlredis.Prefix(prefix), rlredis.Timeout(ruleTimeout))
	require.NoError(t, err)
	key := rlredis.Key(b, "geocoding")
	assert.Equal(t, "{"+prefix+"geocoding}", key)

	reg, err := resilience.NewRegistry(resilience.WithRateLimiterBackend(b))
	require.NoError(t, err)
	geocode, err := resilience.Wrap(reg, "GeoAPI.Geocode", func(context.Context) (string, error) { return "ok", nil },
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(10), ratelimit.Period(10*time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	before := time.Now()
	_, err = geocode(ctx)
	require.NoError(t, err)

	v, err := c.Get(ctx, key).Result()
	require.NoError(t, err)
	assert.Regexp(t, `^\d+ 1000000000 10 0$`, v, "the TAT, then the rate it is written at: T in ns, Permits, no conversion yet")
	tat, err := rlredis.TATOf(v)
	require.NoError(t, err)
	assert.InDelta(t, float64(before.Add(time.Second).UnixNano()), float64(tat), float64(time.Second), "now + T, on the server's clock")
	ttl, err := c.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 900*time.Millisecond, "T until the burst is full again")
	assert.LessOrEqual(t, ttl, time.Second)
	for range 9 {
		_, err = geocode(ctx)
		require.NoError(t, err)
	}
	ttl, err = c.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 9*time.Second, "10·T after the whole burst")
	assert.LessOrEqual(t, ttl, 10*time.Second)

	// A spec's own backend wins over the registry's; a nil one keeps the limiter in-process.
	local, err := resilience.Wrap(reg, "GeoAPI.Reverse", func(context.Context) (string, error) { return "ok", nil },
		resilience.RateLimiter(ratelimit.Name("reverse"), ratelimit.Permits(1), ratelimit.Period(time.Hour), ratelimit.WithBackend(nil)))
	require.NoError(t, err)
	_, err = local(ctx)
	require.NoError(t, err)
	assert.Zero(t, c.Exists(ctx, rlredis.Key(b, "reverse")).Val(), "in-process")
}

// Redis Cluster: the key is its own hash tag, so every key of a limiter maps to one slot,
// whatever its name.
func TestKeyIsItsOwnHashTag(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	b, err := rlredis.New(c, rlredis.Prefix("svc:"))
	require.NoError(t, err)
	for _, name := range []string{"geocoding", "SearchAPI.Search", "a b", ""} {
		key := rlredis.Key(b, name)
		assert.True(t, strings.HasPrefix(key, "{") && strings.HasSuffix(key, "}"), key)
		assert.Equal(t, "svc:"+name, key[1:len(key)-1])
	}
}

// SPEC AS-2 with Redis: an async call that must wait is scheduled locally for the delay
// that Redis reserved.
func TestAsyncCallWaitsForItsReservedPermit(t *testing.T) {
	onEach(t, func(t *testing.T) {
		_, b := newShared(t)
		l := limiter(t, b, "async", ratelimit.Permits(1), ratelimit.Period(200*time.Millisecond), ratelimit.MaxWait(time.Second))
		call := ratelimit.NewPolicy[int](l).DecorateAsync(func(context.Context) *async.Future[int] { return async.Completed(1) })
		ctx := context.Background()
		v, err := call(ctx).Await(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, v)
		start := time.Now()
		f := call(ctx)
		_, done, _ := f.Result()
		assert.False(t, done, "waits for its permit")
		v, err = f.Await(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		assert.Greater(t, time.Since(start), 100*time.Millisecond)
	})
}

// New's errors carry R4C codes.
func TestNewValidation(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	for name, tc := range map[string]struct {
		client goredis.Scripter
		opts   []rlredis.Option
		code   string
	}{
		"nil client":             {nil, nil, r4c.BadSpec},
		"negative timeout":       {c, []rlredis.Option{rlredis.Timeout(-time.Millisecond)}, r4c.NegativeDuration},
		"zero timeout":           {c, []rlredis.Option{rlredis.Timeout(0)}, r4c.OutOfRange},
		"negative probe":         {c, []rlredis.Option{rlredis.ProbeInterval(-time.Second)}, r4c.NegativeDuration},
		"zero probe":             {c, []rlredis.Option{rlredis.ProbeInterval(0)}, r4c.OutOfRange},
		"unknown failure policy": {c, []rlredis.Option{rlredis.OnFailure(backend.Verdict(9))}, r4c.OutOfRange},
		"no verdict":             {c, []rlredis.Option{rlredis.OnFailure(backend.Verdict(0))}, r4c.OutOfRange},
		"zero instances":         {c, []rlredis.Option{rlredis.Instances(0)}, r4c.OutOfRange},
		"negative instances":     {c, []rlredis.Option{rlredis.Instances(-3)}, r4c.OutOfRange},
	} {
		b, err := rlredis.New(tc.client, tc.opts...)
		assert.Nil(t, b, name)
		assert.Equal(t, tc.code, r4c.CodeOf(err), "%s: %v", name, err)
	}
}

// SPEC RL-19: the local share is Instances with Local, and the whole quota otherwise.
func TestLocalShare(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	for _, tc := range []struct {
		opts []rlredis.Option
		want int
	}{
		{nil, 1},
		{[]rlredis.Option{rlredis.Instances(3)}, 3},
		{[]rlredis.Option{rlredis.Instances(3), rlredis.OnFailure(backend.Admitted)}, 1},
		{[]rlredis.Option{rlredis.Instances(3), rlredis.OnFailure(backend.Refused)}, 1},
	} {
		b, err := rlredis.New(c, tc.opts...)
		require.NoError(t, err)
		assert.Equal(t, tc.want, b.LocalShare())
	}
}

// A backend whose Bind fails fails the limiter's build with its error.
func TestBindErrorFailsTheBuild(t *testing.T) {
	want := &policy.ConfigError{Code: r4c.BadSpec, Reason: "no"}
	_, err := ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.WithBackend(failingBackend{want}))
	assert.Same(t, want, err)
}

type failingBackend struct{ err error }

func (f failingBackend) Bind(backend.Binding) (backend.Store, error) { return nil, f.err }
func (failingBackend) LocalShare() int                               { return 1 }
