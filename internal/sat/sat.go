// Package sat holds saturating arithmetic on time.Duration and on int64 nanoseconds:
// every duration the policies compute (backoffs, deadlines, time left, time waited, the
// rate limiter's schedule) goes through it, so that none overflows into a negative value
// or turns NaN into an arbitrary integer.
package sat

import (
	"math"
	"time"
)

// Int is a time.Duration, or an int64 count of nanoseconds.
type Int interface{ ~int64 }

// Add returns a+b, clamped to [math.MinInt64, math.MaxInt64] instead of wrapping.
func Add[T Int](a, b T) T {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// Sub returns a-b, clamped to [math.MinInt64, math.MaxInt64] instead of wrapping.
func Sub[T Int](a, b T) T {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b // a-b = a+2⁶³, in range for a < 0
	}
	return Add(a, -b)
}

// Mul returns a·b for a, b ≥ 0, clamped to math.MaxInt64 instead of wrapping.
func Mul[T Int](a, b T) T {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// Left returns the time from now until t, never negative: 0 once t has passed.
func Left(t, now time.Duration) time.Duration { return max(Sub(t, now), 0) }

// Scale returns d·f, never negative: a NaN or negative product gives 0, a product past
// the largest Duration gives the largest Duration.
func Scale(d time.Duration, f float64) time.Duration {
	return FromFloat(float64(d) * f)
}

// FromFloat converts x nanoseconds to a Duration, never negative: NaN and x ≤ 0 give 0,
// x at or past the largest Duration gives the largest Duration.
func FromFloat(x float64) time.Duration {
	switch {
	case !(x > 0): // also NaN
		return 0
	case x >= math.MaxInt64: // float64(MaxInt64) rounds up to 2⁶³
		return math.MaxInt64
	}
	return time.Duration(x)
}
