package resiliencegrpc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/hedge"
	"github.com/resilience4go/resilience4go/policy/retry"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// newClient builds a client of cfg on reg, with instance id "svc".
func newClient(t *testing.T, reg *resilience.Registry, cfg resiliencegrpc.ClientConfig, specs ...resilience.Spec) *resiliencegrpc.Client {
	t.Helper()
	cl, err := resiliencegrpc.NewClient(reg, "svc", cfg, specs...)
	require.NoError(t, err)
	return cl
}

// idempotentUnary is a ClientConfig that lets UnaryCall be retried.
var idempotentUnary = resiliencegrpc.ClientConfig{Idempotent: []string{unaryCall}}

// waits returns the Wait of each RetryAttempt event.
func waits(events []policy.Event) []time.Duration {
	var out []time.Duration
	for _, e := range events {
		out = append(out, e.Wait)
	}
	return out
}

// requireStatusError checks that err is a *resiliencegrpc.StatusError of code and returns it.
func requireStatusError(t *testing.T, err error, code codes.Code) *resiliencegrpc.StatusError {
	t.Helper()
	var se *resiliencegrpc.StatusError
	require.ErrorAs(t, err, &se, "%v", err)
	require.Equal(t, code, se.Code())
	require.Equal(t, code, status.Code(err))
	return se
}

// GR-5: a retry of 3 attempts against a server that fails twice with Unavailable, then
// answers: 3 attempts reach the server, the call succeeds, and the retry waited its own
// delay, on the manual clock, twice. When every attempt fails, the caller gets the last
// status as a *StatusError.
func TestGR5_RetriesUnavailableOfAnIdempotentMethod(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(3), retry.Delay(100*time.Millisecond)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	ts.svc.script("UnaryCall", fails(codes.Unavailable), fails(codes.Unavailable))
	_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, 3, ts.svc.count("UnaryCall"))
	assert.Equal(t, 200*time.Millisecond, clk.Now())
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond}, waits(rec.Of(retry.EventAttempt)))

	ts.svc.script("UnaryCall", fails(codes.Unavailable), fails(codes.Unavailable), fails(codes.Unavailable))
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	se := requireStatusError(t, err, codes.Unavailable)
	assert.Contains(t, se.Error(), "resiliencegrpc: "+unaryCall+": rpc error: code = Unavailable")
	assert.False(t, se.NeverRetried())
	_, has := se.RetryAfter()
	assert.False(t, has)
	assert.Equal(t, 6, ts.svc.count("UnaryCall"))
	assert.Equal(t, 1, rec.Count(retry.EventExhausted))
}

// GR-5, CO-10: the retry's own backoff, like a server's delay, is not waited when it would
// end after the call's deadline: the last status comes back at once, as the *StatusError
// of the attempt, with its own code (not DeadlineExceeded: the deadline has not passed).
func TestGR5_CO10_BackoffPastTheDeadlineIsNotWaited(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(3), retry.Delay(time.Hour)))
	ts := startServer(t, bufnet, nil)
	ts.svc.script("UnaryCall", fails(codes.Unavailable))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, err := ts.client(t, cl).UnaryCall(ctx, &testpb.SimpleRequest{})
	requireStatusError(t, err, codes.Unavailable)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, ts.svc.count("UnaryCall"))
	assert.Zero(t, clk.Now(), "nothing waited")
	assert.Zero(t, rec.Count(retry.EventAttempt))
	assert.Equal(t, 1, rec.Count(retry.EventAborted))
}

