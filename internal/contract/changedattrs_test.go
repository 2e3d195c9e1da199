package contract_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience4go/resilience4go/internal/contract"
)

type changeSettings struct {
	Wait     time.Duration
	Size     int
	Ratio    float64
	Eager    bool
	Disabled bool
}

// ChangedAttrs names, sorted, the attributes whose values differ, as the constructors
// compare them; nil when none does.
func TestChangedAttrs(t *testing.T) {
	attrs := []contract.Attr[changeSettings]{
		contract.DurationAttr("wait", func(s *changeSettings) *time.Duration { return &s.Wait }),
		contract.IntAttr("size", func(s *changeSettings) *int { return &s.Size }),
		contract.FloatAttr("ratio", func(s *changeSettings) *float64 { return &s.Ratio }),
		contract.BoolAttr("eager", func(s *changeSettings) *bool { return &s.Eager }),
		contract.EnabledAttr(func(s *changeSettings) *bool { return &s.Disabled }),
	}
	old := changeSettings{Wait: time.Second, Size: 3, Ratio: 0.5}
	same := old
	assert.Nil(t, contract.ChangedAttrs(attrs, &old, &same))

	cur := changeSettings{Wait: 2 * time.Second, Size: 3, Ratio: 0.25, Eager: true, Disabled: true}
	assert.Equal(t, []string{"eager", "enabled", "ratio", "wait"}, contract.ChangedAttrs(attrs, &old, &cur))

	own := append(attrs, contract.Attr[changeSettings]{Name: "own",
		Set: func(*changeSettings, string) error { return nil }})
	assert.Panics(t, func() { contract.ChangedAttrs(own, &old, &same) })
}
