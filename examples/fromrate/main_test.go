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

// On one timeline, x/time/rate and resilience4go admit the same calls for the same quota
// (10 per second, bursts of 10), and for a bucket smaller than the rate (5 permits per
// 500ms); a refused Reserve gives the same delay as rate's reservation; Acquire with a
// MaxWait waits for the next permit, as Wait does.
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `at 0s, 15 calls:             x/time/rate 10, resilience4go 10 | bucket of 5: 5, 5
100ms later, 3 calls:        x/time/rate  1, resilience4go  1 | bucket of 5: 1, 1
350ms later, 5 calls:        x/time/rate  3, resilience4go  3 | bucket of 5: 3, 3
after 2s idle, 15 calls:     x/time/rate 10, resilience4go 10 | bucket of 5: 5, 5
Reserve: ratelimit: rate limit exceeded; retry after 100ms
x/time/rate's ReserveN: OK true, delay 100ms
Acquire with the burst spent: err <nil>, after 100ms
`, out.String())
}
