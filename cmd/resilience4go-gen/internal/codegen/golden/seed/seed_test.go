package seed_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/cmd/resilience4go-gen/internal/codegen/golden/seed"
	"github.com/resilience4go/resilience4go/internal/r4c"
	"github.com/resilience4go/resilience4go/policy"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/resilience"
)

// The generated wrappers compile and behave as the same policies wrapped by hand with
// resilience.Wrap1 and Wrap2 (GN-4): each test builds both, on registries of their own,
// each with a manual clock, drives them with one script, and checks that they do the
// same, and that what they do is what the rules say.

// fake is the implementation of SearchAPI and GeocodingAPI the wrappers call: it answers
// with its input, allocating nothing, and counts its calls.
type fake struct{ calls atomic.Int64 }

func (f *fake) Search(_ context.Context, query string) (string, error) {
	f.calls.Add(1)
	return query, nil
}

func (f *fake) Geocode(_ context.Context, address string) (string, error) {
	f.calls.Add(1)
	return address, nil
}

// Reverse tells its arguments apart without allocating: "lat<lon" or "lat>=lon".
func (f *fake) Reverse(_ context.Context, lat, lon float64) (string, error) {
	f.calls.Add(1)
	if lat < lon {
		return "lat<lon", nil
	}
	return "lat>=lon", nil
}

// side is one of the two wrappers being compared: its registry, its clock, its
// functions, the fake they call and the events the registry published.
type side struct {
	name    string
	clk     *clock.Manual
	reg     *resilience.Registry
	impl    *fake
	search  func(context.Context, string) (string, error)
	geocode func(context.Context, string) (string, error)
	reverse func(context.Context, float64, float64) (string, error)

	mu     sync.Mutex
	events []string
}

// newSide returns a side with a registry on a manual clock that has the configuration
// keys props and, if listen is set, records every event.
func newSide(t *testing.T, name string, props map[string]string, listen bool) *side {
	t.Helper()
	s := &side{name: name, clk: clock.NewManual(), impl: &fake{}}
	opts := []resilience.RegistryOption{resilience.WithClock(s.clk), resilience.WithProperties(props)}
	if listen {
		opts = append(opts, resilience.WithEventListener(func(e policy.Event) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.events = append(s.events, e.String())
		}))
	}
	reg, err := resilience.NewRegistry(opts...)
	require.NoError(t, err)
	s.reg = reg
	return s
}

// generatedSide wraps the fake with the generated constructors.
func generatedSide(t *testing.T, props map[string]string) *side {
	t.Helper()
	return wrapGenerated(t, newSide(t, "generated", props, true))
}

// wrapGenerated wraps the fake of s with the generated constructors.
func wrapGenerated(t *testing.T, s *side) *side {
	t.Helper()
	search, err := seed.NewSearchAPIResilient(s.impl, s.reg)
	require.NoError(t, err)
	geo, err := seed.NewGeocodingAPIResilient(s.impl, s.reg)
	require.NoError(t, err)
	s.search, s.geocode, s.reverse = search.Search, geo.Geocode, geo.Reverse
	return s
}

// handSide wraps the fake by hand, with the options the directives of api.go name and
// the instance ids the generated code gives.
func handSide(t *testing.T, props map[string]string) *side {
	t.Helper()
	return wrapByHand(t, newSide(t, "wrap1", props, true))
}

// wrapByHand wraps the fake of s by hand.
func wrapByHand(t *testing.T, s *side) *side {
	t.Helper()
	var err error
	s.search, err = resilience.Wrap1(s.reg, "SearchAPI.Search", s.impl.Search,
		resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
	require.NoError(t, err)
	quota := resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(5), ratelimit.Period(time.Second),
		ratelimit.MaxWait(500*time.Millisecond))
	s.geocode, err = resilience.Wrap1(s.reg, "GeocodingAPI.Geocode", s.impl.Geocode, quota)
	require.NoError(t, err)
	s.reverse, err = resilience.Wrap2(s.reg, "GeocodingAPI.Reverse", s.impl.Reverse, quota)
	require.NoError(t, err)
	return s
}

