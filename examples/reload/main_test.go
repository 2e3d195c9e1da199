package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/contracttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// edits are the files an operator writes, one before each SIGHUP.
var edits = []string{
	// The quota doubled.
	"instances.SearchAPI.Search.rateLimiter.permits = 20\ninstances.SearchAPI.Search.rateLimiter.period = 1s\n",
	// A typo in a key: nothing changes.
	"instances.SearchAPI.Search.rateLimiter.permit = 5\ninstances.SearchAPI.Search.rateLimiter.period = 1s\n",
	// A value out of range: nothing changes.
	"instances.SearchAPI.Search.rateLimiter.permits = 5\ninstances.SearchAPI.Search.rateLimiter.period = 1s\n" +
		"instances.SearchAPI.Search.rateLimiter.maxWait = -1s\n",
	// The same quota as in force.
	"instances.SearchAPI.Search.rateLimiter.permits = 20\ninstances.SearchAPI.Search.rateLimiter.period = 1s\n",
	// A longer period.
	"instances.SearchAPI.Search.rateLimiter.permits = 20\ninstances.SearchAPI.Search.rateLimiter.period = 2s\n",
}

// want is the program's output for edits.
const want = `  1s  10 permits per 1s: 19 of 50 calls passed in the last second
SIGHUP: reloading reload.properties
  SearchAPI.Search: permits changed
  2s  20 permits per 1s: 20 of 50 calls passed in the last second
SIGHUP: reloading reload.properties
  nothing changed: R4C-CFG-001: instances.SearchAPI.Search.rateLimiter.permit: unknown configuration key; did you mean instances.SearchAPI.Search.rateLimiter.permits?
  3s  20 permits per 1s: 20 of 50 calls passed in the last second
SIGHUP: reloading reload.properties
  nothing changed: R4C-ATR-004: instances.SearchAPI.Search.rateLimiter.maxWait = "-1s": maxWait must not be negative
  4s  20 permits per 1s: 20 of 50 calls passed in the last second
SIGHUP: reloading reload.properties
  no setting changed
  5s  20 permits per 1s: 20 of 50 calls passed in the last second
SIGHUP: reloading reload.properties
  SearchAPI.Search: period changed
  6s  20 permits per 2s: 10 of 50 calls passed in the last second
`

// lockedBuffer is a bytes.Buffer safe for one writer and one reader at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// script runs the program on a copy of reload.properties and, for each of edits, writes
// the file and calls send, which must get a SIGHUP to hup; it waits for the second of
// calls that follows each reload, and returns the output.
func script(t *testing.T, hup <-chan os.Signal, send func()) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reload.properties")
	require.NoError(t, os.WriteFile(path, []byte(defaultProperties), 0o644))
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out, path, hup) }()
	seconds := func() int { return strings.Count(out.String(), " calls passed in the last second") }
	contracttest.Eventually(t, func() bool { return seconds() == 1 }, "the first second of calls")
	for i, edit := range edits {
		require.NoError(t, os.WriteFile(path, []byte(edit), 0o644))
		send()
		contracttest.Eventually(t, func() bool { return seconds() == i+2 }, "the second of calls after a reload")
	}
	cancel()
	require.NoError(t, <-done)
	return out.String()
}

// SPEC RC-5, RC-6, RC-3: the program's output, on its manual clock, when the file is
// edited and reloaded: a doubled quota applies from the next call; a typo and a value out
// of range change nothing; the same quota changes nothing and publishes nothing; a longer
// period halves the rate. The reload is what a SIGHUP triggers.
func TestOutput(t *testing.T) {
	hup := make(chan os.Signal, 1)
	assert.Equal(t, want, script(t, hup, func() { hup <- syscall.SIGHUP }))
}
