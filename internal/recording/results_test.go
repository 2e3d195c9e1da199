package recording_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy/observe"
)

// OB-5: the results have their metric names.
func TestOB5_ResultNames(t *testing.T) {
	assert.Equal(t, "admitted", recording.ResultName(observe.ResultAdmitted))
	assert.Equal(t, "timed_out", recording.ResultName(observe.ResultTimedOut))
	assert.Equal(t, "aborted", recording.ResultName(observe.ResultAborted))
	assert.Equal(t, "Result(0)", recording.ResultName(observe.Result(0)))
	assert.Equal(t, "Result(99)", recording.ResultName(observe.Result(99)))
}