// GR-5: the retry waits the server's delay instead of its own backoff: the
// grpc-retry-pushback-ms trailer, or the RetryInfo detail (which wins over the trailer
// when both are sent); the manual clock moves by exactly that delay per retry.
func TestGR5_ServerDelayReplacesTheBackoff(t *testing.T) {
	withBoth := failsWithDelay(codes.Unavailable, 300*time.Millisecond)
	withBoth.trailer = failsWithPushback(codes.Unavailable, "250").trailer
	for _, tc := range []struct {
		name  string
		reply reply
		wait  time.Duration
	}{
		{"pushback", failsWithPushback(codes.Unavailable, "250"), 250 * time.Millisecond},
		{"pushback 0", failsWithPushback(codes.Unavailable, "0"), 0},
		{"RetryInfo", failsWithDelay(codes.Unavailable, 300*time.Millisecond), 300 * time.Millisecond},
		{"RetryInfo and pushback", withBoth, 300 * time.Millisecond},
		{"RetryInfo on ResourceExhausted", failsWithDelay(codes.ResourceExhausted, 2*time.Second), 2 * time.Second},
		{"pushback on ResourceExhausted", failsWithPushback(codes.ResourceExhausted, "1500"), 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual()
			reg, rec := newRegistry(t, clk)
			cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(3), retry.Delay(10*time.Second)))
			ts := startServer(t, bufnet, nil)
			ts.svc.script("UnaryCall", tc.reply, tc.reply)

			_, err := ts.client(t, cl).UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.NoError(t, err)
			assert.Equal(t, 3, ts.svc.count("UnaryCall"))
			assert.Equal(t, 2*tc.wait, clk.Now())
			assert.Equal(t, []time.Duration{tc.wait, tc.wait}, waits(rec.Of(retry.EventAttempt)))
		})
	}
}

// GR-5: the server's delay is read into the StatusError the caller gets.
func TestGR5_StatusErrorCarriesTheServerDelay(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(1)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	ts.svc.script("UnaryCall", failsWithPushback(codes.Unavailable, "1234"))
	_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	se := requireStatusError(t, err, codes.Unavailable)
	d, ok := se.RetryAfter()
	assert.True(t, ok)
	assert.Equal(t, 1234*time.Millisecond, d)
	assert.False(t, se.NeverRetried())

	ts.svc.script("UnaryCall", failsWithDelay(codes.ResourceExhausted, 3*time.Second))
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	se = requireStatusError(t, err, codes.ResourceExhausted)
	d, ok = se.RetryAfter()
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "the server's limiter said when to come back")
	assert.ErrorIs(t, err, resiliencegrpc.ErrNotFailure)
}

// GR-5: a method that is not idempotent is tried once, whatever the code; so is every
// method when Idempotent is empty. A whole service can be named idempotent.
func TestGR5_NonIdempotentMethodIsTriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      resiliencegrpc.ClientConfig
		attempts int
	}{
		{"another method idempotent", idempotentUnary, 1},
		{"none idempotent", resiliencegrpc.ClientConfig{}, 1},
		{"the service idempotent", resiliencegrpc.ClientConfig{Idempotent: []string{wholeService}}, 3},
		{"the method idempotent", resiliencegrpc.ClientConfig{Idempotent: []string{emptyCall}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, rec := newRegistry(t, clock.NewManual())
			cl := newClient(t, reg, tc.cfg, resilience.Retry(retry.MaxAttempts(3)))
			ts := startServer(t, bufnet, nil)
			ts.svc.script("EmptyCall", fails(codes.Unavailable), fails(codes.Unavailable), fails(codes.Unavailable))

			_, err := ts.client(t, cl).EmptyCall(context.Background(), &testpb.Empty{})
			se := requireStatusError(t, err, codes.Unavailable)
			assert.Equal(t, tc.attempts, ts.svc.count("EmptyCall"))
			if tc.attempts == 1 {
				assert.True(t, se.NeverRetried())
				assert.Equal(t, 1, rec.Count(retry.EventAborted))
			}
		})
	}
}

// GR-5: ResourceExhausted is retried only when the server said when to come back.
func TestGR5_ResourceExhaustedIsRetriedOnlyWithAServerDelay(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(2)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	ts.svc.script("UnaryCall", fails(codes.ResourceExhausted))
	_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	se := requireStatusError(t, err, codes.ResourceExhausted)
	assert.True(t, se.NeverRetried())
	assert.NotErrorIs(t, err, ratelimit.ErrExceeded, "no delay: not a rate limiter's refusal")
	assert.Equal(t, 1, ts.svc.count("UnaryCall"))

	ts.svc.script("UnaryCall", failsWithDelay(codes.ResourceExhausted, time.Second))
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, 3, ts.svc.count("UnaryCall"))
}

