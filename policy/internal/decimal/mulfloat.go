package decimal

import (
	"math"
	"math/bits"
)

// maxWhole is 2^53: below it, every whole number is a float64.
const maxWhole = 1 << 53

// MulFloat returns v × d as a float64 whose whole part is exactly that of the product:
// the whole number itself when v × d is one (100 × 0.57 is 57, where the float64
// product is 56.99999999999999), else a value strictly between the whole numbers around
// the product, within a few units in the last place of it. v is taken as the binary
// fraction it is. It holds for v at least 0 and v × d below 2^53, with d having at most
// 19 decimals; otherwise MulFloat returns the float64 product v × d.Float64().
func (d Decimal) MulFloat(v float64) float64 {
	x := v * d.f
	q, exact, ok := d.floorMul(v)
	if !ok {
		return x
	}
	n := float64(q)
	switch {
	case exact:
		return n
	case x <= n:
		return math.Nextafter(n, math.Inf(1))
	case x >= n+1:
		return math.Nextafter(n+1, 0)
	}
	return x
}

// floorMul returns the whole part q of v × d, exactly, and whether v × d is whole; ok is
// false outside MulFloat's range.
func (d Decimal) floorMul(v float64) (q uint64, exact, ok bool) {
	if !(v >= 0) || v >= maxWhole {
		return 0, false, false
	}
	if v == 0 || d.m == 0 {
		return 0, true, true
	}
	// v = mant / 2^s, mant a whole number below 2^53; v < 2^53, so s ≥ 0.
	frac, exp := math.Frexp(v)
	mant, s := uint64(math.Ldexp(frac, 53)), uint(53-exp)
	m, k := d.m, 0
	if d.e >= 0 {
		p, ok := pow10(d.e)
		hi, lo := bits.Mul64(m, p.lo)
		if !ok || p.hi != 0 || hi != 0 {
			return 0, false, false
		}
		m = lo
	} else {
		k = -d.e
	}
	p, ok := pow10(k)
	if !ok || p.hi != 0 {
		return 0, false, false // more than 19 decimals
	}
	// floor(mant × m / (10^k × 2^s)) = floor(floor(mant × m / 10^k) / 2^s).
	nhi, nlo := bits.Mul64(mant, m)
	qhi, r := nhi/p.lo, nhi%p.lo
	qlo, rem := bits.Div64(r, nlo, p.lo)
	var lost bool
	switch {
	case s == 0:
	case s < 64:
		lost = qlo&(1<<s-1) != 0
		qlo, qhi = qlo>>s|qhi<<(64-s), qhi>>s
	case s < 128:
		lost = qlo != 0 || qhi&(1<<(s-64)-1) != 0
		qlo, qhi = qhi>>(s-64), 0
	default:
		lost = qlo != 0 || qhi != 0
		qlo, qhi = 0, 0
	}
	if qhi != 0 || qlo >= maxWhole {
		return 0, false, false
	}
	return qlo, rem == 0 && !lost, true
}
