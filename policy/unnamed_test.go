package policy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/futuretest"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/timeout"
)

// An instance built with New and no Name has no id: its rejections and events name no
// instance, rather than one its user never gave (a breaker once called itself
// "circuitbreaker", a bulkhead "bulkhead").
func TestUnnamedInstancesNameNoInstance(t *testing.T) {
	ctx := context.Background()
	one := func(context.Context) (int, error) { return 1, nil }
	var events []policy.Event
	listen := func(e policy.Event) { events = append(events, e) }

	b, err := circuitbreaker.New(circuitbreaker.OnEvent(listen))
	require.NoError(t, err)
	require.NoError(t, b.TransitionTo(circuitbreaker.ForcedOpen))
	_, err = circuitbreaker.NewPolicy[int](b).Decorate(one)(ctx)
	require.ErrorIs(t, err, circuitbreaker.ErrOpen)
	assert.Equal(t, "circuitbreaker: circuit breaker is forced-open and does not permit the call", err.Error())
	assert.Empty(t, b.Snapshot().Instance)

	bh, err := bulkhead.New(bulkhead.MaxConcurrent(1), bulkhead.OnEvent(listen))
	require.NoError(t, err)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = bulkhead.NewPolicy[int](bh).Decorate(func(context.Context) (int, error) {
			close(held)
			<-release
			return 1, nil
		})(ctx)
	}()
	<-held
	_, err = bulkhead.NewPolicy[int](bh).Decorate(one)(ctx)
	close(release)
	<-done
	require.ErrorIs(t, err, bulkhead.ErrFull)
	assert.Equal(t, "bulkhead: bulkhead is full", err.Error())

	al, err := adaptivelimit.New(adaptivelimit.InitialLimit(1), adaptivelimit.MinLimit(1), adaptivelimit.MaxLimit(1))
	require.NoError(t, err)
	p, err := al.Acquire(ctx)
	require.NoError(t, err)
	_, err = al.Acquire(ctx)
	p.Release()
	require.ErrorIs(t, err, adaptivelimit.ErrLimitExceeded)
	assert.Equal(t, "adaptivelimit: concurrency limit exceeded", err.Error())

	clk := clock.NewManual()
	to, err := timeout.New(time.Second, timeout.WithClock(clk))
	require.NoError(t, err)
	f := timeout.NewPolicy[int](to).DecorateAsync(func(context.Context) *async.Future[int] {
		f, _ := async.NewPromise[int]()
		return f
	})(ctx)
	clk.Advance(time.Second)
	_, err = futuretest.Done(t, f)
	var te *timeout.Error
	require.True(t, errors.As(err, &te))
	assert.Equal(t, "timeout: call timed out after 1s", err.Error())

	require.NotEmpty(t, events)
	for _, e := range events {
		assert.Empty(t, e.Instance, "%v", e)
		assert.NotContains(t, e.String(), "  ", "no gap where an id would be")
	}
}