// GR-5: a negative or invalid pushback asks not to retry; a delay beyond MaxRetryDelay
// (one minute by default), or past the call's deadline, is not waited for: the call is
// not retried.
func TestGR5_PushbackAndDelaysThatAreNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      resiliencegrpc.ClientConfig
		reply    reply
		deadline time.Duration // 0: none
		attempts int
	}{
		{"negative pushback", idempotentUnary, failsWithPushback(codes.Unavailable, "-1"), 0, 1},
		{"pushback not a number", idempotentUnary, failsWithPushback(codes.Unavailable, "soon"), 0, 1},
		{"pushback with a fraction", idempotentUnary, failsWithPushback(codes.Unavailable, "1.5"), 0, 1},
		{"empty pushback", idempotentUnary, failsWithPushback(codes.Unavailable, ""), 0, 1},
		{"RetryInfo at the default MaxRetryDelay", idempotentUnary, failsWithDelay(codes.Unavailable, time.Minute), 0, 2},
		{"RetryInfo beyond the default MaxRetryDelay", idempotentUnary,
			failsWithDelay(codes.Unavailable, time.Minute+time.Millisecond), 0, 1},
		{"pushback beyond the default MaxRetryDelay", idempotentUnary, failsWithPushback(codes.Unavailable, "60001"), 0, 1},
		{"RetryInfo within MaxRetryDelay", resiliencegrpc.ClientConfig{Idempotent: []string{unaryCall}, MaxRetryDelay: time.Second},
			failsWithDelay(codes.Unavailable, time.Second), 0, 2},
		{"RetryInfo beyond MaxRetryDelay", resiliencegrpc.ClientConfig{Idempotent: []string{unaryCall}, MaxRetryDelay: time.Second},
			failsWithDelay(codes.Unavailable, time.Second+time.Nanosecond), 0, 1},
		{"pushback beyond MaxRetryDelay", resiliencegrpc.ClientConfig{Idempotent: []string{unaryCall}, MaxRetryDelay: time.Second},
			failsWithPushback(codes.Unavailable, "1001"), 0, 1},
		{"RetryInfo past the deadline", resiliencegrpc.ClientConfig{Idempotent: []string{unaryCall}, MaxRetryDelay: 10 * time.Hour},
			failsWithDelay(codes.Unavailable, 2*time.Hour), time.Hour, 1},
		{"pushback past the deadline", idempotentUnary, failsWithPushback(codes.Unavailable, "50000"), 10 * time.Second, 1},
		{"RetryInfo before the deadline", idempotentUnary, failsWithDelay(codes.Unavailable, 30*time.Second), time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual()
			reg, _ := newRegistry(t, clk)
			cl := newClient(t, reg, tc.cfg, resilience.Retry(retry.MaxAttempts(2)))
			ts := startServer(t, bufnet, nil)
			ts.svc.script("UnaryCall", tc.reply)
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}

			_, err := ts.client(t, cl).UnaryCall(ctx, &testpb.SimpleRequest{})
			assert.Equal(t, tc.attempts, ts.svc.count("UnaryCall"))
			if tc.attempts == 1 {
				se := requireStatusError(t, err, codes.Unavailable)
				assert.True(t, se.NeverRetried())
				assert.Zero(t, clk.Now(), "nothing waited")
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// GR-5: RetryCodes replaces the codes retried; an empty list retries none.
func TestGR5_RetryCodesAreConfigurable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		codes    []codes.Code
		code     codes.Code
		attempts int
	}{
		{"Internal listed", []codes.Code{codes.Internal, codes.Aborted}, codes.Internal, 2},
		{"Unavailable not listed", []codes.Code{codes.Internal}, codes.Unavailable, 1},
		{"empty list", []codes.Code{}, codes.Unavailable, 1},
		{"default: Internal not retried", nil, codes.Internal, 1},
		{"default: Unavailable retried", nil, codes.Unavailable, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newRegistry(t, clock.NewManual())
			cl := newClient(t, reg, resiliencegrpc.ClientConfig{RetryCodes: tc.codes, Idempotent: []string{unaryCall}},
				resilience.Retry(retry.MaxAttempts(2)))
			ts := startServer(t, bufnet, nil)
			ts.svc.script("UnaryCall", fails(tc.code), fails(tc.code))

			_, err := ts.client(t, cl).UnaryCall(context.Background(), &testpb.SimpleRequest{})
			requireStatusError(t, err, tc.code)
			assert.Equal(t, tc.attempts, ts.svc.count("UnaryCall"))
		})
	}
}

