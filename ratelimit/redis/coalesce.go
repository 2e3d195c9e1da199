package redis

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4go/resilience4go/internal/decorate"
	"github.com/resilience4go/resilience4go/internal/sat"
	"github.com/resilience4go/resilience4go/ratelimit/backend"
)

// maxBatch is how many Reserves of one store one script run decides at most.
const maxBatch = 64

// A waiter is one Reserve in a batch: its request, and its answer.
type waiter struct {
	a   *rateArgs
	mw  int64 // MaxWait in ns, at least 0
	g   backend.Grant
	now int64 // the server's clock when Redis decided it (set for requests with windows)

	// For a queued Reserve: whether its caller still waits (waiting), has its answer
	// (answered), or left when its ctx ended (left); the sender signals ready once
	// answered.
	state atomic.Uint32
	ready chan struct{}
}

// The states of a queued waiter.
const (
	waiting uint32 = iota
	answered
	left
)

// waiters recycles the waiters of queued Reserves, so that a queued call allocates nothing.
var waiters = sync.Pool{New: func() any { return &waiter{ready: make(chan struct{}, 1)} }}

// reserveCall runs the script's reserve for req.N permits at the rate of req.Config: one
// round trip (Reserve, without a lease). A nil or done ctx is not sent: its error (policy.ErrNilContext for a nil one) is
// returned at once. A request for fewer than 1 or more than Permits permits, or with a
// Config that has no rate, which the limiter never makes, is refused at once with no
// retry-after. See backend.Store.
//
// Concurrent Reserves coalesce: a Reserve that finds none of the store's in flight sends
// its own at once, with its own ctx; those that come while one is in flight queue, and
// are sent together, in their order of arrival (at most maxBatch per run), by one script
// run as soon as the run in flight is back, each decided against the state the one before
// left. The sender of the queued ones (drain) answers a run's callers and lets them run
// before it takes the next run's: callers that call again at once then go in that run,
// rather than wait for the one after. At most one run of Reserves per store is in flight.
// A queued caller whose ctx ends stops waiting and returns ctx's error; a permit its
// batch reserved for it is then given back (giveBack), by the sender, before its next run.
func (s *store) reserveCall(ctx context.Context, req backend.Request) (backend.Grant, error) {
	if err := decorate.ContextErr(ctx); err != nil {
		return backend.Grant{}, err
	}
	if req.N < 1 || req.N > req.Permits || req.Period <= 0 {
		return backend.Grant{Verdict: backend.Refused}, nil
	}
	var a *rateArgs
	if len(req.Windows) == 0 {
		a = s.argsOf(req.Permits, req.Period, req.N)
	} else {
		a = s.argsWin(req)
	}
	mw := int64(max(req.MaxWait, 0))
	s.mu.Lock()
	if s.busy {
		w := waiters.Get().(*waiter)
		w.a, w.mw, w.g = a, mw, backend.Grant{}
		w.state.Store(waiting)
		s.queue = append(s.queue, w)
		s.mu.Unlock()
		return s.await(ctx, w)
	}
	s.busy = true
	s.mu.Unlock()
	w := waiter{a: a, mw: mw}
	one := [1]*waiter{&w}
	err := s.decide(ctx, one[:])
	s.release()
	if err != nil {
		return backend.Grant{}, err
	}
	return w.g, nil
}

// await waits for the answer of w, queued, or for ctx's end.
func (s *store) await(ctx context.Context, w *waiter) (backend.Grant, error) {
	if done := ctx.Done(); done == nil { // a ctx that never ends (the limiter's own calls)
		<-w.ready
	} else {
		select {
		case <-w.ready:
		case <-done:
			if w.state.CompareAndSwap(waiting, left) {
				return backend.Grant{}, ctx.Err() // the sender gives its permit back
			}
			<-w.ready // answered meanwhile: the answer is the caller's
		}
	}
	s.waking.Add(-1)
	g := w.g
	waiters.Put(w)
	return g, nil
}

