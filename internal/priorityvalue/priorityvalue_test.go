package priorityvalue_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/priorityvalue"
	"github.com/resilience4go/resilience4go/policy"
)

// Parse reads what policy.ParsePriority reads, up to MaxLen bytes.
func TestParse_AgreesWithParsePriority(t *testing.T) {
	for _, s := range []string{
		"sheddable", "sheddable_plus", "critical", "critical_plus", "0", "1", "2", "3",
		"Critical", "CRITICAL-PLUS", " sheddable ", "sheddable-plus", "+2", "03",
		"", "4", "-1", "critical plus", "high", "2.0", "critical_plus\x00", "İ",
	} {
		want, werr := policy.ParsePriority(s)
		got, ok := priorityvalue.Parse(s)
		assert.Equal(t, werr == nil, ok, "%q", s)
		if ok {
			assert.Equal(t, want, got, "%q", s)
		}
	}
}

func TestParse_LongValueIsNotRead(t *testing.T) {
	s := strings.Repeat(" ", priorityvalue.MaxLen) + "critical"
	_, err := policy.ParsePriority(s)
	assert.NoError(t, err, "ParsePriority would read it")
	_, ok := priorityvalue.Parse(s)
	assert.False(t, ok)
	_, ok = priorityvalue.Parse(strings.Repeat("x", 1<<20))
	assert.False(t, ok)
}

func TestParse_CanonicalSpellingsAllocateNothing(t *testing.T) {
	for p := policy.PrioritySheddable; p <= policy.PriorityCriticalPlus; p++ {
		s := p.String()
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = priorityvalue.Parse(s) }), s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"critical", "Sheddable-Plus", "3", " 1 ", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := priorityvalue.Parse(s)
		if len(s) > priorityvalue.MaxLen {
			if ok {
				t.Fatalf("%q read", s)
			}
			return
		}
		want, err := policy.ParsePriority(s)
		if ok != (err == nil) || ok && got != want {
			t.Fatalf("%q: got %v %v, ParsePriority %v %v", s, got, ok, want, err)
		}
	})
}

func TestValid(t *testing.T) {
	assert.True(t, priorityvalue.Valid(policy.PrioritySheddable))
	assert.True(t, priorityvalue.Valid(policy.PriorityCriticalPlus))
	assert.False(t, priorityvalue.Valid(-1))
	assert.False(t, priorityvalue.Valid(4))
}

// Nearest is the level policy.WithPriority stores for a value.
func TestNearest_AgreesWithWithPriority(t *testing.T) {
	for _, p := range []policy.Priority{-128, -1, 0, 1, 2, 3, 4, 127} {
		want := policy.PriorityFrom(policy.WithPriority(context.Background(), p))
		assert.Equal(t, want, priorityvalue.Nearest(p), "%d", p)
	}
}