// GR-1, GR-5 end to end on one manual clock: the server's per-peer Limit refuses the
// third call with RetryInfo 500ms; the client's retry waits exactly that and the retry
// is admitted.
func TestGR5_ClientWaitsTheServerLimitersDelay(t *testing.T) {
	clk := clock.NewManual()
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clk, 2), nil))
	require.NoError(t, err)
	ts := startServer(t, tcp, srv)
	reg, rec := newRegistry(t, clk)
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(2), retry.Delay(time.Hour)))
	c := ts.client(t, cl)

	for range 3 {
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.NoError(t, err)
	}
	assert.Equal(t, 500*time.Millisecond, clk.Now())
	assert.Equal(t, []time.Duration{500 * time.Millisecond}, waits(rec.Of(retry.EventAttempt)))
	assert.Equal(t, 3, ts.svc.count("UnaryCall"))
	assert.EqualValues(t, 4, ts.svc.arrived.Load())
}

// GR-5: each attempt gets its own timeout, whose deadline gRPC sends to the server
// (real clock: the deadline the handler sees is within a minute of the hour given).
func TestGR5_EachAttemptSendsItsOwnTimeoutAsDeadline(t *testing.T) {
	reg, rec := newRegistry(t, clock.System())
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(2), retry.Delay(0)),
		resilience.Timeout(time.Hour))
	ts := startServer(t, bufnet, nil)
	ts.svc.script("UnaryCall", fails(codes.Unavailable))

	_, err := ts.client(t, cl).UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	assert.Equal(t, 2, ts.svc.count("UnaryCall"))
	assert.Equal(t, 1, rec.Count(retry.EventAttempt))
	left := time.Duration(ts.svc.deadline.Load())
	assert.LessOrEqual(t, left, time.Hour)
	assert.Greater(t, left, 59*time.Minute)
}

// GR-5: a refusal by the client's own rate limiter is waited for by the retry (the call
// was not sent), whatever the method; the attempt then finds its permit.
func TestGR5_RetryWaitsForTheClientsOwnPermit(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Retry(retry.MaxAttempts(2), retry.Delay(100*time.Millisecond)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	for range 2 {
		_, err := c.EmptyCall(context.Background(), &testpb.Empty{})
		require.NoError(t, err)
	}
	assert.Equal(t, time.Second, clk.Now(), "the retry waited for the next permit, not its 100ms")
	assert.Equal(t, 2, ts.svc.count("EmptyCall"))
	assert.EqualValues(t, 2, ts.svc.arrived.Load(), "the refused attempt was not sent")
}

var registerIdemProto sync.Once

// idemService is a service "r4g.test.Idem" with methods Get (idempotency_level
// IDEMPOTENT), Peek (NO_SIDE_EFFECTS) and Put (none), registered once in the global proto
// registry; as a register function of startServer, it serves them with the test
// service's script and counts (by method name: "Get").
func idemService(t *testing.T) func(*grpc.Server, *testService) {
	t.Helper()
	registerIdemProto.Do(func() {
		level := func(l descriptorpb.MethodOptions_IdempotencyLevel) *descriptorpb.MethodOptions {
			return &descriptorpb.MethodOptions{IdempotencyLevel: l.Enum()}
		}
		method := func(name string, opts *descriptorpb.MethodOptions) *descriptorpb.MethodDescriptorProto {
			return &descriptorpb.MethodDescriptorProto{Name: &name, InputType: ptr(".google.protobuf.Empty"),
				OutputType: ptr(".google.protobuf.Empty"), Options: opts}
		}
		fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
			Name: ptr("r4g/test/idem.proto"), Package: ptr("r4g.test"), Syntax: ptr("proto3"),
			Dependency: []string{"google/protobuf/empty.proto"},
			Service: []*descriptorpb.ServiceDescriptorProto{{Name: ptr("Idem"), Method: []*descriptorpb.MethodDescriptorProto{
				method("Get", level(descriptorpb.MethodOptions_IDEMPOTENT)),
				method("Peek", level(descriptorpb.MethodOptions_NO_SIDE_EFFECTS)),
				method("Put", nil),
			}}},
		}, protoregistry.GlobalFiles)
		if err == nil {
			err = protoregistry.GlobalFiles.RegisterFile(fd)
		}
		require.NoError(t, err)
	})
	return func(s *grpc.Server, svc *testService) {
		handler := func(name string) grpc.MethodDesc {
			return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				if err := dec(&emptypb.Empty{}); err != nil {
					return nil, err
				}
				if err := svc.unary(ctx, name); err != nil {
					return nil, err
				}
				return &emptypb.Empty{}, nil
			}}
		}
		s.RegisterService(&grpc.ServiceDesc{ServiceName: "r4g.test.Idem", HandlerType: (*any)(nil),
			Methods: []grpc.MethodDesc{handler("Get"), handler("Peek"), handler("Put")}}, struct{}{})
	}
}