// outcome is what one call of a script did.
type outcome struct {
	At       time.Duration // the clock when the call started
	Waited   time.Duration // how far the clock moved during the call
	Result   string
	Rejected bool   // the error matches ratelimit.ErrExceeded
	Limiter  string // the instance id the rejection names
	Err      string
	Calls    int64 // the implementation's calls so far
}

// step is one step of a script: advance the clock, then make calls.
type step struct {
	advance time.Duration
	calls   []func(s *side) (string, error)
}

// play runs script on s and returns the outcome of each call.
func (s *side) play(script []step) []outcome {
	var out []outcome
	for _, st := range script {
		s.clk.Advance(st.advance)
		for _, call := range st.calls {
			start := s.clk.Now()
			got, err := call(s)
			o := outcome{At: start, Waited: s.clk.Now() - start, Result: got, Calls: s.impl.calls.Load()}
			if err != nil {
				o.Err = err.Error()
				o.Rejected = errors.Is(err, ratelimit.ErrExceeded)
				var ee *ratelimit.ExceededError
				if errors.As(err, &ee) {
					o.Limiter = ee.InstanceID()
				}
			}
			out = append(out, o)
		}
	}
	return out
}

func (s *side) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// searches returns n calls of search.
func searches(n int) []func(*side) (string, error) {
	calls := make([]func(*side) (string, error), n)
	for i := range calls {
		q := fmt.Sprintf("q%d", i)
		calls[i] = func(s *side) (string, error) { return s.search(context.Background(), q) }
	}
	return calls
}

// SPEC RL-2, RL-3, RL-6, RG-1: SearchAPI.Search with 10 permits per second: a burst of
// 10 passes, the 11th is rejected with ratelimit.ErrExceeded, naming the instance
// "SearchAPI.Search", without calling the implementation; one permit comes back every
// 100ms; after a quiet second the burst is 10 again. The generated wrapper does exactly
// what Wrap1 does.
func TestSearch_GeneratedBehavesLikeWrap1(t *testing.T) {
	script := []step{
		{0, searches(11)},
		{100 * time.Millisecond, searches(2)},
		{50 * time.Millisecond, searches(1)},
		{50 * time.Millisecond, searches(1)},
		{time.Second, searches(11)},
	}
	gen, hand := generatedSide(t, nil), handSide(t, nil)
	got, want := gen.play(script), hand.play(script)
	require.Equal(t, want, got, "the generated wrapper does what Wrap1 does")
	assert.Equal(t, hand.recorded(), gen.recorded(), "and publishes the same events")
	rejected := func(at, after string) string {
		return "RateLimiterRejected SearchAPI.Search at=" + at + " retry-after=" + after +
			` err=ratelimit: rate limit exceeded for "SearchAPI.Search"`
	}
	assert.Equal(t, []string{
		rejected("0s", "100ms"), // RL-2: the next permit is one emission interval away
		rejected("100ms", "100ms"),
		rejected("150ms", "50ms"),
		rejected("1.2s", "100ms"),
	}, gen.recorded(), "RG-5: a rejection publishes an event; an admitted call, none")

	passed := func(o outcome) bool { return o.Err == "" }
	for i, o := range got[:10] {
		assert.True(t, passed(o), "call %d of the burst passes: %+v", i+1, o)
		assert.Equal(t, fmt.Sprintf("q%d", i), o.Result)
		assert.Equal(t, int64(i+1), o.Calls)
	}
	eleventh := got[10]
	assert.True(t, eleventh.Rejected, "the 11th call is rejected: %+v", eleventh)
	assert.Equal(t, "SearchAPI.Search", eleventh.Limiter)
	assert.Equal(t, `ratelimit: rate limit exceeded for "SearchAPI.Search"`, eleventh.Err)
	assert.Equal(t, int64(10), eleventh.Calls, "a rejected call does not reach the implementation")
	assert.Zero(t, eleventh.Waited, "maxWait is 0: no wait")

	assert.True(t, passed(got[11]), "100ms later one permit has come back: %+v", got[11])
	assert.True(t, got[12].Rejected, "and only one: %+v", got[12])
	assert.True(t, got[13].Rejected, "150ms: the next permit is not back yet: %+v", got[13])
	assert.True(t, passed(got[14]), "200ms: it is: %+v", got[14])
	burst := got[15:]
	for i, o := range burst[:10] {
		assert.True(t, passed(o), "after a quiet second, call %d of the burst passes: %+v", i+1, o)
	}
	assert.True(t, burst[10].Rejected, "and the 11th is rejected: %+v", burst[10])
	assert.Equal(t, int64(22), got[len(got)-1].Calls)
	for _, o := range got {
		assert.Zero(t, o.Waited, "no call waits: %+v", o)
	}
}

