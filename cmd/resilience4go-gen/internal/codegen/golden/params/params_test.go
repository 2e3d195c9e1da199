package params

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/resilience"
)

// The generated wrapper renames the parameters whose names its own code uses, and its own
// variables whose names the package's code uses; each argument still reaches the
// implementation in its place (GN-4).

// store records each call with its arguments.
type store struct {
	mu    sync.Mutex
	calls []string
	err   error // what Get and Put fail with
}

func (s *store) record(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func (s *store) Put(_ context.Context, w io.Writer, err error, impl string) error {
	_, _ = io.WriteString(w, impl)
	s.record("Put(%v, %s)", err, impl)
	return s.err
}

func (s *store) Get(_ context.Context, reg string, a int) (string, error) {
	s.record("Get(%s, %d)", reg, a)
	return reg, s.err
}

func (s *store) At(_ context.Context, time time.Duration) (string, error) {
	s.record("At(%v)", time)
	return time.String(), nil
}

func (s *store) Policy(_ context.Context, policy string, resilience ...string) *async.Future[int] {
	s.record("Policy(%s, %q)", policy, resilience)
	return async.Completed(len(resilience))
}

func (s *store) Tag(_ context.Context, a string, b ...string) error {
	s.record("Tag(%s, %q)", a, b)
	return nil
}

func (s *store) Last(ctx context.Context, ctxName string) (string, error) {
	s.record("Last(%s, ctx is a context: %t)", ctxName, ctx != nil)
	return ctxName, nil
}

func (s *store) One(_ context.Context, context string) error {
	s.record("One(%s)", context)
	return nil
}

func (s *store) Args(_ context.Context, name string, n, m int) (int, error) {
	s.record("Args(%s, %d, %d)", name, n, m)
	return n - m, nil
}

func TestStore_ArgumentsReachTheImplementation(t *testing.T) {
	impl := &store{}
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	w, err := NewStoreResilient(impl, reg)
	require.NoError(t, err)
	ctx := context.Background()

	var buf bytes.Buffer
	require.NoError(t, w.Put(ctx, &buf, io.EOF, "the impl"))
	assert.Equal(t, "the impl", buf.String(), "the writer w reached Put")
	got, err := w.Get(ctx, "the reg", 7)
	require.NoError(t, err)
	assert.Equal(t, "the reg", got)
	got, err = w.At(ctx, 90*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "1m30s", got)
	n, err := w.Policy(ctx, "p", "r1", "r2").Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, w.Tag(ctx, "t"))
	require.NoError(t, w.Tag(ctx, "t", "x", "y"))
	got, err = w.Last(ctx, "named ctx")
	require.NoError(t, err)
	assert.Equal(t, "named ctx", got)
	require.NoError(t, w.One(ctx, "named context"))
	n, err = w.Args(ctx, "args", 5, 3)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	assert.Equal(t, []string{
		"Put(EOF, the impl)",
		"Get(the reg, 7)",
		"At(1m30s)",
		`Policy(p, ["r1" "r2"])`,
		`Tag(t, [])`,
		`Tag(t, ["x" "y"])`,
		"Last(named ctx, ctx is a context: true)",
		"One(named context)",
		"Args(args, 5, 3)",
	}, impl.calls)
}

// The package-level names the generated constructor refers to, which it does not hide
// with its own variables: the fallback function impl answers Get's failures, and Put's
// retry aborts on the error variable a.
func TestStore_PackageNamesStayVisible(t *testing.T) {
	impl := &store{err: errors.New("down")}
	reg, err := resilience.NewRegistry(resilience.WithClock(clock.NewManual()))
	require.NoError(t, err)
	w, err := NewStoreResilient(impl, reg)
	require.NoError(t, err)
	ctx := context.Background()
	got, err := w.Get(ctx, "x", 1)
	require.NoError(t, err)
	assert.Equal(t, "impl", got, "the fallback function impl answered")

	require.Error(t, w.Put(ctx, io.Discard, nil, "retried"))
	impl.err = a
	require.ErrorIs(t, w.Put(ctx, io.Discard, nil, "aborted"), a)
	assert.Equal(t, []string{"Get(x, 1)", "Put(<nil>, retried)", "Put(<nil>, retried)", "Put(<nil>, aborted)"},
		impl.calls, "maxAttempts=2, abortOn=a")
}
