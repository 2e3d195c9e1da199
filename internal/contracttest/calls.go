package contracttest

import (
	"context"
	"sync"

	"github.com/resilience4go/resilience4go/async"
)

// Calls is an asynchronous function, Next, whose calls stay pending until the test
// completes them with Finish or FinishWith. Each call is named by its argument, which
// should be unique. It is safe for concurrent use.
type Calls struct {
	mu       sync.Mutex
	started  []int
	complete map[int]func(string, error)
	futures  map[int]*async.Future[string]
}

// NewCalls returns a Calls with no call started.
func NewCalls() *Calls {
	return &Calls{complete: map[int]func(string, error){}, futures: map[int]*async.Future[string]{}}
}

// Next starts call i: it records i and returns a pending future. It ignores its context.
func (c *Calls) Next(_ context.Context, i int) *async.Future[string] {
	f, complete := async.NewPromise[string]()
	c.mu.Lock()
	c.started = append(c.started, i)
	c.complete[i] = complete
	c.futures[i] = f
	c.mu.Unlock()
	return f
}

// Started returns the calls started so far, in the order they started; nil when none has.
func (c *Calls) Started() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.started...)
}

// Future returns the future Next returned for call i, or nil if call i has not started.
func (c *Calls) Future(i int) *async.Future[string] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.futures[i]
}

// Finish completes call i with the value "done". It panics if call i has not started.
func (c *Calls) Finish(i int) { c.FinishWith(i, nil) }

// FinishWith completes call i with the value "done" and the error err (nil for a
// success). It panics if call i has not started. Completing a call again does nothing.
func (c *Calls) FinishWith(i int, err error) {
	c.mu.Lock()
	complete := c.complete[i]
	c.mu.Unlock()
	complete("done", err)
}
