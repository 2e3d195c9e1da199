package resiliencegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// sheddingLayer is the layer of a user's policy that sheds load.
const sheddingLayer policy.Layer = "loadShedder"

// shed is a user's policy's rejection: a policy.Rejection that says why and, when it
// knows, when to come back.
type shed struct {
	why     policy.Refusal
	wait    time.Duration
	hasWait bool
}

func (e *shed) Error() string                  { return "loadShedder: shedding load" }
func (e *shed) RejectedBy() policy.Layer       { return sheddingLayer }
func (e *shed) Refusal() policy.Refusal        { return e.why }
func (e *shed) RetryIn() (time.Duration, bool) { return e.wait, e.hasWait }

func refusal(why policy.Refusal) *shed { return &shed{why: why} }

func refusalIn(why policy.Refusal, wait time.Duration) *shed {
	return &shed{why: why, wait: wait, hasWait: true}
}

// plainRejection names a layer but does not say why: it is no policy.Rejection.
type plainRejection struct{}

func (plainRejection) Error() string            { return "gate: closed" }
func (plainRejection) RejectedBy() policy.Layer { return sheddingLayer }

// GR-10: Status maps a user's policy's rejection through policy.Rejection as it maps the
// built-in policies' rejections: an overload is ResourceExhausted, with RetryInfo when
// the rejection tells its wait; an unavailable dependency is Unavailable; a rejection that
// does not say why is any other error.
func TestGR10_StatusMapsAUsersRefusal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		code  codes.Code
		delay time.Duration // the RetryInfo's; -1 for none
	}{
		{"overloaded, with a wait", refusalIn(policy.RefusalOverloaded, 1500*time.Millisecond), codes.ResourceExhausted, 1500 * time.Millisecond},
		{"overloaded, wrapped", fmt.Errorf("calling the shop: %w", refusalIn(policy.RefusalOverloaded, time.Second)), codes.ResourceExhausted, time.Second},
		{"overloaded, a negative wait is 0", refusalIn(policy.RefusalOverloaded, -time.Second), codes.ResourceExhausted, 0},
		{"overloaded, without a wait", refusal(policy.RefusalOverloaded), codes.ResourceExhausted, -1},
		{"unavailable", refusal(policy.RefusalUnavailable), codes.Unavailable, -1},
		{"unavailable, with a wait: no RetryInfo", refusalIn(policy.RefusalUnavailable, time.Second), codes.Unavailable, -1},
		{"unspecified", refusal(policy.RefusalUnspecified), codes.Unknown, -1},
		{"an error that is no Rejection", plainRejection{}, codes.Unknown, -1},
		{"ended by the context", errors.Join(refusal(policy.RefusalOverloaded), context.DeadlineExceeded), codes.DeadlineExceeded, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := resiliencegrpc.Status(tc.err)
			assert.Equal(t, tc.code, st.Code())
			assert.Equal(t, tc.err.Error(), st.Message())
			d, ok := resiliencegrpc.RetryDelay(st.Err())
			if tc.delay < 0 {
				assert.False(t, ok, "RetryInfo %v", d)
				assert.Empty(t, st.Details())
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tc.delay, d)
		})
	}
}

// shedder is a user's policy that refuses every call with its rejection.
type shedder struct{ rej error }

func (s shedder) Layer() policy.Layer { return sheddingLayer }
func (s shedder) Decorate(policy.Call[any]) policy.Call[any] {
	return func(context.Context) (any, error) { return nil, s.rej }
}
func (s shedder) DecorateAsync(policy.AsyncCall[any]) policy.AsyncCall[any] {
	return func(context.Context) *async.Future[any] { return async.Failed[any](s.rej) }
}

// GR-1: a Guard whose user's policy refuses a call answers it with the status its
// policy.Rejection says, as it answers a built-in policy's refusal, and the call does not
// reach the handler.
func TestGR1_GuardAnswersAUsersRefusal(t *testing.T) {
	for _, tc := range []struct {
		name string
		rej  *shed
		code codes.Code
	}{
		{"overloaded", refusalIn(policy.RefusalOverloaded, 2*time.Second), codes.ResourceExhausted},
		{"unavailable", refusal(policy.RefusalUnavailable), codes.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newRegistry(t, clock.NewManual())
			srv, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(reg, "guard",
				[]resilience.Spec{resilience.Use[any](shedder{rej: tc.rej})}))
			require.NoError(t, err)
			ts := startServer(t, bufnet, srv)

			_, err = ts.client(t, nil).EmptyCall(context.Background(), &testpb.Empty{})
			require.Error(t, err)
			assert.Equal(t, tc.code, status.Code(err), "%v", err)
			assert.Equal(t, "resiliencegrpc: "+emptyCall+": "+tc.rej.Error(), status.Convert(err).Message(),
				"the method, then the policy's error")
			d, ok := resiliencegrpc.RetryDelay(err)
			assert.Equal(t, tc.rej.hasWait, ok)
			assert.Equal(t, tc.rej.wait, d)
			assert.Zero(t, ts.svc.count("EmptyCall"), "the refused call does not reach the handler")
		})
	}
}
