package contracttest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/contract"
	"github.com/resilience4go/resilience4go/internal/r4c"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type toy struct{ N int }

// RequireRefused accepts a table that refuses bad values with their codes.
func TestRequireRefused(t *testing.T) {
	d := &contract.Descriptor[toy]{
		L:        "toy",
		Attrs:    []contract.Attr[toy]{contract.IntAttr("n", func(s *toy) *int { return &s.N })},
		Defaults: func() toy { return toy{N: 1} },
	}
	s := toy{N: 5}
	RequireRefused(t, d, &s, []BadValue{
		{Attr: "n", Value: "five", Code: r4c.BadNumber},
		{Attr: "m", Value: "1", Code: r4c.UnknownKey},
	})
}

// RequireDescriptor accepts a registered descriptor that says what it is.
func TestRequireDescriptor(t *testing.T) {
	d := &contract.Descriptor[toy]{
		L:        "toyDescribed",
		Attrs:    []contract.Attr[toy]{contract.IntAttr("n", func(s *toy) *int { return &s.N })},
		Defaults: func() toy { return toy{N: 1} },
	}
	defer contract.Register(d)()
	RequireDescriptor(t, d, "toyDescribed", "toyDescribed", []string{"n"}, toy{N: 1})
}
