package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// SPEC RL-3, RL-6, RL-7, RL-9b: the example's output, on its manual clock: a burst of 5 passes,
// the 6th call is refused at once with a retry-after of one emission interval (200ms)
// because its permit is beyond MaxWait, and waits for it once it is within MaxWait; on its
// own, a refused Reserve's Delay is the retry-after, after which a permit is free; per
// client, one client's spent quota leaves another's untouched.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `-- wrapped: 5 per second, waiting up to 100ms
    0s found Paris after waiting 0s
    0s found Lyon after waiting 0s
    0s found Nice after waiting 0s
    0s found Lille after waiting 0s
    0s found Brest after waiting 0s
    0s Metz: rejected at once, retry in 200ms
 100ms found Metz after waiting 100ms
-- on its own: 2 per second
try: true true false
reserve: ratelimit: rate limit exceeded for "reports" - retry after 500ms
after the retry-after: true
-- per client: 2 per second each
alice admitted=true  remaining=1 retry-after=0s
alice admitted=true  remaining=0 retry-after=0s
alice admitted=false remaining=0 retry-after=500ms
bob   admitted=true  remaining=1 retry-after=0s
`, out.String())
}