func ptr[T any](v T) *T { return &v }

// GR-5: a method whose proto definition says idempotency_level IDEMPOTENT or
// NO_SIDE_EFFECTS is idempotent without being named; one without the option is not.
func TestGR5_ProtoIdempotencyLevelMakesAMethodIdempotent(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Retry(retry.MaxAttempts(2)))
	ts := startServer(t, bufnet, nil, idemService(t))
	conn := ts.dial(t, cl)

	for method, attempts := range map[string]int{"Get": 2, "Peek": 2, "Put": 1} {
		ts.svc.script(method, fails(codes.Unavailable), fails(codes.Unavailable))
		err := conn.Invoke(context.Background(), "/r4g.test.Idem/"+method, &emptypb.Empty{}, &emptypb.Empty{})
		requireStatusError(t, err, codes.Unavailable)
		assert.Equal(t, attempts, ts.svc.count(method), method)
	}
}

// GR-6: with CircuitBreaker(SlidingWindowSize(3), MinimumCalls(3)), the failure codes
// Unavailable, Internal and DeadlineExceeded open the breaker; the next call fails at
// once with Unavailable, matching circuitbreaker.ErrOpen, and does not reach the server.
func TestGR6_FailureCodesOpenTheBreaker(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{},
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(3), circuitbreaker.MinimumCalls(3)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)

	for _, code := range []codes.Code{codes.Unavailable, codes.Internal, codes.DeadlineExceeded} {
		require.Equal(t, circuitbreaker.Closed, cb.Snapshot().State)
		ts.svc.script("UnaryCall", fails(code))
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		requireStatusError(t, err, code)
	}
	require.Equal(t, circuitbreaker.Open, cb.Snapshot().State)
	assert.Equal(t, 3, ts.svc.count("UnaryCall"))

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, circuitbreaker.ErrOpen)
	var re *resiliencegrpc.Error
	assert.ErrorAs(t, err, &re)
	assert.Equal(t, 3, ts.svc.count("UnaryCall"), "the server's count did not move")
	assert.EqualValues(t, 3, ts.svc.arrived.Load())
}

// GR-6: the success codes count as successes: many of them leave the breaker closed,
// and the caller still gets each status.
func TestGR6_SuccessCodesKeepTheBreakerClosed(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{},
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)

	success := []codes.Code{codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.FailedPrecondition, codes.Aborted, codes.OutOfRange, codes.Unimplemented, codes.Unauthenticated}
	for range 3 {
		for _, code := range success {
			ts.svc.script("UnaryCall", fails(code))
			_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			se := requireStatusError(t, err, code)
			assert.ErrorIs(t, se, resiliencegrpc.ErrNotFailure, "a success is not a failure")
		}
	}
	snap := cb.Snapshot()
	assert.Equal(t, circuitbreaker.Closed, snap.State)
	assert.Equal(t, 4, snap.BufferedCalls)
	assert.Zero(t, snap.FailedCalls)
}

// GR-6: a code in neither list (Unknown, ResourceExhausted, DataLoss, Canceled) matches
// ErrNotFailure: this package's CircuitBreaker ignores it, resilience.CircuitBreaker
// counts it as a failure.
func TestGR6_OtherCodesAreIgnoredByCircuitBreaker(t *testing.T) {
	neither := []codes.Code{codes.Unknown, codes.ResourceExhausted, codes.DataLoss, codes.Canceled}
	for _, tc := range []struct {
		name  string
		spec  resilience.Spec
		state string
	}{
		{"IgnoreOn(ErrNotFailure, ErrExceeded)", resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4)), circuitbreaker.Closed},
		{"resilience.CircuitBreaker", resilience.CircuitBreaker(circuitbreaker.SlidingWindowSize(4), circuitbreaker.MinimumCalls(4)), circuitbreaker.Open},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newRegistry(t, clock.NewManual())
			cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, tc.spec)
			ts := startServer(t, bufnet, nil)
			c := ts.client(t, cl)
			for _, code := range neither {
				ts.svc.script("UnaryCall", fails(code))
				_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
				requireStatusError(t, err, code)
				assert.ErrorIs(t, err, resiliencegrpc.ErrNotFailure)
			}
			cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
			require.NoError(t, err)
			assert.Equal(t, tc.state, cb.Snapshot().State)
		})
	}
}

