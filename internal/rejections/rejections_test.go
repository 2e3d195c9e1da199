package rejections_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/rejections"
)

type testRejection struct{ cause error }

func (e *testRejection) Error() string { return "rejected" }
func (e *testRejection) Unwrap() error { return e.cause }

// SPEC RL-6, RL-8: rejections are made once; each standard context error has its own.
func TestSet_PreallocatedPerContextError(t *testing.T) {
	made := 0
	r := rejections.New(func(cause error) *testRejection { made++; return &testRejection{cause} })
	assert.Equal(t, 3, made)
	assert.Same(t, r.Canceled, r.ForContext(context.Canceled))
	assert.Same(t, r.Deadline, r.ForContext(context.DeadlineExceeded))
	assert.ErrorIs(t, r.Canceled, context.Canceled)
	assert.ErrorIs(t, r.Deadline, context.DeadlineExceeded)
	assert.NoError(t, r.Plain.Unwrap())
	assert.Equal(t, 3, made, "no new error for the standard causes")

	other := errors.New("custom context error")
	got := r.ForContext(other)
	assert.ErrorIs(t, got, other)
	assert.Equal(t, 4, made)
}
