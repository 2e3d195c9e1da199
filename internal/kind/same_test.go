package kind

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

type sameConfig struct {
	N    int
	F    float64
	S    string
	Errs []error
	Src  rand.Source
	If   *Predicate
	hid  int
}

// Values compare by value, references by identity: two errors with the same text, two
// random sources with the same state, two predicates from two options are different.
func TestSame(t *testing.T) {
	errA, errB := errors.New("x"), errors.New("x")
	src := rand.NewPCG(1, 2)
	pred := NewPredicate(func(int, error) bool { return true })
	base := sameConfig{N: 1, F: 0.5, S: "s", Errs: []error{errA}, Src: src, If: pred, hid: 3}
	assert.True(t, Same(base, base))
	c := base
	c.Errs = []error{errA}
	assert.True(t, Same(base, c), "a new slice of the same errors")
	for name, mutate := range map[string]func(*sameConfig){
		"int":       func(c *sameConfig) { c.N = 2 },
		"float":     func(c *sameConfig) { c.F = 0.25 },
		"string":    func(c *sameConfig) { c.S = "t" },
		"error":     func(c *sameConfig) { c.Errs = []error{errB} },
		"length":    func(c *sameConfig) { c.Errs = nil },
		"source":    func(c *sameConfig) { c.Src = rand.NewPCG(1, 2) },
		"predicate": func(c *sameConfig) { c.If = NewPredicate(func(int, error) bool { return true }) },
		"hidden":    func(c *sameConfig) { c.hid = 4 },
	} {
		c := base
		mutate(&c)
		assert.False(t, Same(base, c), name)
	}
	assert.True(t, Same(sameConfig{}, sameConfig{Errs: []error{}}), "nil and empty lists are the same")
	assert.True(t, Same(sameConfig{F: math.NaN()}, sameConfig{F: math.NaN()}))
	assert.False(t, Same(1, "1"))
	assert.True(t, Same(nil, nil))
}
