package resiliencegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// The methods of the health and reflection services that the tests call.
const (
	healthCheck       = "/grpc.health.v1.Health/Check"
	reflectionV1      = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
	reflectionV1Alpha = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
)

// SPEC GR-15: the health service and the reflection services can be exempt one without
// the other, by name; HealthAndReflection is both. With one permit per method, a method
// that is not exempt is refused at its second call.
func TestGR15_HealthAndReflectionAreExemptSeparately(t *testing.T) {
	assert.Equal(t, []string{"/grpc.health.v1.Health/", "/grpc.reflection.v1.ServerReflection/",
		"/grpc.reflection.v1alpha.ServerReflection/"}, resiliencegrpc.HealthAndReflection)
	for _, tc := range []struct {
		name             string
		exempt           []string
		health, reflects bool // exempt
	}{
		{"health", resiliencegrpc.HealthAndReflection[:1], true, false},
		{"reflection", resiliencegrpc.HealthAndReflection[1:], false, true},
		{"HealthAndReflection", resiliencegrpc.HealthAndReflection, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := resiliencegrpc.NewServer(
				resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 1), resiliencegrpc.ByMethod),
				resiliencegrpc.Exempt(tc.exempt...))
			require.NoError(t, err)
			unary, stream := srv.UnaryInterceptor(), srv.StreamInterceptor()
			handler := func(context.Context, any) (any, error) { return "ok", nil }
			sh := func(any, grpc.ServerStream) error { return nil }
			ss := &fakeServerStream{ctx: context.Background()}
			for i := range 3 {
				_, err := unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: healthCheck}, handler)
				assert.Equal(t, tc.health || i == 0, err == nil, "health check %d: %v", i, err)
				for _, m := range []string{reflectionV1, reflectionV1Alpha} {
					err := stream(nil, ss, &grpc.StreamServerInfo{FullMethod: m, IsServerStream: true}, sh)
					assert.Equal(t, tc.reflects || i == 0, err == nil, "%s %d: %v", m, i, err)
				}
			}
		})
	}
}

// decideOnly is a KeyedLimiter that has Decide only: a Limit cannot read its period.
type decideOnly struct{ k resiliencegrpc.KeyedLimiter }

func (d decideOnly) Decide(ctx context.Context, key string) keyed.Decision {
	return d.k.Decide(ctx, key)
}

// noQuota is a KeyedLimiter that refuses every call with a wait and tells no quota.
type noQuota struct{}

func (noQuota) Decide(context.Context, string) keyed.Decision {
	return keyed.Decision{RetryAfter: 2*time.Second + time.Microsecond}
}

// SPEC GR-16: a Limit's refusal names the method, the quota as the limiter is configured
// (its period only when the limiter tells it, as *keyed.Limiter does) and the time
// until the key's next permit, rounded up to the millisecond as the pushback trailer
// sends it.
func TestGR16_LimitRefusalNamesTheMethodAndTheLimit(t *testing.T) {
	clk := clock.NewManual()
	for _, tc := range []struct {
		name  string
		k     resiliencegrpc.KeyedLimiter
		burst int
		want  string
	}{
		{"a keyed limiter", perPeer(t, clk, 10), 10,
			"resiliencegrpc: " + unaryCall + ": rate limit of 10 per 1s exceeded; retry in 70ms"},
		{"a limiter that tells no period", decideOnly{perPeer(t, clk, 10)}, 10,
			"resiliencegrpc: " + unaryCall + ": rate limit of 10 exceeded; retry in 70ms"},
		{"a limiter that tells no quota", noQuota{}, 0,
			"resiliencegrpc: " + unaryCall + ": rate limit exceeded; retry in 2.001s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(tc.k, nil))
			require.NoError(t, err)
			ts := startServer(t, bufnet, srv)
			c := ts.client(t, nil)
			for range tc.burst {
				_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
				require.NoError(t, err)
			}
			clk.Advance(30*time.Millisecond + 500*time.Microsecond)
			_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.Error(t, err)
			assert.Equal(t, tc.want, status.Convert(err).Message())
			if tc.burst == 0 { // the *Error the interceptor returns prints the same
				_, err = srv.UnaryInterceptor()(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: unaryCall},
					func(context.Context, any) (any, error) { return nil, nil })
				assert.Equal(t, "rpc error: code = ResourceExhausted desc = "+tc.want, err.Error())
			}
		})
	}
}
