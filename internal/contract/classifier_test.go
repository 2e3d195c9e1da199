package contract_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/contract"
)

var (
	errA = errors.New("a")
	errB = errors.New("b")
	errC = errors.New("c")
)

func TestClassifier_Error(t *testing.T) {
	var every contract.Classifier
	assert.False(t, every.Error(nil), "a nil error never counts")
	assert.True(t, every.Error(errA), "no Include: every error counts")
	assert.False(t, every.Excluded(errA))

	c := contract.Classifier{Include: []error{errA, errB}, Exclude: []error{errB}}
	assert.True(t, c.Error(errA))
	assert.True(t, c.Error(fmt.Errorf("wrapped: %w", errA)), "matched with errors.Is")
	assert.False(t, c.Error(errB), "Exclude wins over Include")
	assert.False(t, c.Error(fmt.Errorf("wrapped: %w", errB)))
	assert.False(t, c.Error(errC), "outside Include")
	assert.False(t, c.Error(nil))
	assert.True(t, c.Excluded(errB))
	assert.True(t, c.Excluded(fmt.Errorf("wrapped: %w", errB)))
	assert.False(t, c.Excluded(errA))
	assert.False(t, c.Excluded(nil), "nil is never excluded")

	only := contract.Classifier{Exclude: []error{errC}}
	assert.True(t, only.Error(errA), "Exclude alone: every other error counts")
	assert.False(t, only.Error(errC))
}

func unavailable(status int, _ error) bool { return status == 503 }

func TestClassifier_Counts(t *testing.T) {
	c := contract.Classifier{Include: []error{errA}, Exclude: []error{errB}, If: contract.NewPredicate(unavailable)}
	pred := contract.For[int](c.If)
	assert.NotNil(t, pred)

	assert.True(t, contract.Counts(&c, pred, 200, errA), "an included error counts, whatever the result")
	assert.True(t, contract.Counts(&c, pred, 503, nil), "a result the predicate matches counts with a nil error")
	assert.False(t, contract.Counts(&c, pred, 200, nil), "a success the predicate rejects")
	assert.True(t, contract.Counts(&c, pred, 503, errC), "outside Include, the predicate still decides")
	assert.False(t, contract.Counts(&c, pred, 200, errC))
	assert.False(t, contract.Counts(&c, pred, 503, errB), "Exclude wins over the predicate")
	assert.False(t, contract.Counts(&c, pred, 503, fmt.Errorf("wrapped: %w", errB)))

	assert.False(t, contract.Counts[int](&c, nil, 503, nil), "no predicate: a nil error never counts")
	assert.True(t, contract.Counts[int](&c, nil, 0, errA))

	always := func(int, error) bool { return true }
	var every contract.Classifier
	assert.True(t, contract.Counts(&every, always, 0, nil))
	assert.True(t, contract.Counts(&every, nil, 0, errC))
}

func TestPredicate(t *testing.T) {
	assert.Nil(t, contract.NewPredicate[int](nil), "a nil func gives a nil predicate")
	var none *contract.Predicate
	assert.Nil(t, none.ResultType())
	assert.Nil(t, contract.For[int](none))

	p := contract.NewPredicate(unavailable)
	assert.Equal(t, reflect.TypeFor[int](), p.ResultType())
	assert.NotNil(t, contract.For[int](p))
	assert.True(t, contract.For[int](p)(503, nil))
	assert.Nil(t, contract.For[string](p), "another result type gives no predicate")

	type status struct{ code int }
	q := contract.NewPredicate(func(s *status, _ error) bool { return s != nil && s.code == 503 })
	assert.Equal(t, reflect.TypeFor[*status](), q.ResultType())
	assert.Nil(t, contract.For[status](q), "a value type does not match its pointer type")
	assert.True(t, contract.For[*status](q)(&status{503}, nil))

	assert.NotSame(t, contract.NewPredicate(unavailable), contract.NewPredicate(unavailable),
		"each option boxes its own predicate")
}

func TestAppend(t *testing.T) {
	assert.Nil(t, contract.Append(nil, nil))
	assert.Nil(t, contract.Append(nil, []error{nil, nil}), "nil errors are skipped")
	l := contract.Append(nil, []error{errA, nil})
	assert.Equal(t, []error{errA}, l)
	l = contract.Append(l, []error{errB, errC})
	assert.Equal(t, []error{errA, errB, errC}, l, "a second call adds to the list")
}
