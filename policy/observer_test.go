package policy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/ratelimit"
)

type refusal struct{ l policy.Layer }

func (r refusal) Error() string                        { return "refused by " + string(r.l) }
func (r refusal) RejectedBy() policy.Layer             { return r.l }
func (refusal) Record(context.Context, policy.Outcome) {}

// OB-5: RejectedBy finds the layer of a rejection returned as is or wrapped, and nothing
// in any other error.
func TestOB5_RejectedBy(t *testing.T) {
	l, ok := policy.RejectedBy(refusal{"mine"})
	assert.True(t, ok)
	assert.Equal(t, policy.Layer("mine"), l)
	l, ok = policy.RejectedBy(fmt.Errorf("call: %w", refusal{bulkhead.Layer}))
	assert.True(t, ok)
	assert.Equal(t, bulkhead.Layer, l)
	for _, err := range []error{nil, errors.New("boom"), fmt.Errorf("x: %w", context.Canceled)} {
		l, ok = policy.RejectedBy(err)
		assert.False(t, ok, "%v", err)
		assert.Empty(t, l)
	}
	err := error(refusal{ratelimit.Layer})
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = policy.RejectedBy(err) }))
	other := errors.New("boom")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = policy.RejectedBy(other) }), "an error that is no rejection")
}

// OB-5: the results have their metric names.
func TestOB5_ResultNames(t *testing.T) {
	assert.Equal(t, "admitted", policy.ResultAdmitted.String())
	assert.Equal(t, "timed_out", policy.ResultTimedOut.String())
	assert.Equal(t, "aborted", policy.ResultAborted.String())
	assert.Equal(t, "Result(0)", policy.Result(0).String())
	assert.Equal(t, "Result(99)", policy.Result(99).String())
}

type untimed struct {
	refusal
	off bool
}

func (u untimed) Event(context.Context, policy.Event) {}
func (u untimed) Untimed() bool                       { return u.off }

type timedRec struct{ refusal }

func (timedRec) Event(context.Context, policy.Event) {}

// OB-1: a recorder wants latencies unless it says it does not.
func TestOB1_Timed(t *testing.T) {
	assert.False(t, policy.Timed(nil))
	assert.True(t, policy.Timed(timedRec{}))
	assert.True(t, policy.Timed(untimed{off: false}))
	assert.False(t, policy.Timed(untimed{off: true}))
}