// GR-6: FailureCodes and SuccessCodes replace the defaults: NotFound as a failure opens
// the breaker; Unavailable, in neither list, is then ignored.
func TestGR6_CodeListsAreConfigurable(t *testing.T) {
	cfg := resiliencegrpc.ClientConfig{FailureCodes: []codes.Code{codes.NotFound},
		SuccessCodes: []codes.Code{codes.InvalidArgument}}
	for _, tc := range []struct {
		code  codes.Code
		state string
	}{{codes.NotFound, circuitbreaker.Open}, {codes.Unavailable, circuitbreaker.Closed}, {codes.InvalidArgument, circuitbreaker.Closed}} {
		t.Run(tc.code.String(), func(t *testing.T) {
			reg, _ := newRegistry(t, clock.NewManual())
			cl := newClient(t, reg, cfg, resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(3), circuitbreaker.MinimumCalls(3)))
			ts := startServer(t, bufnet, nil)
			c := ts.client(t, cl)
			for range 3 {
				ts.svc.script("UnaryCall", fails(tc.code))
				_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
				requireStatusError(t, err, tc.code)
			}
			cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
			require.NoError(t, err)
			assert.Equal(t, tc.state, cb.Snapshot().State)
		})
	}
}

// GR-6, GR-7: the client's own rate limiter's refusals do not open this package's
// breaker; each is an *Error with ResourceExhausted and the exact RetryInfo.
func TestGR6_ClientLimiterRefusalsDoNotOpenTheBreaker(t *testing.T) {
	clk := clock.NewManual()
	reg, _ := newRegistry(t, clk)
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{},
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded), circuitbreaker.SlidingWindowSize(2), circuitbreaker.MinimumCalls(2)),
		resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)

	_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	for range 10 {
		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		requireRefused(t, err, time.Hour)
		var re *resiliencegrpc.Error
		require.ErrorAs(t, err, &re)
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
	}
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	snap := cb.Snapshot()
	assert.Equal(t, circuitbreaker.Closed, snap.State)
	assert.Equal(t, 1, snap.BufferedCalls)
	assert.Equal(t, 1, ts.svc.count("UnaryCall"))
}

// GR-6, GR-5: an open breaker's refusal is not retried: one refusal, no attempt sent.
func TestGR6_OpenBreakerIsNotRetried(t *testing.T) {
	reg, rec := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(5)), resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)))
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	_ = cb.TransitionTo(circuitbreaker.ForcedOpen)

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, circuitbreaker.ErrOpen)
	assert.Equal(t, 1, rec.Count(circuitbreaker.EventRejected))
	assert.Zero(t, rec.Count(retry.EventAttempt))
	assert.Zero(t, ts.svc.arrived.Load())
}

