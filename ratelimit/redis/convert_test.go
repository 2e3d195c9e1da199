package redis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	rlredis "github.com/resilience4go/resilience4go/ratelimit/redis"
)

// SPEC RC-7: a raised quota through a Limiter on Redis, on a server and on a cluster
// (both keys in the key's slot, converted in the same script run): 1 permit per hour,
// taken, raised to 10 per second: the next permit within 100ms. A reservation granted at
// 10 per second, canceled once a change to 20 per second converted the schedule, gives
// nothing back: the keys are left as they are. (Fault: the store kept the TAT written at
// the old rate, and the next permit came about an hour later.)
func TestRC7_RaisedQuotaThroughALimiterOnRedis(t *testing.T) {
	onEach(t, func(t *testing.T) {
		c, b := newShared(t)
		clk := clock.NewManual() // the limiter's waits; Redis decides on its own clock
		l := limiter(t, b, "raised", ratelimit.Permits(1), ratelimit.Period(time.Hour),
			ratelimit.MaxWait(time.Hour), ratelimit.WithClock(clk))
		require.True(t, l.TryAcquire())
		cfg := l.Config()
		cfg.Permits, cfg.Period = 10, time.Second
		require.NoError(t, l.Reconfigure(cfg))
		r, err := l.Reserve()
		require.NoError(t, err)
		assert.LessOrEqual(t, r.Delay(), 100*time.Millisecond, "within one new T")

		held, err := l.Reserve()
		require.NoError(t, err)
		cfg.Permits = 20
		require.NoError(t, l.Reconfigure(cfg))
		_, err = l.Reserve()
		require.NoError(t, err)
		ctx := t.Context()
		key := rlredis.Key(b, "raised")
		before, err := c.Get(ctx, key).Result()
		require.NoError(t, err)
		held.Cancel()
		after, err := c.Get(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, before, after, "granted before the conversion: nothing given back")
		assert.Zero(t, c.Exists(ctx, key+":freed").Val(), "no freed slot")
	})
}
