package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// redisError is an error reply of Redis, as go-redis gives it.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

// movingScripter answers the first redirects script runs with err, and the others with a
// reservation free now (a reply of the script's reserve); its other methods are not
// used.
type movingScripter struct {
	goredis.Scripter
	mu        sync.Mutex
	err       error
	redirects int
	runs      int
}

func (m *movingScripter) EvalSha(ctx context.Context, _ string, _ []string, _ ...any) *goredis.Cmd {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs++
	cmd := goredis.NewCmd(ctx)
	if m.runs <= m.redirects {
		cmd.SetErr(m.err)
		return cmd
	}
	// now (1s), then one reservation appended at the TAT, (1s): free now.
	cmd.SetVal([]any{int64(1), int64(0), int64(1), int64(1), int64(1), int64(0), int64(0)})
	return cmd
}

func (m *movingScripter) count() int { m.mu.Lock(); defer m.mu.Unlock(); return m.runs }

// SPEC RL-18: a slot that moves under a call faster than a cluster client follows it
// (its redirections ran out: MOVED, ASK, or TRYAGAIN during a migration) is not a node
// failing. The call runs the script again, up to 3 more times within its timeout; when
// the slot is still moving, that call alone takes the failure policy, no node is marked
// down and no event is published: the next call tries Redis again. A client that does
// not follow redirections (not a cluster client, e.g. a *redis.Client of one cluster
// node) gets them on every call: that is a failure, with its event, at the first reply.
// (Faults: a MOVED after the client's 3 redirections marked the node down, with
// RateLimiterBackendFailed, during a live resharding; then a plain client's MOVED on
// every call was silently taken for a moving slot.)
func TestRL18_MovingSlotIsNotAFailure(t *testing.T) {
	for _, reply := range []string{"MOVED 2548 127.0.0.1:7001", "ASK 2548 127.0.0.1:7001",
		"TRYAGAIN Multiple keys request during rehashing of slot"} {
		t.Run(reply[:4], func(t *testing.T) {
			var log healthLog
			m := &movingScripter{err: redisError(reply), redirects: 3}
			b, err := New(m, OnFailure(backend.Refused), Timeout(time.Second))
			require.NoError(t, err)
			b.cluster = true // as for a *redis.ClusterClient
			l, err := ratelimit.New(ratelimit.Name("moving"), ratelimit.Permits(5), ratelimit.Period(time.Second),
				ratelimit.WithClock(clock.NewManual()), ratelimit.WithBackend(b), ratelimit.OnEvent(log.add))
			require.NoError(t, err)
			assert.True(t, l.TryAcquire(), "decided by Redis at the 4th run")
			assert.Equal(t, 4, m.count())

			m.mu.Lock()
			m.runs, m.redirects = 0, 100
			m.mu.Unlock()
			assert.False(t, l.TryAcquire(), "still moving: backend.Refused for this call")
			assert.Equal(t, 4, m.count(), "1 run and 3 more")
			assert.False(t, l.TryAcquire())
			assert.Equal(t, 8, m.count(), "the next call tries Redis again: no node is down")
			assert.Empty(t, log.seq())

			b.cluster = false // a client that does not follow redirections
			m.mu.Lock()
			m.runs = 0
			m.mu.Unlock()
			assert.False(t, l.TryAcquire())
			assert.Equal(t, 1, m.count(), "no run again")
			assert.Equal(t, []string{"F:"}, log.seq(), "a failure, published")
		})
	}
}
