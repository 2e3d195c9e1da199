package redis_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.Main(m)) }
