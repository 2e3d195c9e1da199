package policy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
	"github.com/resilience4go/resilience4go/policy/bulkhead"
	"github.com/resilience4go/resilience4go/policy/circuitbreaker"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// OB-5: every built-in policy's rejection sentinel is a policy.Rejection that says why its
// layer refuses, so that an adapter maps it without knowing the policy; none of the bare
// sentinels knows when its layer would let a call through.
func TestOB5_BuiltInSentinelsAreRejections(t *testing.T) {
	for _, tc := range []struct {
		err   error
		layer policy.Layer
		why   policy.Refusal
	}{
		{ratelimit.ErrExceeded, ratelimit.Layer, policy.RefusalOverloaded},
		{ratelimit.ErrExceedsBurst, ratelimit.Layer, policy.RefusalOverloaded},
		{bulkhead.ErrFull, bulkhead.Layer, policy.RefusalOverloaded},
		{adaptivelimit.ErrLimitExceeded, adaptivelimit.Layer, policy.RefusalOverloaded},
		{circuitbreaker.ErrOpen, circuitbreaker.Layer, policy.RefusalUnavailable},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			r, ok := tc.err.(policy.Rejection)
			require.True(t, ok)
			assert.Equal(t, tc.layer, r.RejectedBy())
			assert.Equal(t, tc.why, r.Refusal())
			_, known := r.RetryIn()
			assert.False(t, known)
			w, rejected := errors.AsType[policy.Rejection](fmt.Errorf("wrapped: %w", tc.err))
			require.True(t, rejected)
			assert.Equal(t, tc.layer, w.RejectedBy())
		})
	}
}
