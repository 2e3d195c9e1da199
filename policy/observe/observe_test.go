package observe_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/policy/observe"
)

// OB-5: the results have their metric names.
func TestOB5_ResultNames(t *testing.T) {
	assert.Equal(t, "admitted", observe.ResultAdmitted.String())
	assert.Equal(t, "timed_out", observe.ResultTimedOut.String())
	assert.Equal(t, "aborted", observe.ResultAborted.String())
	assert.Equal(t, "Result(0)", observe.Result(0).String())
	assert.Equal(t, "Result(99)", observe.Result(99).String())
}
