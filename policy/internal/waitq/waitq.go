// Package waitq is the queue of calls waiting for room that the bulkhead and the
// adaptive limit share: by priority, highest level first, and FIFO within a level. What
// room is, and how a call of a level takes it, is the policy's: the bulkhead takes a free
// slot, the adaptive limit a ticket under its limit, each within the level's share of it.
// The queue hands room to the waiters of the highest level first, oldest first, one
// dispatching goroutine at a time, and calls each waiter's owner back outside its lock.
//
// The number of queued waiters is an atomic counter that the policy owns and reads
// without the queue's lock (its no-barging check and its snapshots); only the queue
// changes it, under its lock. A call that finds room and sees nobody queued takes the
// room itself and never touches the queue.
//
// Sync is the blocking wait of a synchronous call in the queue (with its MaxWait timer,
// its context, and room handed over as the context ends), and Events the wait events
// and rejections it publishes and returns and the admissions and rejections it records
// (observe.Outcome), with the call's context; the policies' asynchronous waiters, and
// their calls that do not wait, use Events too.
package waitq

import (
	"sync"
	"sync/atomic"

	"github.com/resilience4go/resilience4go/policy"
)

// levels is how many priority levels the queue tells apart: policy.PrioritySheddable to
// policy.PriorityCriticalPlus.
const levels = int(policy.PriorityCriticalPlus) + 1

// An Owner is what a waiter stands for: a call blocked on its goroutine, or a queued
// callback.
type Owner interface {
	// Granted is called once the waiter holds room handed to it by Dispatch, on the
	// dispatching goroutine, outside the queue's lock. It may release room and call
	// Dispatch again (the running dispatch picks that room up); it may panic, which
	// leaves the queue consistent and goes on to Dispatch's caller, once the room left has
	// gone to the next waiters (see Dispatch).
	Granted()
}

// The states of a waiter.
const (
	fresh   uint8 = iota // not queued yet
	queued               // in the queue
	granted              // handed room (and out of the queue)
	removed              // out of the queue without room: timed out, canceled
)

// A Waiter is a call in a Queue[R]; R is what taking room yields (struct{} for a plain
// slot). Its zero value is a waiter not queued yet. It is meant to be a field of the
// policy's per-call struct, and must not be copied once it has been passed to the queue.
// Its state changes only under the queue's lock.
type Waiter[R any] struct {
	// Level is the waiter's priority, set before it is enqueued: higher levels are handed
	// room first. The zero Waiter is PrioritySheddable, which only matters beside waiters
	// of other levels.
	Level      policy.Priority
	prev, next *Waiter[R]
	state      uint8
	room       R
	owner      Owner
}

// Holds reports whether w was handed room, by Enqueue or Dispatch. Call it only once the
// wait is over for the caller: Enqueue returned Admitted, Granted was called, or Remove
// returned false and the owner has learnt why (Granted, or its own removal).
func (w *Waiter[R]) Holds() bool { return w.state == granted }

// Room returns what taking room yielded for w; the zero R until w holds room.
func (w *Waiter[R]) Room() R { return w.room }

// Queue is a queue of waiters for room, by level, FIFO within a level. Its zero value is
// unusable: call Init first. Its methods are safe for concurrent use once Init has
// returned. A Queue must not be copied after Init.
type Queue[R any] struct {
	queued *atomic.Int64 // the policy's counter of queued waiters
	// take takes room for a call of a level, if there is any within the level's share.
	take func(policy.Priority) (R, bool)
	// top is 1 + the highest level with waiters, 0 when nobody waits; changed under mu,
	// read without it (Ahead).
	top         atomic.Int32
	mu          sync.Mutex // guards the rest, and the waiters' links and states
	lists       [levels]list[R]
	dispatching bool // a goroutine is handing room to waiters
}

// list is the waiters of one level, oldest first.
type list[R any] struct{ head, tail *Waiter[R] }

// Init readies q. queued is the counter of queued waiters, which the queue alone changes
// from now on (the policy reads it, atomically). take takes room for a call of a level
// and returns what it yields, or reports false when there is none within the level's
// share; it is called under q's lock and must not block or call q. A level's share must
// not be above a higher level's: when the highest waiter finds no room, no lower one
// would.
func (q *Queue[R]) Init(queued *atomic.Int64, take func(level policy.Priority) (R, bool)) {
	q.queued, q.take = queued, take
}

