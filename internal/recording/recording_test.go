package recording_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/recording"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/policy/observe"
)

type untimed struct {
	observe.Recorder
	off bool
}

func (u untimed) Event(context.Context, policy.Event) {}
func (u untimed) Untimed() bool                       { return u.off }

type timedRec struct{ observe.Recorder }

func (timedRec) Event(context.Context, policy.Event) {}

// OB-1: a recorder wants latencies unless it says it does not.
func TestOB1_Timed(t *testing.T) {
	assert.False(t, recording.Timed(nil))
	assert.True(t, recording.Timed(timedRec{}))
	assert.True(t, recording.Timed(untimed{off: false}))
	assert.False(t, recording.Timed(untimed{off: true}))
}