// SPEC RG-1, RG-3: the generated wrapper's limiter has the instance id
// "SearchAPI.Search" and the directive's configuration, as Wrap1's has.
func TestSearch_InstanceAndConfiguration(t *testing.T) {
	for _, s := range []*side{generatedSide(t, nil), handSide(t, nil)} {
		h, err := s.reg.RateLimiter("SearchAPI.Search")
		require.NoError(t, err, s.name)
		assert.Equal(t, "SearchAPI.Search", h.Snapshot().Instance, s.name)
		cfg := h.(*ratelimit.Limiter).Config()
		assert.Equal(t, 10, cfg.Permits, s.name)
		assert.Equal(t, time.Second, cfg.Period, s.name)
		assert.Zero(t, cfg.MaxWait, s.name)
		assert.Equal(t, 10, h.Snapshot().AvailablePermits, s.name)
		ids := []string{}
		for _, rl := range s.reg.Snapshot().RateLimiters {
			ids = append(ids, rl.Instance)
		}
		assert.Equal(t, []string{"SearchAPI.Search", "geocoding"}, ids, "%s: one limiter per instance id", s.name)
	}
}

// SPEC RG-4, GN-4: the keys instances.SearchAPI.Search.rateLimiter.* override what the
// directive says, as they override options in code: 3 permits per second pass, not 10.
func TestSearch_InstanceKeysOverrideTheDirective(t *testing.T) {
	props := map[string]string{"instances.SearchAPI.Search.rateLimiter.permits": "3"}
	gen, hand := generatedSide(t, props), handSide(t, props)
	script := []step{{0, searches(4)}}
	got := gen.play(script)
	require.Equal(t, hand.play(script), got)
	assert.Empty(t, got[2].Err, "the 3rd call passes")
	assert.True(t, got[3].Rejected, "the 4th is rejected: %+v", got[3])
	h, err := gen.reg.RateLimiter("SearchAPI.Search")
	require.NoError(t, err)
	assert.Equal(t, 3, h.Snapshot().Permits)
	assert.Empty(t, gen.reg.UnusedKeys(), "the key is used")
}

// geoCall is one call of the geocoding script.
func geoCall(i int) func(*side) (string, error) {
	if i%2 == 0 {
		return func(s *side) (string, error) { return s.geocode(context.Background(), fmt.Sprintf("address %d", i)) }
	}
	return func(s *side) (string, error) { return s.reverse(context.Background(), 0, float64(i)) }
}

