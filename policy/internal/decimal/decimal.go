// Package decimal compares whole counts with the ratios, percentages and rates that a
// configuration gives as float64, exactly. A float64 setting stands for the decimal a
// person wrote: the shortest decimal that reads back as it (what strconv.FormatFloat
// prints with 'g' and precision -1), so that 2.2 is 22/10 and not the binary fraction
// nearest to it. Products computed in float64 put bounds one count off: 2.2% of 1,500 is
// 33.000000000000007 in float64, which lets a 34th event below it. The arithmetic here is
// on integers (128 bits wide where needed), so a count is compared with the exact product
// and nothing is rounded; none of it allocates.
package decimal

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// A Decimal is the non-negative decimal m × 10^e, m below 10^17. The zero Decimal is 0.
// It is a small value, safe for concurrent use.
type Decimal struct {
	m uint64
	e int
	f float64 // the float64 nearest m × 10^e
}

// Of returns the decimal that v stands for: the shortest decimal that reads back as v.
// ok is false, and the Decimal 0, for a negative, infinite or NaN v.
func Of(v float64) (d Decimal, ok bool) {
	if !(v >= 0) || math.IsInf(v, 1) {
		return Decimal{}, false
	}
	if v == 0 {
		return Decimal{}, true
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±xx: at most 17 digits
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		e -= len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	m, _ := strconv.ParseUint(mant, 10, 64)
	for m%10 == 0 {
		m, e = m/10, e+1
	}
	return Decimal{m: m, e: e, f: v}, true
}

// Shift returns d × 10^k: Shift(-2) turns a percentage into a ratio.
func (d Decimal) Shift(k int) Decimal {
	if d.m == 0 {
		return d
	}
	e := d.e + k
	f, _ := strconv.ParseFloat(strconv.FormatUint(d.m, 10)+"e"+strconv.Itoa(e), 64) // ±Inf or 0 out of range
	return Decimal{m: d.m, e: e, f: f}
}

// Float64 returns the float64 nearest d.
func (d Decimal) Float64() float64 { return d.f }

// Less reports whether a < d × b, exactly.
func (d Decimal) Less(a, b uint64) bool {
	if d.m == 0 || b == 0 {
		return false // d × b is 0
	}
	if d.e >= 0 {
		p, ok := pow10(d.e)
		if !ok || p.hi != 0 {
			return true // d ≥ 2^64 > a: d × b (b ≥ 1) is above every uint64
		}
		hi, lo := bits.Mul64(d.m, p.lo)
		if hi != 0 {
			return true
		}
		hi, lo = bits.Mul64(lo, b)
		return hi != 0 || a < lo
	}
	// a < m × b / 10^k  ⇔  a × 10^k < m × b, where m × b < 2^121.
	if a == 0 {
		return true
	}
	p, ok := pow10(-d.e)
	if !ok {
		return false // 10^k ≥ 10^39 > m × b
	}
	lhs, over := mul128(p, a)
	if over {
		return false
	}
	rhs := u128{}
	rhs.hi, rhs.lo = bits.Mul64(d.m, b)
	return lhs.less(rhs)
}

// CeilMul returns the smallest whole number n with n ≥ d × b: the number of counts below
// d × b. It is at most math.MaxUint64.
func (d Decimal) CeilMul(b uint64) uint64 {
	if d.Less(math.MaxUint64, b) {
		return math.MaxUint64
	}
	lo, hi := uint64(0), uint64(math.MaxUint64) // d × b ≤ hi; is it ≤ lo?
	for lo < hi {
		mid := lo + (hi-lo)/2
		if d.Less(mid, b) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// A u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

func (x u128) less(y u128) bool { return x.hi < y.hi || x.hi == y.hi && x.lo < y.lo }

// mul128 returns x × a, and whether it overflows 128 bits.
func mul128(x u128, a uint64) (u128, bool) {
	h1, l1 := bits.Mul64(x.lo, a)
	h2, l2 := bits.Mul64(x.hi, a)
	mid, carry := bits.Add64(h1, l2, 0)
	return u128{hi: mid, lo: l1}, h2 != 0 || carry != 0
}

// powers holds 10^0 .. 10^38, every power of ten below 2^128.
var powers = func() []u128 {
	p := []u128{{lo: 1}}
	for {
		next, over := mul128(p[len(p)-1], 10)
		if over {
			return p
		}
		p = append(p, next)
	}
}()

// pow10 returns 10^k for k in [0, 38], and false for a larger k.
func pow10(k int) (u128, bool) {
	if k >= len(powers) {
		return u128{}, false
	}
	return powers[k], true
}
