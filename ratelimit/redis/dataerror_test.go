package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/redistest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
	"github.com/resilience4go/resilience4go/ratelimit/internal/gcra"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// A key whose value the script cannot use: a data error, the key's, not Redis's.

// spoil makes key hold a value that is not a TAT: a list, or a string that is not a count
// of nanoseconds.
func spoil(t *testing.T, c goredis.UniversalClient, key, how string) {
	t.Helper()
	ctx := context.Background()
	if how == "list" {
		require.NoError(t, c.RPush(ctx, key, "x").Err())
		return
	}
	require.NoError(t, c.Set(ctx, key, how, 0).Err())
}

// byKind returns the events of one kind recorded so far.
func (e *events) byKind(kind policy.EventKind) []policy.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []policy.Event
	for _, ev := range e.list {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// With FailClosed, a key that holds a list, or "abc", refuses its own calls, and a
// healthy limiter on another key of the same backend keeps every one of its admissions
// in that window: no RateLimiterBackendFailed, the backend is not marked down. The bad
// key publishes one RateLimiterBackendKeyFailed with its key and its error, its value is
// left as it is, and once it is deleted the key is back on Redis. (Fault: one bad key
// made the backend down, and the healthy limiter refused all its calls.)
func TestDataError_StaysWithItsKey(t *testing.T) {
	onEach(t, func(t *testing.T) {
		for _, tc := range []struct{ how, code string }{{"list", "WRONGTYPE"}, {"abc", "BADTAT"}} {
			t.Run(tc.how, func(t *testing.T) {
				c, b := newShared(t, rlredis.OnFailure(backend.Refused), rlredis.ProbeInterval(20*time.Millisecond))
				spoil(t, c, rlredis.Key(b, "bad"), tc.how)
				var log events
				bad := limiter(t, b, "bad", ratelimit.Permits(1000), ratelimit.Period(time.Hour), ratelimit.OnEvent(log.add))
				good := limiter(t, b, "good", ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second),
					ratelimit.OnEvent(log.add))

				calls, admitted, refused := 0, 0, 0
				for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
					if !bad.TryAcquire() {
						refused++
					}
					calls++
					if good.TryAcquire() {
						admitted++
					}
				}
				t.Logf("%d calls each: healthy key admitted %d, bad key refused %d", calls, admitted, refused)
				assert.Equal(t, calls, admitted, "the healthy key keeps every admission")
				assert.Equal(t, calls, refused, "the bad key's calls take the failure policy")
				rejection := bad.Acquire(context.Background())
				require.ErrorIs(t, rejection, ratelimit.ErrExceeded)
				r, err := bad.Reserve()
				assert.Same(t, rejection, err, "the limiter's one rejection")
				assert.Equal(t, gcra.Interval(bad.Config().Permits, bad.Config().Period), r.Delay(), "FailClosed's retry-after is T")
				assert.Zero(t, bad.Snapshot().AvailablePermits)
				assert.Greater(t, good.Snapshot().AvailablePermits, 1_000_000_000-calls-10, "read from Redis")

				rejected := log.byKind(ratelimit.EventRejected)
				require.NotEmpty(t, rejected)
				assert.Equal(t, "bad", rejected[0].Instance)
				assert.Equal(t, gcra.Interval(bad.Config().Permits, bad.Config().Period), rejected[0].RetryAfter, "FailClosed's retry-after")
				assert.Zero(t, rejected[0].Wait)

				assert.Empty(t, log.backend(), "Redis never counted as down")
				failed := log.byKind(backend.EventKeyFailed)
				require.Len(t, failed, 1, "one event until the key answers well again")
				assert.Equal(t, "bad", failed[0].Instance)
				assert.Equal(t, rlredis.Key(b, "bad"), failed[0].Key)
				require.Error(t, failed[0].Err)
				assert.True(t, goredis.HasErrorPrefix(failed[0].Err, tc.code), "%v", failed[0].Err)
				assert.Contains(t, failed[0].Err.Error(), rlredis.Key(b, "bad"))

				typ, err := c.Type(context.Background(), rlredis.Key(b, "bad")).Result()
				require.NoError(t, err)
				assert.Equal(t, map[string]string{"list": "list", "abc": "string"}[tc.how], typ, "never overwritten")
				if tc.how == "abc" {
					assert.Equal(t, "abc", c.Get(context.Background(), rlredis.Key(b, "bad")).Val())
				}

				require.NoError(t, c.Del(context.Background(), rlredis.Key(b, "bad")).Err())
				deadline := time.Now().Add(5 * time.Second)
				for !bad.TryAcquire() && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond) // waiting for the key's next try on the real clock
				}
				assert.Equal(t, 999, bad.Snapshot().AvailablePermits, "back on Redis: one permit spent from a full burst")
				assert.Equal(t, int64(1), c.Exists(context.Background(), rlredis.Key(b, "bad")).Val())
				assert.Len(t, log.byKind(backend.EventKeyFailed), 1)
				assert.Empty(t, log.backend())
			})
		}
	})
}