// GR-7: the refusals of the client's own policies are *Error values with the mapped
// status (status.Code works on them) that unwrap to the policy's error.
func TestGR7_ClientRefusalsAreErrorsThatUnwrapToThePolicyError(t *testing.T) {
	t.Run("open breaker", func(t *testing.T) {
		reg, _ := newRegistry(t, clock.NewManual())
		cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)))
		ts := startServer(t, bufnet, nil)
		cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
		require.NoError(t, err)
		_ = cb.TransitionTo(circuitbreaker.ForcedOpen)

		_, err = ts.client(t, cl).UnaryCall(context.Background(), &testpb.SimpleRequest{})
		var re *resiliencegrpc.Error
		require.ErrorAs(t, err, &re)
		var open policy.Rejection
		require.ErrorAs(t, err, &open)
		assert.Equal(t, circuitbreaker.Layer, open.RejectedBy())
		assert.ErrorIs(t, re.Unwrap(), circuitbreaker.ErrOpen)
		assert.Equal(t, codes.Unavailable, re.GRPCStatus().Code())
		assert.Equal(t, "rpc error: code = Unavailable desc = "+re.Unwrap().Error(), re.Error())
		assert.Zero(t, ts.svc.arrived.Load())
	})
	t.Run("rate limiter", func(t *testing.T) {
		clk := clock.NewManual()
		reg, _ := newRegistry(t, clk)
		cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Second)))
		ts := startServer(t, bufnet, nil)
		c := ts.client(t, cl)

		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.NoError(t, err)
		_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		requireRefused(t, err, time.Second)
		var re *resiliencegrpc.Error
		require.ErrorAs(t, err, &re)
		var exceeded *ratelimit.ExceededError
		assert.ErrorAs(t, err, &exceeded)
		assert.ErrorIs(t, err, ratelimit.ErrExceeded)
		clk.Advance(250 * time.Millisecond)
		_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		requireRefused(t, err, 750*time.Millisecond)
		assert.EqualValues(t, 1, ts.svc.arrived.Load())
	})
	t.Run("bulkhead", func(t *testing.T) {
		reg, _ := newRegistry(t, clock.NewManual())
		cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Bulkhead(bulkhead.MaxConcurrent(1)))
		ts := startServer(t, bufnet, nil)
		c := ts.client(t, cl)
		g := ts.svc.park("UnaryCall")
		first := callUnary(c)
		receive(t, g.entered, "the first call in the handler")

		_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		assert.Equal(t, codes.ResourceExhausted, status.Code(err))
		var re *resiliencegrpc.Error
		assert.ErrorAs(t, err, &re)
		var full policy.Rejection
		assert.ErrorAs(t, err, &full)
		assert.Equal(t, bulkhead.Layer, full.RejectedBy())
		assert.ErrorIs(t, err, bulkhead.ErrFull)
		_, has := resiliencegrpc.RetryDelay(err)
		assert.False(t, has)
		g.open()
		require.NoError(t, receive(t, first, "the first call's end"))
		assert.EqualValues(t, 1, ts.svc.arrived.Load())
	})
	t.Run("timeout", func(t *testing.T) {
		clk := clock.NewManual()
		reg, rec := newRegistry(t, clk)
		cl := newClient(t, reg, resiliencegrpc.ClientConfig{}, resilience.Timeout(100*time.Millisecond))
		ts := startServer(t, bufnet, nil)
		c := ts.client(t, cl)
		g := ts.svc.park("UnaryCall")
		done := callUnary(c)
		receive(t, g.entered, "the call in the handler")
		clk.Advance(100 * time.Millisecond)

		err := receive(t, done, "the call's end")
		assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
		var re *resiliencegrpc.Error
		assert.ErrorAs(t, err, &re)
		var te *timeout.Error
		assert.ErrorAs(t, err, &te)
		assert.ErrorIs(t, err, timeout.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 1, rec.Count(timeout.EventExceeded))
		await(t, ts.svc.ended, "UnaryCall")
	})
}

// GR-9: a call whose context is already done is not sent and takes nothing: no permit,
// no attempt, no breaker outcome, no event; it ends with the context's error as a status.
func TestGR9_DoneContextTakesNothing(t *testing.T) {
	clk := clock.NewManual()
	reg, rec := newRegistry(t, clk)
	cl := newClient(t, reg, idempotentUnary, resilience.Retry(retry.MaxAttempts(3)),
		resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)), resilience.RateLimiter(ratelimit.Permits(1), ratelimit.Period(time.Hour)),
		resilience.Bulkhead(bulkhead.MaxConcurrent(1)), resilience.Timeout(time.Second))
	ts := startServer(t, bufnet, nil)
	conn := ts.dial(t, cl)
	c := testpb.NewTestServiceClient(conn)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		ctx  context.Context
		code codes.Code
		err  error
	}{{canceled, codes.Canceled, context.Canceled}, {expired, codes.DeadlineExceeded, context.DeadlineExceeded}} {
		_, err := c.UnaryCall(tc.ctx, &testpb.SimpleRequest{})
		assert.Equal(t, tc.code, status.Code(err))
		assert.ErrorIs(t, err, tc.err)
		var re *resiliencegrpc.Error
		assert.ErrorAs(t, err, &re)
		_, err = c.StreamingOutputCall(tc.ctx, &testpb.StreamingOutputCallRequest{})
		assert.Equal(t, tc.code, status.Code(err))
		assert.ErrorIs(t, err, tc.err)
	}
	assert.Empty(t, rec.Events())
	assert.Zero(t, ts.svc.arrived.Load())
	assert.Zero(t, ts.svc.streams.Load())
	rl, err := reg.RateLimiter("svc")
	require.NoError(t, err)
	assert.Equal(t, 1, rl.Snapshot().AvailablePermits)
	cb, err := resilience.Lookup[*circuitbreaker.Breaker](reg, circuitbreaker.Layer, "svc")
	require.NoError(t, err)
	assert.Zero(t, cb.Snapshot().BufferedCalls)
	assert.Zero(t, clk.PendingTasks())

	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err, "the permit is still there")
}

