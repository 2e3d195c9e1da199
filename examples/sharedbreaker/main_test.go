package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/exampletest"
	"github.com/resilience4go/resilience4go/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(redistest.Main(m)) }

// With a Redis server (a redis-server started for the test, or REDIS_ADDR): the output
// shown in the docs. The example gives Redis 100ms a call (the default Timeout): on a
// loaded machine a trial's ticket can take longer, and the instance then goes on alone,
// as it should, so the example gets three tries.
func TestRun(t *testing.T) {
	addr := redistest.Addr(t)
	exampletest.MatchesOutputFile(t, func(ctx context.Context, w io.Writer) error {
		var err error
		for try := 1; try <= 3; try++ {
			var out bytes.Buffer
			if err = run(ctx, &out, addr); err == nil {
				_, err = w.Write(out.Bytes())
				return err
			}
			t.Logf("try %d: %v\n%s", try, err, out.String())
		}
		return err
	})
}