// The same for the keys of a keyed limiter: alice's key holds a list, bob's calls all
// pass on Redis. With Local, alice's calls are decided by her in-process cell. (Fault: one
// bad key made the backend down for every key.)
func TestDataError_KeyedLimiterKeepsItsOtherKeys(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		var log events
		k, err := keyed.New[string](ratelimit.Name("api"), ratelimit.WithBackend(b),
			ratelimit.Permits(3), ratelimit.Period(time.Hour), ratelimit.OnEvent(log.add))
		require.NoError(t, err)
		spoil(t, c, rlredis.Key(b, "api:alice"), "list")

		assert.Equal(t, 3, keyedAdmittedOf(k, "alice", 10), "Local: alice's in-process burst")
		assert.Equal(t, 3, keyedAdmittedOf(k, "bob", 10), "bob on Redis")
		assert.Equal(t, int64(1), c.Exists(context.Background(), rlredis.Key(b, "api:bob")).Val())
		assert.Equal(t, "list", c.Type(context.Background(), rlredis.Key(b, "api:alice")).Val())

		assert.Empty(t, log.backend())
		failed := log.byKind(backend.EventKeyFailed)
		require.Len(t, failed, 1)
		assert.Equal(t, rlredis.Key(b, "api:alice"), failed[0].Key)
		assert.True(t, goredis.HasErrorPrefix(failed[0].Err, "WRONGTYPE"), "%v", failed[0].Err)
	})
}

func keyedAdmittedOf(k *keyed.Limiter[string], key string, atMost int) int {
	n := 0
	for n < atMost && k.TryAcquire(key, 1) == nil {
		n++
	}
	return n
}

// The values the script takes as a TAT: 1 to 24 decimal digits; every other string is a
// data error, answered before anything is written. (Fault: a string that is not a number
// was read as a TAT of 0, or made a reply of the wrong shape that marked Redis down.)
func TestDataError_WhatIsATAT(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t, rlredis.OnFailure(backend.Refused))
		ctx := context.Background()
		for i, v := range []string{"", "abc", "12.5", "-5", "1e9", " 12", "0x10", strings.Repeat("9", 25), "12\n"} {
			name := "bad-" + string(rune('a'+i))
			require.NoError(t, c.Set(ctx, rlredis.Key(b, name), v, 0).Err())
			var log events
			l := limiter(t, b, name, ratelimit.Permits(2), ratelimit.Period(time.Hour), ratelimit.OnEvent(log.add))
			assert.Zero(t, l.Snapshot().AvailablePermits, "%q", v)
			assert.False(t, l.TryAcquire(), "%q", v)
			failed := log.byKind(backend.EventKeyFailed)
			if assert.Len(t, failed, 1, "%q", v) {
				assert.True(t, goredis.HasErrorPrefix(failed[0].Err, "BADTAT"), "%q: %v", v, failed[0].Err)
			}
			assert.Equal(t, v, c.Get(ctx, rlredis.Key(b, name)).Val(), "never overwritten")
			assert.Empty(t, log.backend(), "%q", v)
		}
		for i, v := range []string{"0", "123", "000000000000000000000001", "1000000000"} {
			name := "good-" + string(rune('a'+i))
			require.NoError(t, c.Set(ctx, rlredis.Key(b, name), v, 0).Err())
			var log events
			l := limiter(t, b, name, ratelimit.Permits(2), ratelimit.Period(time.Hour), ratelimit.OnEvent(log.add))
			assert.Equal(t, 2, l.Snapshot().AvailablePermits, "%q: a TAT in the past, a full burst", v)
			assert.True(t, l.TryAcquire(), "%q", v)
			assert.Empty(t, log.list, "%q", v)
		}
	})
}

// A data error is an answer: a probe that finds Redis back, on a key that holds a list,
// marks Redis up (RateLimiterBackendRecovered) and only that key bad. The probe interval is
// measured on the limiters' manual clock.
func TestDataError_ProbeAnsweredWithADataErrorRecovers(t *testing.T) {
	verifyNoLeaks(t)
	srv := redistest.Start(t)
	c := quickClient(t, srv.Addr())
	b, err := rlredis.New(c, rlredis.Timeout(ruleTimeout), rlredis.ProbeInterval(time.Second))
	require.NoError(t, err)
	clk := clock.NewManual()
	var log events
	bad := limiter(t, b, "bad", ratelimit.Permits(2), ratelimit.Period(time.Hour), ratelimit.WithClock(clk), ratelimit.OnEvent(log.add))
	good := limiter(t, b, "good", ratelimit.Permits(2), ratelimit.Period(time.Hour), ratelimit.WithClock(clk), ratelimit.OnEvent(log.add))

	srv.Kill()
	require.True(t, good.TryAcquire(), "Local: the in-process burst")
	require.Equal(t, []policy.EventKind{backend.EventFailed}, log.backend())
	require.NoError(t, srv.Restart())
	spoil(t, c, rlredis.Key(b, "bad"), "list")

	assert.True(t, bad.TryAcquire(), "no probe due: Local")
	assert.Empty(t, log.byKind(backend.EventKeyFailed), "Redis not tried")
	clk.Advance(time.Second)
	assert.True(t, bad.TryAcquire(), "the probe: a data error, then Local")
	assert.Equal(t, []policy.EventKind{backend.EventFailed, backend.EventRecovered}, log.backend())
	failed := log.byKind(backend.EventKeyFailed)
	require.Len(t, failed, 1)
	assert.Equal(t, rlredis.Key(b, "bad"), failed[0].Key)
	assert.Equal(t, time.Second, failed[0].At, "on the limiter's clock")

	assert.True(t, good.TryAcquire())
	assert.Equal(t, 1, good.Snapshot().AvailablePermits, "good is on Redis again: a fresh key")
	assert.Equal(t, int64(1), c.Exists(context.Background(), rlredis.Key(b, "good")).Val())
}

