package adaptivelimit_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy/adaptivelimit"
)

// The limiter's error lists are its own: changing the slices given to DropOn and IgnoreOn
// after New, or the ones Config returned, changes neither (how it classifies a sample is decided
// by the lists Config returns a copy of).
func TestErrorListsAreTheLimitersOwn(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	drop, ignore := []error{errA}, []error{errB}
	l, err := adaptivelimit.New(adaptivelimit.WithClock(clock.NewManual()), adaptivelimit.DropOn(drop...),
		adaptivelimit.IgnoreOn(ignore...))
	require.NoError(t, err)
	drop[0], ignore[0] = errB, errA
	c := l.Config()
	c.DropOn[0], c.IgnoreOn[0] = errB, errA
	assert.Equal(t, []error{errA}, l.Config().DropOn)
	assert.Equal(t, []error{errB}, l.Config().IgnoreOn)
}