// release ends the run in flight of the caller that holds busy: when Reserves queued
// meanwhile, a goroutine sends them (drain); otherwise the next Reserve sends its own.
func (s *store) release() {
	s.mu.Lock()
	if len(s.queue) == 0 {
		s.busy = false
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	go s.drain()
}

// drain sends the queued Reserves, maxBatch at a time, until none is left, with a context
// of its own (each caller waits on its own ctx), and answers each.
func (s *store) drain() {
	for {
		s.mu.Lock()
		batch := s.batch[:0]
		n := 0
		for _, w := range s.queue {
			if len(batch) == maxBatch {
				break
			}
			n++
			if w.state.Load() == left { // its caller left before it was sent: nothing to take
				waiters.Put(w)
				continue
			}
			batch = append(batch, w)
		}
		rest := copy(s.queue, s.queue[n:])
		clear(s.queue[rest:])
		s.queue = s.queue[:rest]
		if len(batch) == 0 && rest == 0 {
			s.busy = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.batch = batch
		if len(batch) > 0 {
			_ = s.decide(context.Background(), batch) // Background never ends: no error
			s.answer(batch)
			s.letAnsweredRun(len(batch))
		}
	}
}

// letAnsweredRun yields until the callers just answered have taken their answers (at most
// 2n yields, n being how many were answered), then once more. Callers often call again at
// once: this lets them queue for the next run rather than be left for the one after (two
// runs for one). A single yield is not enough with several Ps: another P takes the sender
// back as soon as its own run queue is empty, while callers still wait on the first.
func (s *store) letAnsweredRun(n int) {
	for i := 0; i < 2*n && s.waking.Load() > 0; i++ {
		runtime.Gosched()
	}
	runtime.Gosched()
}

// answer gives each waiter of a decided batch its grant; for one whose caller left, it
// gives the permits reserved for it back, the last reserved first.
func (s *store) answer(batch []*waiter) {
	for i, w := range batch {
		if w.state.CompareAndSwap(waiting, answered) {
			// The waiter is its caller's from now on: the caller reads its grant and puts
			// it back in the pool, where another call may take it at once. The sender
			// must not look at it again.
			batch[i] = nil
			s.waking.Add(1)
			w.ready <- struct{}{}
		}
	}
	for i := len(batch) - 1; i >= 0; i-- {
		if w := batch[i]; w != nil { // its caller left: the waiter is the sender's
			if w.g.Verdict == backend.Admitted && w.g.Next != 0 { // a permit reserved in Redis
				s.giveBack(w.g)
			}
			waiters.Put(w)
		}
		batch[i] = nil
	}
}

// giveBack cancels a reservation that its caller never received: whether its time has
// come on the server's clock does not matter, as nobody used it.
func (s *store) giveBack(t backend.Grant) {
	t.At = max(t.At, t.Next)
	s.cancel(context.Background(), t)
}

// decide runs the script's reserve for the requests of batch, in order, and sets each
// one's grant: the script's answer, or the failure policy's when Redis did not answer
// well (every request of a failed run takes it, as if it had failed alone). It returns
// ctx's error, with no grant set, when the run failed after ctx ended. Requests alike
// (the same rate, weight and MaxWait) in a row go as one group, and the script answers
// runs of them at once (see gcraScript): each reservation's slot, wait and permit time
// follow from its start, now and its weight, as the script computes them.
func (s *store) decide(ctx context.Context, batch []*waiter) error {
	for len(batch) > 0 {
		w, k := batch[0].a.w, 1
		for k < len(batch) && batch[k].a.w == w {
			k++
		}
		var err error
		if w == nil {
			err = s.decideRun(ctx, batch[:k])
		} else {
			err = s.decideWin(ctx, w, batch[:k])
		}
		if err != nil {
			return err
		}
		batch = batch[k:]
	}
	return nil
}

// decideRun is decide for requests without further windows.
func (s *store) decideRun(ctx context.Context, batch []*waiter) error {
	res, ok, err := s.send(ctx, nil, "r", batch)
	if !ok {
		return err
	}
	i, j := 0, 2 // the next request, the next run of answers in res
	if len(res) >= 2 {
		now := join(res[0], res[1])
		for ; j+5 <= len(res) && i < len(batch); j += 5 {
			code, k := res[j], res[j+1]
			if k < 1 || k > int64(len(batch)-i) {
				if code == 2 && k == 0 && i > 0 && j+5 == len(res) {
					// The freed-slots key is bad, found at this request: the rest again,
					// which meets the data error at once.
					return s.decideRun(ctx, batch[i:])
				}
				break
			}
			run := batch[i : i+int(k)]
			switch code {
			case 0:
				g := backend.Grant{Verdict: backend.Refused, Wait: time.Duration(max(join(res[j+2], res[j+3]), 0))}
				for _, w := range run {
					w.g = g
				}
			case 1:
				prev := join(res[j+2], res[j+3])
				for _, w := range run {
					start := max(prev, now)
					next := int64(sat.Add(time.Duration(start), time.Duration(w.a.inc)))
					wait := max(start-now-w.a.tol, 0)
					w.g = backend.Grant{Verdict: backend.Admitted, Wait: time.Duration(wait),
						Prev: prev, Next: next, At: int64(sat.Add(time.Duration(now), time.Duration(wait))), Epoch: res[j+4]}
					prev = next
				}
			default:
				j = len(res) + 1 // unexpected
			}
			if j > len(res) {
				break
			}
			i += int(k)
		}
	}
	if i != len(batch) || j != len(res) {
		s.unexpected(res, batch[i:])
	}
	return nil
}

// send runs the script's op for batch, requests alike (the same rate, weight and
// MaxWait) sent as one run, each with the further windows' arguments when w is not nil,
// and returns the reply, ok. When the script does not answer, it returns ctx's error if
// ctx ended, else nil and every request of batch answered by the failure policy; ok is
// false either way.
func (s *store) send(ctx context.Context, w *winSet, op string, batch []*waiter) ([]int64, bool, error) {
	hdr, per := cmdHeader, 10
	if w != nil {
		hdr, per = cmdHeader+w.n, 10+4*w.n
	}
	argv := s.command(hdr, per*len(batch))
	argv = append(argv, op)
	for i := 0; i < len(batch); {
		x, k := batch[i], 1
		for i+k < len(batch) && batch[i+k].a == x.a && batch[i+k].mw == x.mw {
			k++
		}
		mwS, mwN := split(x.mw)
		argv = append(argv, x.a.args[0], x.a.args[1], x.a.args[2], x.a.args[3], mwS, mwN, int64(k),
			x.a.args[4], x.a.args[5], x.a.args[6])
		argv = append(argv, x.a.wargs...)
		i += k
	}
	res, err := s.run(ctx, w, argv)
	s.done(argv)
	if err != nil {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		for _, x := range batch {
			x.g = s.failed(x.a.t)
		}
		return nil, false, nil
	}
	return res, true, nil
}

// unexpected reports a reply of the script that does not answer the requests rest, and
// answers them by the failure policy.
func (s *store) unexpected(res []int64, rest []*waiter) {
	s.keyFailed(fmt.Errorf("ratelimit/redis: unexpected reply %v from the script on %s", res, s.keys[0]))
	for _, x := range rest {
		x.g = s.failed(x.a.t)
	}
}

// command returns a slice of hdr elements for a command's header, which runScript fills,
// with room for the script's ARGV of n+1 arguments after it: the store's own, reused,
// with a client that bounds its own I/O (no call outlives its caller), a new one
// otherwise. Only the caller that holds busy takes the store's own.
func (s *store) command(hdr, n int) []any {
	size := hdr + 1 + n
	if !s.b.bounded {
		return make([]any, hdr, size)
	}
	if cap(s.argv) < size {
		s.argv = make([]any, hdr, max(size, cmdHeader+1+10))
	}
	return s.argv[:hdr]
}

// done clears argv, the store's own, once its run is over, so that it holds nothing.
func (s *store) done(argv []any) {
	if s.b.bounded {
		clear(argv[:cap(argv)])
	}
}
