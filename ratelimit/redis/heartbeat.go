package redis

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The live fair share (see Heartbeat): each backend with a heartbeat announces its
// instance in one sorted set under the prefix, and counts the live instances there.

// heartbeat is a Backend's announcement of its instance, and the count of live instances
// it last saw.
type heartbeat struct {
	client goredis.Scripter
	key    string        // the sorted set of the live instances: "{" + prefix + "}:instances"
	id     string        // this instance's member: random, made at New
	life   time.Duration // an entry's life after its beat: expiry - every
	every  time.Duration // expiry/4: the time between two beats
	// timeout bounds each round trip (the backend's Timeout).
	timeout time.Duration

	// seen is the count of live instances at the last beat Redis answered; 0 until one
	// did.
	seen atomic.Int64

	stop     context.CancelFunc // ends the loop, and its round trip in flight
	done     chan struct{}      // closed when the loop has returned
	stopOnce sync.Once
}

// instancesKey returns the key of the live instances under prefix. No limiter's keys
// take this form: theirs are "{" + prefix + name + "}", optionally followed by ":freed"
// or ":win:…", never by ":instances". The braces make "prefix" its hash tag: one slot,
// one key, on a cluster too.
func instancesKey(prefix string) string { return "{" + prefix + "}:instances" }

// beatScript adds or refreshes the instance ARGV[1] in the sorted set KEYS[1], scored by
// the time its entry expires on the server's clock (in ms: now + ARGV[2]), drops the
// entries that expired, sets the key's TTL to the latest entry's expiry, and returns the
// count of live instances. With ARGV[2] = "-" it removes the instance instead, and
// returns the count left.
const beatScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[2] == '-' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIRE', KEYS[1], math.max(tonumber(last[2]) - now, 1))
end
return redis.call('ZCARD', KEYS[1])
`

var beatRun = goredis.NewScript(beatScript)

// startHeartbeat starts the heartbeat of a backend with cfg on client, or returns nil
// when cfg has none.
func startHeartbeat(client goredis.Scripter, cfg config) *heartbeat {
	if cfg.Heartbeat <= 0 {
		return nil
	}
	ctx, stop := context.WithCancel(context.Background())
	h := &heartbeat{client: client, key: instancesKey(cfg.Prefix),
		id:   strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36),
		life: cfg.Heartbeat - cfg.Heartbeat/4, every: cfg.Heartbeat / 4, timeout: cfg.Timeout,
		stop: stop, done: make(chan struct{})}
	go h.loop(ctx)
	return h
}

// loop beats at once, then every h.every, until ctx ends.
func (h *heartbeat) loop(ctx context.Context) {
	defer close(h.done)
	tick := time.NewTicker(h.every)
	defer tick.Stop()
	for {
		h.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// beat announces the instance once, within the timeout, and keeps the count of live
// instances Redis returns. A failure keeps the count last seen: it is no event of its
// own, since the limiters' calls report Redis's failures.
func (h *heartbeat) beat(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	n, err := beatRun.Run(ctx, h.client, []string{h.key}, h.id, h.life.Milliseconds()).Int64()
	if err == nil && n > 0 {
		h.seen.Store(n)
	}
}

// share returns the count of live instances last seen, or floor until a beat was answered.
func (h *heartbeat) share(floor int) int {
	if n := h.seen.Load(); n > 0 {
		return int(n)
	}
	return floor
}

// close stops the loop, waits for it, and removes the instance's entry (best effort,
// within the timeout), once; later calls wait for the first one's loop to end.
func (h *heartbeat) close() {
	h.stopOnce.Do(func() {
		h.stop()
		<-h.done
		ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
		defer cancel()
		_ = beatRun.Run(ctx, h.client, []string{h.key}, h.id, "-").Err()
	})
	<-h.done
}
