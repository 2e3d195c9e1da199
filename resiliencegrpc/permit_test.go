package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// SPEC GR-11: a Limit counts every call it admits, also one that its Guard's bulkhead then
// turns away before the handler runs (the request reached the server): that refusal has
// no RetryInfo, and the permit stays spent.
func TestGR11_ALimitCountsCallsItsGuardTurnsAway(t *testing.T) {
	clk := clock.NewManual()
	k, err := keyed.New[string](ratelimit.Permits(3), ratelimit.Period(time.Hour), ratelimit.WithClock(clk))
	require.NoError(t, err)
	reg, _ := newRegistry(t, clk)
	srv, err := resiliencegrpc.NewServer(
		resiliencegrpc.Limit(k, nil),
		resiliencegrpc.Guard(reg, "unary", []resilience.Spec{resilience.Bulkhead(bulkhead.MaxConcurrent(1))}))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	c := ts.client(t, nil)
	g := ts.svc.park("UnaryCall")

	first := callUnary(c)
	receive(t, g.entered, "the first call in the handler") // it holds the bulkhead's only slot and one of the 3 permits

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	_, hasDelay := resiliencegrpc.RetryDelay(err)
	assert.False(t, hasDelay, "a full bulkhead is not a rate limit: no RetryInfo")
	// The turned-away call spent its permit: one of the 3 is left, not 2.
	_, err = k.Reserve("bufconn", 2)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "the turned-away call spent its permit")
	left, err := k.Reserve("bufconn", 1)
	require.NoError(t, err, "one permit left")
	left.Cancel()
	g.open()
	require.NoError(t, receive(t, first, "the first call's end"))

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "3 permits: 2 calls ran, 1 was turned away")
	d, ok := resiliencegrpc.RetryDelay(err)
	require.True(t, ok)
	assert.Equal(t, time.Hour/3, d, "the next permit of 3 per hour, at the burst's instant")
}