// SPEC RG-2, RL-3, RL-7, RL-8: GeocodingAPI's two methods share the limiter named
// "geocoding" (an interface-level directive with name=), 5 permits per second with a
// maxWait of 500ms: the burst of 5 is shared between Geocode and Reverse, then each call
// waits 200ms (1s / 5) for its permit on the caller's goroutine, which on a manual clock
// moves the clock. The generated wrapper does what Wrap1 and Wrap2 with one spec do.
func TestGeocoding_SharedLimiterGeneratedBehavesLikeWrap(t *testing.T) {
	var calls []func(*side) (string, error)
	for i := range 9 {
		calls = append(calls, geoCall(i))
	}
	script := []step{{0, calls}, {time.Second, []func(*side) (string, error){geoCall(1)}}}
	gen, hand := generatedSide(t, nil), handSide(t, nil)
	got, want := gen.play(script), hand.play(script)
	require.Equal(t, want, got, "the generated wrapper does what Wrap1 and Wrap2 do")
	assert.Equal(t, hand.recorded(), gen.recorded(), "and publishes the same events")

	for i, o := range got[:5] {
		assert.Empty(t, o.Err, "call %d", i+1)
		assert.Equal(t, time.Duration(0), o.At, "call %d", i+1)
		assert.Zero(t, o.Waited, "call %d of the shared burst does not wait", i+1)
	}
	assert.Equal(t, "address 0", got[0].Result)
	assert.Equal(t, "lat<lon", got[1].Result, "Reverse(0, 1): the arguments in their places")
	for i, o := range got[5:9] {
		assert.Empty(t, o.Err, "call %d", i+6)
		assert.Equal(t, time.Duration(i)*200*time.Millisecond, o.At, "call %d starts when the one before got its permit", i+6)
		assert.Equal(t, 200*time.Millisecond, o.Waited, "call %d waits 200ms for its permit", i+6)
	}
	assert.Equal(t, int64(10), got[9].Calls, "every call reached the implementation")
	assert.Equal(t, []string{
		"RateLimiterWaited geocoding at=0s wait=200ms",
		"RateLimiterWaited geocoding at=200ms wait=200ms",
		"RateLimiterWaited geocoding at=400ms wait=200ms",
		"RateLimiterWaited geocoding at=600ms wait=200ms",
	}, gen.recorded())

	// One limiter, named geocoding: no limiter has a method's id.
	h, err := gen.reg.RateLimiter("geocoding")
	require.NoError(t, err)
	assert.Equal(t, "geocoding", h.Snapshot().Instance)
	assert.Equal(t, ratelimit.Config{Permits: 5, Period: time.Second, MaxWait: 500 * time.Millisecond}, h.(*ratelimit.Limiter).Config())
	for _, id := range []string{"GeocodingAPI.Geocode", "GeocodingAPI.Reverse"} {
		_, err := gen.reg.RateLimiter(id)
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, id)
		assert.Equal(t, r4c.UnknownInstance, ce.Code, id)
	}
}

// SPEC RG-2: a function wrapped by hand may join the generated wrapper's shared limiter
// only with the same configuration; another one is R4C-REG-008.
func TestGeocoding_SharedNameMustAgree(t *testing.T) {
	gen := generatedSide(t, nil)
	_, err := resilience.Wrap1(gen.reg, "GeocodingAPI.Batch", gen.impl.Geocode,
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(5), ratelimit.Period(time.Second),
			ratelimit.MaxWait(500*time.Millisecond)))
	require.NoError(t, err, "the same configuration joins the limiter")
	_, err = resilience.Wrap1(gen.reg, "GeocodingAPI.Other", gen.impl.Geocode,
		resilience.RateLimiter(ratelimit.Name("geocoding"), ratelimit.Permits(50), ratelimit.Period(time.Second)))
	var ce *policy.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, r4c.Conflict, ce.Code)
}

// SPEC GN-4: a nil implementation, or a nil registry, is R4C-REG-010 from the constructor,
// never a panic at the first call.
func TestNew_NilImplOrRegistry(t *testing.T) {
	reg, err := resilience.NewRegistry()
	require.NoError(t, err)
	for name, err := range map[string]error{
		"nil SearchAPI":    second(seed.NewSearchAPIResilient(nil, reg)),
		"nil GeocodingAPI": second(seed.NewGeocodingAPIResilient(nil, reg)),
		"nil registry":     second(seed.NewSearchAPIResilient(&fake{}, nil)),
	} {
		var ce *policy.ConfigError
		require.ErrorAs(t, err, &ce, name)
		assert.Equal(t, r4c.BadSpec, ce.Code, name)
	}
}

func second[T any](_ T, err error) error { return err }

