package policy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/ratelimit"
)

type refusal struct{ l policy.Layer }

func (r refusal) Error() string                { return "refused by " + string(r.l) }
func (r refusal) RejectedBy() policy.Layer     { return r.l }
func (refusal) Refusal() policy.Refusal        { return policy.RefusalOverloaded }
func (refusal) RetryIn() (time.Duration, bool) { return 0, false }

// OB-5: a user's rejection is found in an error's tree, returned as is or wrapped, and
// in no other error; finding it allocates nothing.
func TestOB5_RejectionFoundAsIsOrWrapped(t *testing.T) {
	r, ok := errors.AsType[policy.Rejection](refusal{"mine"})
	require.True(t, ok)
	assert.Equal(t, policy.Layer("mine"), r.RejectedBy())
	r, ok = errors.AsType[policy.Rejection](fmt.Errorf("call: %w", refusal{bulkhead.Layer}))
	require.True(t, ok)
	assert.Equal(t, bulkhead.Layer, r.RejectedBy())
	for _, err := range []error{nil, errors.New("boom"), fmt.Errorf("x: %w", context.Canceled)} {
		_, ok = errors.AsType[policy.Rejection](err)
		assert.False(t, ok, "%v", err)
	}
	err := error(refusal{ratelimit.Layer})
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = errors.AsType[policy.Rejection](err) }))
	other := errors.New("boom")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = errors.AsType[policy.Rejection](other) }), "an error that is no rejection")
}
