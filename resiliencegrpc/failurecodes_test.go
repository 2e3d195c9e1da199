package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// SPEC GR-6: with ResourceExhausted listed in FailureCodes, the server's ResourceExhausted
// with a RetryInfo counts as a failure, as the one without does: the StatusError then
// does not match ratelimit.ErrExceeded, which CircuitBreaker ignores.
func TestGR6_ResourceExhaustedListedAsFailureCountsWithADelay(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{FailureCodes: []codes.Code{codes.ResourceExhausted}},
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(3), circuitbreaker.MinimumCalls(3)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	for range 3 {
		ts.svc.script("UnaryCall", failsWithDelay(codes.ResourceExhausted, time.Second))
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.Equal(t, codes.ResourceExhausted, status.Code(err))
	}
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	require.Equal(t, circuitbreaker.Open, cb.Snapshot().State, "%+v", cb.Snapshot())
}
