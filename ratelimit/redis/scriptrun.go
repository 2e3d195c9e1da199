package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/resilience4go/resilience4go/internal/sat"
)

var (
	// errDown: Redis is known to be down and no probe is due; the call was not tried.
	errDown = errors.New("ratelimit/redis: backend down")
	// errKeyBad: the key's last answer was a data error and no retry is due; the call was
	// not tried.
	errKeyBad = errors.New("ratelimit/redis: key holds no TAT")
)

// run runs the script with argv on the store's keys and, when w is not nil, its further
// windows' keys, within the backend's timeout: argv's first cmdHeader (+ w's windows)
// elements are for the command's header, which runScript sets, and the script's ARGV (the
// operation and its arguments) follow. While the keys'
// last answer was a data error, it returns errKeyBad at once, except for one call per
// probe interval, which tries the keys again. While the node that holds the keys (the
// server, or the cluster node that owns their slot) is down, it returns errDown at once,
// except for one call per probe interval and node (whatever the limiter or key), which
// tries the node.
//
// Any answer from Redis marks the node up; a data error (dataError) marks only the keys
// bad, and another failure other than ctx's end marks the node down.
func (s *store) run(ctx context.Context, w *winSet, argv []any) ([]int64, error) {
	every := s.b.cfg.ProbeInterval
	if s.keyBad.Load().blocked(every) {
		return nil, errKeyBad
	}
	// The node is looked up only while some node is down: a healthy backend's calls pay
	// nothing for it.
	var node nodeRef
	known := false
	if s.b.down.some() {
		node, known = s.node(false), true
		if o := s.b.down.of(node.name); o != nil {
			if o.blocked(every) {
				return nil, errDown
			}
			node = s.node(true) // this call is the node's probe: where do the keys live now?
		}
	}
	res, err := s.exec(ctx, w, argv)
	switch {
	case err == nil:
		s.answered(node, known)
		if s.keyBad.Load() != nil {
			s.keyBad.Store(nil)
		}
		return res, nil
	case ctx.Err() != nil:
		// The caller gave up: nothing is learned about Redis or the key.
	case s.b.cluster && moving(err):
		// The keys' slot moved under the call faster than the client followed it: the nodes
		// answered, and none is down. This call alone takes the failure policy. (A client
		// that does not follow redirections, e.g. a *redis.Client of one cluster node, gets
		// them on every call: a failure, below.)
	case dataError(err):
		s.answered(node, known)
		s.keyFailed(fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
	default:
		s.fail(node, known, fmt.Errorf("ratelimit/redis: %s: %w", s.keys[0], err))
	}
	return nil, err
}

// node returns the node of the store's keys, as the client's slot map said at most a
// probe interval ago, or, when fresh, as it says now: a lookup per interval and store, so
// that the calls of an outage neither read the client's slot map (which may start its
// reload) one by one nor wait for it.
func (s *store) node(fresh bool) nodeRef {
	if s.b.node == nil {
		return nodeRef{}
	}
	now := s.clk.Now()
	if c := s.nodeAt.Load(); c != nil && !fresh && now < c.until {
		return c.ref
	}
	ref := s.b.nodeOf(s.keys[0])
	s.nodeAt.Store(&cachedNode{ref: ref, until: sat.Add(now, s.b.cfg.ProbeInterval)})
	return ref
}

// cachedNode is a store's node, as looked up, until a clock time.
type cachedNode struct {
	ref   nodeRef
	until time.Duration
}

// dataError reports whether err is Redis's answer about the keys' values, not about
// Redis: WRONGTYPE (a key holds another type), the script's BADTAT (a string that is not a
// TAT) or BADSLOTS (a string that is not a list of freed slots). Any other error, an
// error reply such as LOADING, READONLY, OOM or BUSY included, is a failure of Redis.
func dataError(err error) bool {
	return goredis.HasErrorPrefix(err, "WRONGTYPE") || goredis.HasErrorPrefix(err, badTAT) ||
		goredis.HasErrorPrefix(err, badSlots)
}

// moving reports whether err is a Redis Cluster redirection that the client gave up
// following (MOVED, ASK) or a TRYAGAIN of a slot being migrated: the script did not run,
// and the nodes are up.
func moving(err error) bool {
	return goredis.HasErrorPrefix(err, "MOVED ") || goredis.HasErrorPrefix(err, "ASK ") ||
		goredis.HasErrorPrefix(err, "TRYAGAIN")
}

// movingTries is how many more times a call whose keys' slot is moving runs the script,
// within its timeout, after the client's own redirections (three by default) ran out.
const movingTries = 3

// runScript runs the script once, and, for a cluster client, again, up to movingTries
// times within ctx, while the keys' slot is moving (moving): the client then follows the
// slot to its new node.
func (s *store) runScript(ctx context.Context, w *winSet, argv []any) ([]int64, error) {
	res, err := s.runOnce(ctx, w, argv)
	for i := 0; s.b.cluster && i < movingTries && err != nil && moving(err) && ctx.Err() == nil; i++ {
		res, err = s.runOnce(ctx, w, argv)
	}
	return res, err
}

// cmdHeader is how many arguments of a script command come before its ARGV: EVALSHA, the
// script's SHA-1 digest, the number of keys (2), and the keys; a command with further
// windows has one more key for each (see winSet).
const cmdHeader = 5

// The header's constant arguments, boxed once.
var (
	evalSHA, evalSrc any = script.Hash(), gcraScript
	twoKeys          any = "2"
)

// processor is a client that runs any command: *redis.Client, *redis.ClusterClient and
// *redis.Ring are. The store reads the script's reply, an array of integers, straight into
// one []int64 with it.
type processor interface {
	Process(ctx context.Context, cmd goredis.Cmder) error
}

// runOnce runs the script with EVALSHA, and EVAL when the server does not know it (after
// a restart or SCRIPT FLUSH), on the store's two keys, and the further windows' of w when
// it is not nil.
func (s *store) runOnce(ctx context.Context, w *winSet, argv []any) ([]int64, error) {
	keys, kargs, nk := s.keys, s.keyArgs[:], twoKeys
	if w != nil {
		keys, kargs, nk = w.keys, w.args, w.nkeys
	}
	h := 3 + len(kargs)
	p, ok := s.b.client.(processor)
	if !ok {
		return script.Run(ctx, s.b.client, keys, argv[h:]...).Int64Slice()
	}
	argv[0], argv[1], argv[2] = "evalsha", evalSHA, nk
	copy(argv[3:h], kargs)
	cmd := goredis.NewIntSliceCmd(ctx, argv...)
	cmd.SetFirstKeyPos(3)
	err := p.Process(ctx, cmd)
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		argv[0], argv[1] = "eval", evalSrc
		cmd = goredis.NewIntSliceCmd(ctx, argv...)
		cmd.SetFirstKeyPos(3)
		err = p.Process(ctx, cmd)
	}
	return cmd.Val(), err
}

// exec runs the script, bounded by the timeout: EVALSHA, and EVAL when the server does
// not know the script (after a restart or SCRIPT FLUSH), again while its slot is moving.
func (s *store) exec(ctx context.Context, w *winSet, argv []any) ([]int64, error) {
	ctx, cancel := s.b.bound(ctx)
	defer cancel()
	if s.b.bounded {
		res, err := s.runScript(ctx, w, argv)
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
		res, err := s.runScript(ctx, w, argv)
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