// The generated wrapper allocates nothing per call, admitted or rejected, as Wrap1 and
// Wrap2 do (SPEC RL-6: rejecting allocates nothing).
func TestGenerated_AllocatesNothing(t *testing.T) {
	admit := map[string]string{
		"instances.SearchAPI.Search.rateLimiter.permits": "1000000000",
		"instances.geocoding.rateLimiter.permits":        "1000000000",
	}
	reject := map[string]string{
		"instances.SearchAPI.Search.rateLimiter.permits": "1",
		"instances.SearchAPI.Search.rateLimiter.period":  "1000h",
	}
	ctx := context.Background()
	// No listener: a rejection's event would be allocated for it.
	a := wrapGenerated(t, newSide(t, "generated", admit, false))
	r := wrapGenerated(t, newSide(t, "generated", reject, false))
	h := wrapByHand(t, newSide(t, "wrap1", admit, false))
	hr := wrapByHand(t, newSide(t, "wrap1", reject, false))
	for _, s := range []*side{r, hr} {
		_, _ = s.search(ctx, "q") // the only permit
		_, err := s.search(ctx, "q")
		require.ErrorIs(t, err, ratelimit.ErrExceeded)
	}
	for name, f := range map[string]func(){
		"generated Search admitted":  func() { _, _ = a.search(ctx, "q") },
		"generated Search rejected":  func() { _, _ = r.search(ctx, "q") },
		"generated Geocode admitted": func() { _, _ = a.geocode(ctx, "a") },
		"generated Reverse admitted": func() { _, _ = a.reverse(ctx, 1, 2) },
		"Wrap1 Search admitted":      func() { _, _ = h.search(ctx, "q") },
		"Wrap1 Search rejected":      func() { _, _ = hr.search(ctx, "q") },
	} {
		assert.Zero(t, testing.AllocsPerRun(1000, f), name)
	}
	_, err := r.search(ctx, "q")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded, "the rejecting limiter still rejects")
	_, err = a.search(ctx, "q")
	assert.NoError(t, err, "the admitting limiter still admits")
	assert.Zero(t, a.clk.Now(), "no call waited")
	assert.Empty(t, a.reg.UnusedKeys(), "instances.geocoding.* configures the shared limiter")
}

// SPEC RG-1: two wrappers built from one registry share its instances, as two functions
// wrapped with one id do: the limiter SearchAPI.Search's 10 permits are for both.
func TestSearch_TwoWrappersShareTheInstance(t *testing.T) {
	s := newSide(t, "generated", nil, false)
	first, err := seed.NewSearchAPIResilient(s.impl, s.reg)
	require.NoError(t, err)
	second, err := seed.NewSearchAPIResilient(s.impl, s.reg)
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 10 {
		w := first
		if i%2 == 1 {
			w = second
		}
		_, err := w.Search(ctx, "q")
		require.NoError(t, err, "call %d", i+1)
	}
	_, err = first.Search(ctx, "q")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	_, err = second.Search(ctx, "q")
	assert.ErrorIs(t, err, ratelimit.ErrExceeded)
	assert.Len(t, s.reg.Snapshot().RateLimiters, 1)
}

// BenchmarkSearch compares a call through the generated wrapper with a call through the
// function Wrap1 returns, with the same rate limiter: one that admits every call (a
// billion permits per second) and one that rejects every call.
func BenchmarkSearch(b *testing.B) {
	for _, c := range []struct {
		name   string
		props  map[string]string
		reject bool
	}{
		{"admitted", map[string]string{"instances.SearchAPI.Search.rateLimiter.permits": "1000000000"}, false},
		{"rejected", map[string]string{
			"instances.SearchAPI.Search.rateLimiter.permits": "1",
			"instances.SearchAPI.Search.rateLimiter.period":  "1000h",
		}, true},
	} {
		for _, impl := range []string{"generated", "wrap1"} {
			b.Run(impl+"/"+c.name, func(b *testing.B) {
				reg, err := resilience.NewRegistry(resilience.WithProperties(c.props))
				if err != nil {
					b.Fatal(err)
				}
				var call func(context.Context, string) (string, error)
				if impl == "generated" {
					w, err := seed.NewSearchAPIResilient(&fake{}, reg)
					if err != nil {
						b.Fatal(err)
					}
					call = w.Search
				} else {
					call, err = resilience.Wrap1(reg, "SearchAPI.Search", (&fake{}).Search,
						resilience.RateLimiter(ratelimit.Permits(10), ratelimit.Period(time.Second)))
					if err != nil {
						b.Fatal(err)
					}
				}
				ctx := context.Background()
				if c.reject {
					_, _ = call(ctx, "q") // the only permit
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := call(ctx, "q"); (err != nil) != c.reject {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
