package resiliencegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/policy/timeout"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

type none = struct{}

func noop(context.Context, none) (none, error) { return none{}, nil }

// limiterRejection returns the rejection of a limiter of 2 permits per second on clk,
// whose permits two calls have taken.
func limiterRejection(t *testing.T, clk clock.Clock) error {
	t.Helper()
	l, err := ratelimit.New(ratelimit.Permits(2), ratelimit.Period(time.Second), ratelimit.WithClock(clk))
	require.NoError(t, err)
	call := ratelimit.NewPolicy[none](l).Decorate(func(ctx context.Context) (none, error) { return noop(ctx, none{}) })
	for range 2 {
		_, err := call(context.Background())
		require.NoError(t, err)
	}
	_, err = call(context.Background())
	require.Error(t, err)
	return err
}

// bulkheadRejection returns the rejection of a full bulkhead of one slot.
func bulkheadRejection(t *testing.T) error {
	t.Helper()
	b, err := bulkhead.New(bulkhead.MaxConcurrent(1))
	require.NoError(t, err)
	entered, release := make(chan struct{}), make(chan struct{})
	call := bulkhead.NewPolicy[none](b).Decorate(func(context.Context) (none, error) {
		close(entered)
		<-release
		return none{}, nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = call(context.Background())
	}()
	<-entered
	_, err = call(context.Background())
	close(release)
	<-done
	require.Error(t, err)
	return err
}

// breakerRejection returns the rejection of a breaker forced open.
func breakerRejection(t *testing.T) error {
	t.Helper()
	b, err := circuitbreaker.New()
	require.NoError(t, err)
	_ = b.TransitionTo(circuitbreaker.ForcedOpen)
	_, err = circuitbreaker.NewPolicy[none](b).Decorate(func(ctx context.Context) (none, error) { return noop(ctx, none{}) })(context.Background())
	require.Error(t, err)
	return err
}

// timeoutError returns the error of a call that a timeout of 1s on a manual clock ended.
func timeoutError(t *testing.T) error {
	t.Helper()
	clk := clock.NewManual()
	to, err := timeout.New(time.Second, timeout.WithClock(clk))
	require.NoError(t, err)
	entered := make(chan struct{})
	call := timeout.NewPolicy[none](to).Decorate(func(ctx context.Context) (none, error) {
		close(entered)
		<-ctx.Done()
		return none{}, ctx.Err()
	})
	res := make(chan error, 1)
	go func() {
		_, err := call(context.Background())
		res <- err
	}()
	<-entered
	clk.Advance(time.Second)
	err = <-res
	require.Error(t, err)
	return err
}

// GR-10: Status maps every policy error to its status, keeps the status of an error that
// has one, and uses the error's text as the message.
func TestGR10_StatusMapsEveryPolicyError(t *testing.T) {
	clk := clock.NewManual()
	keyed := perPeer(t, clk, 1)
	require.NoError(t, keyed.Acquire(context.Background(), "a", 1))
	keyedRejection := keyed.Acquire(context.Background(), "a", 1)
	require.Error(t, keyedRejection)
	burst := keyed.Acquire(context.Background(), "b", 2)
	require.ErrorIs(t, burst, ratelimit.ErrExceedsBurst)

	withDetail, err := status.New(codes.NotFound, "no such thing").
		WithDetails(&errdetails.ErrorInfo{Reason: "GONE"})
	require.NoError(t, err)
	plain := errors.New("something broke")

	for _, tc := range []struct {
		name  string
		err   error
		code  codes.Code
		delay time.Duration // the RetryInfo's; -1 for none
	}{
		{"nil", nil, codes.OK, -1},
		{"a limiter's rejection", limiterRejection(t, clk), codes.ResourceExhausted, 500 * time.Millisecond},
		{"a wrapped limiter's rejection", fmt.Errorf("calling: %w", limiterRejection(t, clk)), codes.ResourceExhausted, 500 * time.Millisecond},
		{"a keyed limiter's rejection", keyedRejection, codes.ResourceExhausted, -1},
		{"ratelimit.ErrExceeded", ratelimit.ErrExceeded, codes.ResourceExhausted, -1},
		{"more permits than the burst", burst, codes.ResourceExhausted, -1},
		{"ratelimit.ErrExceedsBurst", ratelimit.ErrExceedsBurst, codes.ResourceExhausted, -1},
		{"a full bulkhead", bulkheadRejection(t), codes.ResourceExhausted, -1},
		{"bulkhead.ErrFull", bulkhead.ErrFull, codes.ResourceExhausted, -1},
		{"adaptivelimit.ErrLimitExceeded", adaptivelimit.ErrLimitExceeded, codes.ResourceExhausted, -1},
		{"a wrapped adaptive limit refusal", fmt.Errorf("x: %w", adaptivelimit.ErrLimitExceeded), codes.ResourceExhausted, -1},
		{"an open breaker", breakerRejection(t), codes.Unavailable, -1},
		{"circuitbreaker.ErrOpen", circuitbreaker.ErrOpen, codes.Unavailable, -1},
		{"a timeout", timeoutError(t), codes.DeadlineExceeded, -1},
		{"timeout.ErrTimeout", timeout.ErrTimeout, codes.DeadlineExceeded, -1},
		{"context.DeadlineExceeded", context.DeadlineExceeded, codes.DeadlineExceeded, -1},
		{"context.Canceled", context.Canceled, codes.Canceled, -1},
		{"a wrapped context.Canceled", fmt.Errorf("gave up: %w", context.Canceled), codes.Canceled, -1},
		{"a limiter's refusal ended by the context", errors.Join(ratelimit.ErrExceeded, context.DeadlineExceeded), codes.DeadlineExceeded, -1},
		{"a breaker's refusal of a canceled call", errors.Join(circuitbreaker.ErrOpen, context.Canceled), codes.Canceled, -1},
		{"a ConfigError", r4c.Errorf(r4c.BadPermits, "rateLimiter.permits", "0", "permits must be at least 1"), codes.Internal, -1},
		{"policy.ErrNilContext", policy.ErrNilContext, codes.Internal, -1},
		{"a plain error", plain, codes.Unknown, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := resiliencegrpc.Status(tc.err)
			require.NotNil(t, st)
			assert.Equal(t, tc.code, st.Code())
			if tc.err == nil {
				assert.Empty(t, st.Message())
			} else {
				assert.Equal(t, tc.err.Error(), st.Message())
			}
			d, ok := resiliencegrpc.RetryDelay(st.Err())
			if tc.delay < 0 {
				assert.False(t, ok, "RetryInfo %v", d)
				assert.Empty(t, st.Details())
			} else {
				assert.True(t, ok)
				assert.Equal(t, tc.delay, d)
			}
		})
	}

	t.Run("an existing status", func(t *testing.T) {
		for _, err := range []error{withDetail.Err(), fmt.Errorf("wrapped: %w", withDetail.Err())} {
			st := resiliencegrpc.Status(err)
			assert.Equal(t, codes.NotFound, st.Code())
			assert.Equal(t, "no such thing", st.Message())
			require.Len(t, st.Details(), 1)
			assert.Equal(t, "GONE", st.Details()[0].(*errdetails.ErrorInfo).GetReason())
		}
	})
	t.Run("the next permit is read when Status is called", func(t *testing.T) {
		clk := clock.NewManual()
		err := limiterRejection(t, clk)
		clk.Advance(200 * time.Millisecond)
		d, ok := resiliencegrpc.RetryDelay(resiliencegrpc.Status(err).Err())
		assert.True(t, ok)
		assert.Equal(t, 300*time.Millisecond, d)
		clk.Advance(time.Second)
		d, ok = resiliencegrpc.RetryDelay(resiliencegrpc.Status(err).Err())
		assert.True(t, ok)
		assert.Zero(t, d, "the permit is free: come back now")
	})
}

