package contracttest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Eventually returns at once when cond already holds, and otherwise keeps checking cond
// until another goroutine makes it hold.
func TestEventually(t *testing.T) {
	checks := 0
	Eventually(t, func() bool { checks++; return true }, "already true")
	assert.Equal(t, 1, checks)

	var ready atomic.Bool
	var polls atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for polls.Load() < 3 {
			runtime.Gosched()
		}
		ready.Store(true)
	})
	Eventually(t, func() bool { polls.Add(1); return ready.Load() }, "ready")
	wg.Wait()
	assert.GreaterOrEqual(t, polls.Load(), int64(4), "checked until it held")
}