// Ahead reports whether a waiter of level or above is queued: a call of that level that
// finds room must queue behind it rather than take the room (no barging within a level
// or past a higher one). It reads one atomic word, without the lock.
func (q *Queue[R]) Ahead(level policy.Priority) bool { return q.top.Load() > int32(level) }

// first returns the oldest waiter of the highest level, or nil. q.mu must be held.
func (q *Queue[R]) first() *Waiter[R] {
	for l := levels - 1; l >= 0; l-- {
		if w := q.lists[l].head; w != nil {
			return w
		}
	}
	return nil
}

// setTop stores the highest level with waiters. q.mu must be held.
func (q *Queue[R]) setTop() {
	top := int32(0)
	for l := levels - 1; l >= 0; l-- {
		if q.lists[l].head != nil {
			top = int32(l) + 1
			break
		}
	}
	q.top.Store(top)
}

// Result is what Enqueue did with a waiter.
type Result uint8

const (
	// Admitted: nobody was queued and take found room; the waiter holds it, and its
	// owner is not called.
	Admitted Result = iota
	// Queued: the waiter is at the back of the queue. The caller must then make sure
	// that room which came meanwhile is not missed: check for room and, if there is any,
	// call Dispatch.
	Queued
	// Removed: Remove was called for the waiter before it could be queued; it is not.
	Removed
)

// Enqueue gives w room at once if nobody of its level or above is queued and take finds
// some for its level; else it queues w at the back of its level, with owner o to call
// when room is handed to it. A waiter already removed is left out. Each waiter is
// enqueued at most once.
func (q *Queue[R]) Enqueue(w *Waiter[R], o Owner) Result {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.state == removed {
		return Removed
	}
	w.Level = min(max(w.Level, policy.PrioritySheddable), policy.PriorityCriticalPlus)
	if !q.Ahead(w.Level) {
		if r, ok := q.take(w.Level); ok {
			w.state, w.room = granted, r
			return Admitted
		}
	}
	w.state, w.owner = queued, o
	l := &q.lists[w.Level]
	w.prev = l.tail
	if l.tail == nil {
		l.head = w
	} else {
		l.tail.next = w
	}
	l.tail = w
	q.queued.Add(1)
	if int32(w.Level) >= q.top.Load() {
		q.top.Store(int32(w.Level) + 1)
	}
	return Queued
}

// Remove takes w out of the queue, or keeps it from being queued if Enqueue has not run
// yet, unless w holds room or was removed already, and reports whether it did.
func (q *Queue[R]) Remove(w *Waiter[R]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch w.state {
	case fresh:
		w.state = removed
		return true
	case queued:
		q.unlink(w)
		w.state = removed
		return true
	}
	return false
}

// unlink takes w out of the queue. q.mu must be held.
func (q *Queue[R]) unlink(w *Waiter[R]) {
	l := &q.lists[w.Level]
	if w.prev == nil {
		l.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	q.queued.Add(-1)
	if l.head == nil {
		q.setTop()
	}
}

// Dispatch hands room to the waiters, highest level first and oldest first within a
// level, while take finds some for the first of them, and calls their owners' Granted
// outside the lock. One goroutine dispatches at a time: a call of
// Dispatch while another runs returns at once, and the running one picks up the room
// made meanwhile (for instance by a call that completes as soon as it is started), so
// that starting a long queue never recurses. A panic in Granted ends this dispatch,
// leaving the queue consistent, and goes on to the caller; as it unwinds, the room made
// meanwhile (the panicking owner's own, given back while this dispatch still ran) goes on
// to the next waiters, on the same goroutine, so that none of them is left waiting while
// room is free. Should one of them panic too, its panic goes on in turn, in place of the
// first: every panic stays on the caller's goroutine, where it can be recovered.
func (q *Queue[R]) Dispatch() {
	q.mu.Lock()
	if q.dispatching {
		q.mu.Unlock()
		return
	}
	q.dispatching = true
	locked := true
	defer func() {
		panicked := !locked // only Granted runs unlocked
		if panicked {
			q.mu.Lock()
		}
		q.dispatching = false
		q.mu.Unlock()
		if panicked {
			q.Dispatch()
		}
	}()
	for {
		w := q.first()
		if w == nil {
			return
		}
		r, ok := q.take(w.Level)
		if !ok {
			return
		}
		q.unlink(w)
		w.state, w.room = granted, r
		q.mu.Unlock()
		locked = false
		w.owner.Granted()
		q.mu.Lock()
		locked = true
	}
}
