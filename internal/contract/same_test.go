package contract

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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

// Difference names each field that Same finds different, and says why references that
// look alike differ (fault: a conflict printed two configurations that looked the same).
func TestDifference(t *testing.T) {
	errA, errB := errors.New("x"), errors.New("x")
	pred := NewPredicate(func(int, error) bool { return true })
	src := rand.NewPCG(1, 2)
	base := sameConfig{N: 1, F: 0.5, S: "s", Errs: []error{errA}, Src: src, If: pred, hid: 3}
	assert.Empty(t, Difference(base, base))
	for want, mutate := range map[string]func(*sameConfig){
		"N: 1 vs 2":      func(c *sameConfig) { c.N = 2 },
		"F: 0.5 vs 0.25": func(c *sameConfig) { c.F = 0.25 },
		`S: "s" vs "t"`:  func(c *sameConfig) { c.S = "t" },
		"Errs: the error values differ (errors are compared by identity, not by text)": func(c *sameConfig) { c.Errs = []error{errB} },
		"Errs: 1 error vs 0 errors": func(c *sameConfig) { c.Errs = nil },
		"Src: not the same rand.Source (compared by identity)": func(c *sameConfig) {
			c.Src = rand.NewPCG(1, 2)
		},
		"If: the predicates differ (a predicate is the same only when it comes from one option value)": func(c *sameConfig) {
			c.If = NewPredicate(func(int, error) bool { return true })
		},
		"hid: 3 vs 4": func(c *sameConfig) { c.hid = 4 },
		"N: 1 vs 2; F: 0.5 vs 0.25; S: \"s\" vs \"t\"; and more": func(c *sameConfig) {
			c.N, c.F, c.S, c.hid = 2, 0.25, "t", 4
		},
	} {
		c := base
		mutate(&c)
		assert.Equal(t, want, Difference(base, c))
	}
	// Long values are cut; a Shared's fields are named as its Config's.
	long := sameConfig{S: strings.Repeat("é", 10_000)}
	d := Difference(sameConfig{}, long)
	assert.Less(t, len(d), 100)
	assert.True(t, utf8.ValidString(d))
	assert.Equal(t, "N: 1 vs 2", Difference(Shared[sameConfig]{Config: base}, Shared[sameConfig]{Config: sameConfig{N: 2, F: 0.5, S: "s", Errs: []error{errA}, Src: src, If: pred, hid: 3}}))
	assert.Equal(t, "result predicate: the predicates differ (a predicate is the same only when it comes from one option value)",
		Difference(Shared[int]{If: pred}, Shared[int]{}))
	assert.Equal(t, "a int vs a string", Difference(1, "1"))
	assert.Equal(t, "set in one configuration only", Difference(nil, 1))
	assert.Equal(t, "Src: set in one configuration only", Difference(sameConfig{}, sameConfig{Src: rand.NewPCG(1, 2)}))
	assert.Equal(t, "3s vs 4s", Difference(3*time.Second, 4*time.Second))
	assert.Equal(t, "[1]: 2 vs 3", Difference([]int{1, 2}, []int{1, 3}))
	type held struct{ X any }
	assert.Equal(t, "X: 3 vs 4", Difference(held{3}, held{4}), "a value in an interface is compared by value")
	assert.Equal(t, "X: a int vs a string", Difference(held{3}, held{"3"}))
	assert.Empty(t, Difference(held{3}, held{3}))
	assert.Empty(t, Difference(sameConfig{}, sameConfig{Errs: []error{}}), "nil and empty lists are the same")
	assert.Empty(t, Difference(sameConfig{F: math.NaN()}, sameConfig{F: math.NaN()}))
}