// GR-5, GR-6: NewClient's configuration errors and their codes.
func TestGR5_NewClientConfigErrors(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	for _, tc := range []struct {
		name  string
		cfg   resiliencegrpc.ClientConfig
		specs []resilience.Spec
		code  string
	}{
		{"retry code 0", resiliencegrpc.ClientConfig{RetryCodes: []codes.Code{codes.OK}}, nil, r4c.OutOfRange},
		{"retry code 17", resiliencegrpc.ClientConfig{RetryCodes: []codes.Code{17}}, nil, r4c.OutOfRange},
		{"failure code 0", resiliencegrpc.ClientConfig{FailureCodes: []codes.Code{codes.OK}}, nil, r4c.OutOfRange},
		{"failure code 17", resiliencegrpc.ClientConfig{FailureCodes: []codes.Code{17}}, nil, r4c.OutOfRange},
		{"success code 0", resiliencegrpc.ClientConfig{SuccessCodes: []codes.Code{0}}, nil, r4c.OutOfRange},
		{"success code 17", resiliencegrpc.ClientConfig{SuccessCodes: []codes.Code{17}}, nil, r4c.OutOfRange},
		{"code in both lists", resiliencegrpc.ClientConfig{FailureCodes: []codes.Code{codes.Unavailable},
			SuccessCodes: []codes.Code{codes.NotFound, codes.Unavailable}}, nil, r4c.OutOfRange},
		{"failure code among the default successes", resiliencegrpc.ClientConfig{FailureCodes: []codes.Code{codes.NotFound}},
			nil, r4c.OutOfRange},
		{"negative MaxRetryDelay", resiliencegrpc.ClientConfig{MaxRetryDelay: -time.Nanosecond}, nil, r4c.NegativeDuration},
		{"bad idempotent name", resiliencegrpc.ClientConfig{Idempotent: []string{"UnaryCall"}}, nil, r4c.BadSpec},
		{"empty idempotent name", resiliencegrpc.ClientConfig{Idempotent: []string{""}}, nil, r4c.BadSpec},
		{"hedge", resiliencegrpc.ClientConfig{}, []resilience.Spec{resilience.Hedge(hedge.MaxAttempts(2))}, "R4C-HDG-001"},
		{"bad retry", resiliencegrpc.ClientConfig{}, []resilience.Spec{resilience.Retry(retry.MaxAttempts(0))}, r4c.OutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := resiliencegrpc.NewClient(reg, "bad", tc.cfg, tc.specs...)
			require.Error(t, err)
			assert.Nil(t, cl)
			var ce *policy.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.code, r4c.CodeOf(err), "%v", err)
		})
	}
	_, err := resiliencegrpc.NewClient(nil, "svc", resiliencegrpc.ClientConfig{})
	assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "nil registry: %v", err)
	cl, err := resiliencegrpc.NewClient(reg, "good", resiliencegrpc.ClientConfig{RetryCodes: []codes.Code{1, 16}, FailureCodes: []codes.Code{16},
		SuccessCodes: []codes.Code{1}, Idempotent: []string{wholeService, unaryCall}})
	require.NoError(t, err)
	require.NotNil(t, cl)
}

// BenchmarkClientUnaryInterceptor measures a successful call through the client's
// interceptor, with a fake invoker (no network).
func BenchmarkClientUnaryInterceptor(b *testing.B) {
	for _, bc := range []struct {
		name  string
		specs []resilience.Spec
	}{
		{"none", nil},
		{"Retry+CircuitBreaker+RateLimiter+Timeout", []resilience.Spec{resilience.Retry(retry.MaxAttempts(3)),
			resilience.CircuitBreaker(circuitbreaker.IgnoreOn(resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded)), resilience.RateLimiter(ratelimit.Permits(1_000_000_000), ratelimit.Period(time.Second)),
			resilience.Timeout(time.Second)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			reg, err := resilience.NewRegistry()
			require.NoError(b, err)
			cl, err := resiliencegrpc.NewClient(reg, "bench", idempotentUnary, bc.specs...)
			require.NoError(b, err)
			unary := cl.UnaryInterceptor()
			invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := unary(ctx, unaryCall, nil, nil, nil, invoker); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
