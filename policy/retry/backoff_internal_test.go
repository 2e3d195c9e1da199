package retry

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/resilience4go/resilience4go/internal/sat"
)

// unit maps any float to [0, 1), as a uniform draw is: NaN and infinities give 0.
func unit(u float64) float64 {
	if math.IsNaN(u) || math.IsInf(u, 0) {
		return 0
	}
	u = math.Abs(u)
	return u - math.Floor(u)
}

// The backoff and the jittered wait, for any delay, multiplier, cap, jitter, draw and
// attempt number, are between 0 and the cap (the largest Duration without one), and a
// valid configuration's backoff starts at the delay and never shrinks: nothing negative
// or derived from a NaN (fault: Delay 0 and Multiplier 2 gave waits of -2562047h47m16s
// from attempt 1,025 on, 0·Inf turned into an integer).
func FuzzBackoff(f *testing.F) {
	f.Add(int64(0), 2.0, int64(0), 0.0, 0.5, 1025) // the fault: 2^1024 is +Inf
	f.Add(int64(0), 2.0, int64(0), 0.5, 0.5, 1100)
	f.Add(int64(0), 2.0, int64(time.Second), 1.0, 0.999, 1100)
	f.Add(int64(1), 2.0, int64(0), 1.0, 0.999, 64)
	f.Add(int64(1), 2.0, int64(0), 0.0, 0.0, 1100)
	f.Add(int64(time.Second), 2.0, int64(3*time.Second), 0.5, 0.0, 3)
	f.Add(int64(math.MaxInt64), 1.5, int64(0), 1.0, 0.99, 2)
	f.Add(int64(math.MaxInt64), 1.0, int64(0), 1.0, 0.99, 1)
	f.Add(int64(500*time.Millisecond), 1.0, int64(0), 0.0, 0.0, 1)
	f.Add(int64(time.Millisecond), math.Inf(1), int64(0), 0.2, 0.3, 2)
	f.Add(int64(time.Millisecond), math.NaN(), int64(time.Minute), math.NaN(), 0.3, 2)
	f.Add(int64(time.Millisecond), 10.0, int64(time.Minute), 0.2, 0.3, math.MaxInt)
	f.Add(int64(time.Millisecond), 1+1e-15, int64(0), 0.2, 0.3, 1<<40)
	f.Add(int64(-time.Second), 0.5, int64(-1), 2.0, -1.0, -5)
	f.Add(int64(time.Second), -2.0, int64(0), math.Inf(1), 0.5, 3)
	f.Fuzz(func(t *testing.T, delay int64, multiplier float64, maxDelay int64, jitter, u float64, n int) {
		c := Config{MaxAttempts: 3, Delay: time.Duration(delay), Multiplier: multiplier,
			MaxDelay: time.Duration(maxDelay), Jitter: jitter}
		limit := time.Duration(math.MaxInt64)
		if c.MaxDelay > 0 {
			limit = c.MaxDelay
		}
		b := c.Backoff(n)
		if b < 0 || b > limit {
			t.Fatalf("Backoff(%d) of %+v = %v, outside [0, %v]", n, c, b, limit)
		}
		if c.Delay <= 0 && b != 0 {
			t.Fatalf("Backoff(%d) of %+v = %v: no delay gives no wait", n, c, b)
		}
		valid := c.Validate() == nil
		if valid && c.Delay > 0 {
			// Converting Delay to a float64 may round it by 2^-53 of itself.
			first := min(c.Delay, limit)
			if b < first-c.Delay>>52-1 {
				t.Fatalf("Backoff(%d) of %+v = %v, below the first wait %v", n, c, b, first)
			}
			if n <= 1 && b != first {
				t.Fatalf("Backoff(%d) of %+v = %v, want %v", n, c, b, first)
			}
			if n < math.MaxInt {
				// math.Pow may be off by an ulp from one exponent to the next.
				if next := c.Backoff(n + 1); next < b-b>>40-1 {
					t.Fatalf("Backoff(%d) = %v > Backoff(%d) = %v of %+v", n, b, n+1, next, c)
				}
			}
		}

		u = unit(u)
		w := jittered(b, c.Jitter, u)
		if w < 0 {
			t.Fatalf("jittered(%v, %v, %v) = %v", b, c.Jitter, u, w)
		}
		r := &Retry{core: &core{rnd: rand.New(rand.NewPCG(uint64(delay), math.Float64bits(u)))}}
		rw := r.wait(&c, n)
		if rw < 0 {
			t.Fatalf("wait(%d) of %+v = %v", n, c, rw)
		}
		if valid {
			lo, hi := sat.Scale(b, 1-c.Jitter), sat.Scale(b, (1-c.Jitter)+2*c.Jitter)
			if w < lo || w > hi {
				t.Fatalf("jittered(%v, %v, %v) = %v, outside [%v, %v]", b, c.Jitter, u, w, lo, hi)
			}
			switch {
			case c.Jitter == 0 || b == 0: // no draw: the backoff as is
				if rw != b {
					t.Fatalf("wait(%d) of %+v = %v, want the backoff %v", n, c, rw, b)
				}
			case rw < lo || rw > hi:
				t.Fatalf("wait(%d) of %+v = %v, outside [%v, %v]", n, c, rw, lo, hi)
			}
		}
	})
}