// GR-10: Status keeps the status of the package's own errors: a server refusal (*Error)
// and a client's view of a server status (*StatusError).
func TestGR10_StatusKeepsThePackagesOwnStatuses(t *testing.T) {
	srv, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(perPeer(t, clock.NewManual(), 1), resiliencegrpc.ByMethod))
	require.NoError(t, err)
	ts := startServer(t, bufnet, srv)
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{})
	c := ts.client(t, cl)
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	require.NoError(t, err)
	_, err = c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	var se *resiliencegrpc.StatusError
	require.ErrorAs(t, err, &se)
	st := resiliencegrpc.Status(err)
	assert.Same(t, se.GRPCStatus(), st)
	d, ok := resiliencegrpc.RetryDelay(st.Err())
	assert.True(t, ok)
	assert.Equal(t, time.Second, d)
}

// GR-10: RetryDelay reads the RetryInfo detail of an error's status, wrapped or not, and
// refuses a missing, negative or invalid delay.
func TestGR10_RetryDelay(t *testing.T) {
	withDetails := func(details ...*errdetails.RetryInfo) error {
		st := status.New(codes.Unavailable, "busy")
		for _, d := range details {
			var err error
			st, err = st.WithDetails(d)
			require.NoError(t, err)
		}
		return st.Err()
	}
	info := func(d *durationpb.Duration) *errdetails.RetryInfo { return &errdetails.RetryInfo{RetryDelay: d} }
	other, err := status.New(codes.Unavailable, "busy").WithDetails(&errdetails.ErrorInfo{Reason: "X"},
		info(durationpb.New(1500*time.Millisecond)))
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		err  error
		want time.Duration
		ok   bool
	}{
		{"nil", nil, 0, false},
		{"a plain error", errors.New("x"), 0, false},
		{"a status without details", status.Error(codes.Unavailable, "busy"), 0, false},
		{"a RetryInfo of 2s", withDetails(info(durationpb.New(2 * time.Second))), 2 * time.Second, true},
		{"a RetryInfo of 0", withDetails(info(durationpb.New(0))), 0, true},
		{"a wrapped RetryInfo", fmt.Errorf("call: %w", withDetails(info(durationpb.New(time.Millisecond)))), time.Millisecond, true},
		{"after another detail", other.Err(), 1500 * time.Millisecond, true},
		{"a negative delay", withDetails(info(durationpb.New(-time.Second))), 0, false},
		{"an invalid delay", withDetails(info(&durationpb.Duration{Seconds: 1, Nanos: -5})), 0, false},
		{"nanos out of range", withDetails(info(&durationpb.Duration{Nanos: 2e9})), 0, false},
		{"no delay in the RetryInfo", withDetails(info(nil)), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := resiliencegrpc.RetryDelay(tc.err)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, d)
		})
	}
}

