package future

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SPEC AS-5: contexts that fn derives from its context and cancels are forgotten at once:
// a long-running fn that derives one per iteration holds none of them.
func TestGo_AS5_StoppedAfterFuncsAreForgotten(t *testing.T) {
	held := make(chan int, 1)
	f := Go(context.Background(), func(ctx context.Context) (int, error) {
		for range 10_000 {
			_, cancel := context.WithTimeout(ctx, time.Hour)
			cancel()
		}
		g := ctx.(*goCall[int])
		g.mu.Lock()
		n := 0
		if g.ext != nil {
			n = len(g.ext.afters)
		}
		held <- n
		g.mu.Unlock()
		return 0, nil
	})
	_, err := f.Await(context.Background())
	require.NoError(t, err)
	assert.Zero(t, <-held, "every canceled child was forgotten")
}

// SPEC AS-5: the context that Go gives fn reports an error only once its Done channel is
// closed (the context.Context contract).
func TestGo_AS5_ErrOnlyOnceDoneIsClosed(t *testing.T) {
	for range 200 {
		ready, release := make(chan context.Context, 1), make(chan struct{})
		f := Go(context.Background(), func(ctx context.Context) (int, error) {
			ready <- ctx
			<-release
			return 0, nil
		})
		ctx := <-ready
		done := ctx.Done()
		seen := make(chan bool, 1)
		go func() {
			for ctx.Err() == nil {
			}
			select {
			case <-done:
				seen <- true
			default:
				seen <- false
			}
		}()
		close(release)
		require.True(t, <-seen, "Err was set before Done was closed")
		_, _ = f.Await(context.Background())
	}
}

// SPEC AS-5: the one allocation of Go that holds the future, its goroutine's state and
// fn's context is 96 bytes for a one-word T, a size class of the allocator: a field
// added to goCall or Future moves it to the next class (112 bytes), which costs every
// call through Go more memory and more garbage-collection work.
func TestGo_AS5_StateIsOneSizeClass(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes are those of a 64-bit platform")
	}
	assert.EqualValues(t, 96, unsafe.Sizeof(goCall[int]{}))
}