// While a key is bad, one of its calls per ProbeInterval (on its limiter's clock) tries
// it again; the others take the failure policy without a round trip.
func TestDataError_OneTryPerInterval(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t, rlredis.ProbeInterval(time.Second))
		var cmds commands
		c.AddHook(&cmds)
		spoil(t, c, rlredis.Key(b, "bad"), "abc")
		clk := clock.NewManual()
		var log events
		l := limiter(t, b, "bad", ratelimit.Permits(100), ratelimit.Period(time.Second), ratelimit.WithClock(clk), ratelimit.OnEvent(log.add))
		cmds.take()
		for range 5 {
			require.True(t, l.TryAcquire(), "Local")
		}
		assert.Equal(t, []string{"evalsha"}, onlyScripts(cmds.take()), "the first call finds the key bad")
		clk.Advance(time.Second)
		for range 5 {
			require.True(t, l.TryAcquire())
		}
		assert.Equal(t, []string{"evalsha"}, onlyScripts(cmds.take()), "one try per interval")
		assert.Len(t, log.byKind(backend.EventKeyFailed), 1, "published once")
	})
}

// onlyScripts drops the EVAL that follows an EVALSHA the server did not know.
func onlyScripts(names []string) []string {
	var out []string
	for _, n := range names {
		if n != "eval" {
			out = append(out, n)
		}
	}
	return out
}

// The freed-slots key is the limiter's too: while the TAT is ahead (when it is read), a
// value that is not a list of freed slots ("start-end" in seconds.nanoseconds, one space
// apart, sorted, not touching, each start before its end, at most 16) is a data error of
// the limiter, answered before anything is written; its event names the limiter's key
// and its Err the freed-slots key. (Fault: a malformed list was read as no slot, or as
// slots that overlap, which would admit more than the rate.)
func TestDataError_FreedSlotsKey(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t, rlredis.OnFailure(backend.Refused))
		ctx := context.Background()
		const a, b2, c3, d4 = "1.000000000", "2.000000000", "3.000000000", "4.000000000"
		for i, v := range []string{"list", "", "abc", "1-2", "1.5-2.5", a + "-" + b2 + "x",
			b2 + "-" + a, a + "-" + a, a + "-" + b2 + " " + b2 + "-" + c3, c3 + "-" + d4 + " " + a + "-" + b2,
			a + "-" + b2 + "  " + c3 + "-" + d4, a + "-" + b2 + " ", " " + a + "-" + b2, a + "-" + b2 + "," + c3 + "-" + d4,
			"1000000000000.000000000-1000000000001.000000000", slotsList(17)} {
			name := "freed-" + string(rune('a'+i))
			l := limiter(t, b, name, ratelimit.Permits(2), ratelimit.Period(time.Hour))
			require.Equal(t, 2, admitted(l, 2), "%q: the TAT is ahead", v)
			var log events
			l = limiter(t, b, name, ratelimit.Permits(2), ratelimit.Period(time.Hour), ratelimit.OnEvent(log.add))
			spoil(t, c, rlredis.Key(b, name)+":freed", v)
			assert.Zero(t, l.Snapshot().AvailablePermits, "%q", v)
			_, err := l.Reserve()
			assert.ErrorIs(t, err, ratelimit.ErrExceeded, "%q", v)
			failed := log.byKind(backend.EventKeyFailed)
			if assert.Len(t, failed, 1, "%q", v) {
				assert.Equal(t, rlredis.Key(b, name), failed[0].Key)
				code := map[bool]string{true: "WRONGTYPE", false: "BADSLOTS"}[v == "list"]
				assert.True(t, goredis.HasErrorPrefix(failed[0].Err, code), "%q: %v", v, failed[0].Err)
				if v != "list" {
					assert.Contains(t, failed[0].Err.Error(), rlredis.Key(b, name)+":freed")
					assert.Equal(t, v, c.Get(ctx, rlredis.Key(b, name)+":freed").Val(), "never overwritten")
				}
			}
			assert.Empty(t, log.backend(), "%q", v)
		}
	})
}

// slotsList returns n well-formed freed slots, "1.000000000-2.000000000 3.000000000-...".
func slotsList(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(2*i+1) + ".000000000-" + strconv.Itoa(2*i+2) + ".000000000"
	}
	return strings.Join(parts, " ")
}