// GR-10: a *StatusError matches ErrNotFailure for a code that is not a failure (a success
// code too),
// ratelimit.ErrExceeded for ResourceExhausted with a server delay, and the context's
// errors for DeadlineExceeded and Canceled; nothing else.
func TestGR10_StatusErrorIs(t *testing.T) {
	reg, _ := newRegistry(t, clock.NewManual())
	cl := newClient(t, reg, resiliencegrpc.ClientConfig{})
	ts := startServer(t, bufnet, nil)
	c := ts.client(t, cl)
	targets := []error{resiliencegrpc.ErrNotFailure, ratelimit.ErrExceeded, context.DeadlineExceeded, context.Canceled}

	for _, tc := range []struct {
		name  string
		reply reply
		is    []bool // per target
	}{
		{"Unavailable", fails(codes.Unavailable), []bool{false, false, false, false}},
		{"NotFound", fails(codes.NotFound), []bool{true, false, false, false}},
		{"Unknown", fails(codes.Unknown), []bool{true, false, false, false}},
		{"ResourceExhausted", fails(codes.ResourceExhausted), []bool{true, false, false, false}},
		{"ResourceExhausted with RetryInfo", failsWithDelay(codes.ResourceExhausted, time.Second), []bool{true, true, false, false}},
		{"ResourceExhausted with pushback", failsWithPushback(codes.ResourceExhausted, "100"), []bool{true, true, false, false}},
		{"Unavailable with RetryInfo", failsWithDelay(codes.Unavailable, time.Second), []bool{false, false, false, false}},
		{"DeadlineExceeded", fails(codes.DeadlineExceeded), []bool{false, false, true, false}},
		{"Canceled", fails(codes.Canceled), []bool{true, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts.svc.script("UnaryCall", tc.reply)
			_, err := c.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			var se *resiliencegrpc.StatusError
			require.ErrorAs(t, err, &se)
			for i, target := range targets {
				assert.Equal(t, tc.is[i], errors.Is(err, target), "errors.Is(%v, %v)", err, target)
			}
			assert.False(t, errors.Is(err, circuitbreaker.ErrOpen))
		})
	}
}

// GR-7, GR-10: nil and zero values of the error types answer without panicking.
func TestGR10_NilAndZeroErrors(t *testing.T) {
	var e *resiliencegrpc.Error
	assert.Equal(t, "resiliencegrpc: call refused", e.Error())
	assert.Nil(t, e.GRPCStatus())
	assert.NoError(t, e.Unwrap())
	assert.Equal(t, "resiliencegrpc: call refused", (&resiliencegrpc.Error{}).Error())

	var se *resiliencegrpc.StatusError
	for _, v := range []*resiliencegrpc.StatusError{se, {}} {
		assert.Equal(t, "resiliencegrpc: unsuccessful status", v.Error())
		assert.Nil(t, v.GRPCStatus())
		assert.Equal(t, codes.Unknown, v.Code())
		_, ok := v.RetryAfter()
		assert.False(t, ok)
		assert.True(t, v.NeverRetried())
	}
	assert.False(t, se.Is(context.Canceled))
}
