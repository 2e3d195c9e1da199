package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/ratelimit"
)

// A nil backend, or one not made by New, fails the limiter's build with R4C-REG-010.
// (Fault: Bind on a nil backend panicked.)
func TestBind_NilOrZeroBackend(t *testing.T) {
	var nilBackend *Backend
	for name, b := range map[string]*Backend{"nil": nilBackend, "zero": {}} {
		var err error
		require.NotPanics(t, func() {
			_, err = ratelimit.New(ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.WithBackend(b))
		}, name)
		assert.Equal(t, r4c.BadSpec, r4c.CodeOf(err), "%s: %v", name, err)
	}
	assert.Equal(t, 1, nilBackend.LocalShare(), "a nil backend takes the whole quota")
}
