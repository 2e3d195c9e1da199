package nilcheck_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/nilcheck"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type thing struct{}

func (*thing) Do() {}

type doer interface{ Do() }

func TestIs(t *testing.T) {
	var p *thing
	var d doer = p
	var m map[string]int
	var f func()
	var c chan int
	var s []int
	for name, v := range map[string]any{"nil": nil, "pointer": p, "interface holding nil": d, "map": m, "func": f, "chan": c, "slice": s} {
		assert.True(t, nilcheck.Is(v), name)
	}
	for name, v := range map[string]any{"pointer": &thing{}, "int": 0, "string": "", "struct": thing{}, "func": func() {}, "empty map": map[string]int{}} {
		assert.False(t, nilcheck.Is(v), name)
	}
}
