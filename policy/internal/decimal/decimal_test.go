package decimal

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rat returns the exact value of d.
func rat(d Decimal) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatUint(d.m, 10) + "e" + strconv.Itoa(d.e))
	if !ok {
		panic("bad decimal")
	}
	return r
}

func u(x uint64) *big.Rat { return new(big.Rat).SetFrac(new(big.Int).SetUint64(x), big.NewInt(1)) }

func TestOfIsTheShortestDecimal(t *testing.T) {
	for v, want := range map[float64]string{
		2.2: "22/10", 0.14: "14/100", 100: "100/1", 0.57: "57/100", 1e-30: "1/1000000000000000000000000000000",
		33.333333333333336: "33333333333333336/1000000000000000", 5e-324: "5e-324", 1e300: "1e300", 0: "0",
	} {
		d, ok := Of(v)
		require.True(t, ok)
		w, _ := new(big.Rat).SetString(want)
		assert.Zero(t, rat(d).Cmp(w), "%v: %v", v, rat(d))
		assert.Equal(t, v, d.Float64())
	}
	for _, v := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		d, ok := Of(v)
		assert.False(t, ok, "%v", v)
		assert.Equal(t, Decimal{}, d)
	}
}

func TestLessAndCeilMul(t *testing.T) {
	p, _ := Of(2.2)
	p = p.Shift(-2)
	assert.True(t, p.Less(32, 1500))
	assert.False(t, p.Less(33, 1500), "2.2% of 1500 is exactly 33")
	assert.Equal(t, uint64(33), p.CeilMul(1500))
	assert.Equal(t, uint64(34), p.CeilMul(1501), "33.022")
	f, _ := Of(0.14)
	f = f.Shift(-9)
	assert.Equal(t, uint64(7), f.CeilMul(50_000_000_000), "0.14/s over 50s")
	big, _ := Of(1e300)
	assert.True(t, big.Less(math.MaxUint64, 1))
	assert.Equal(t, uint64(math.MaxUint64), big.CeilMul(1))
	assert.False(t, big.Less(0, 0))
	tiny, _ := Of(5e-324)
	assert.True(t, tiny.Less(0, 1))
	assert.False(t, tiny.Less(1, math.MaxUint64))
	assert.Equal(t, uint64(1), tiny.CeilMul(math.MaxUint64))
	assert.Zero(t, Decimal{}.CeilMul(7))
}

// Less and CeilMul agree with math/big on values of every magnitude, counts of every
// size, and the counts next to the product.
func TestLessMatchesBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var v float64
		switch rng.IntN(4) {
		case 0: // few decimals, as written in configuration
			v = float64(rng.IntN(100000)) / math.Pow10(rng.IntN(6))
		case 1:
			v = rng.Float64() * math.Pow10(rng.IntN(40)-20)
		case 2:
			v = math.Float64frombits(rng.Uint64() >> 1)
		default:
			v = rng.Float64() * 100
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		d, ok := Of(v)
		require.True(t, ok)
		d = d.Shift(rng.IntN(5) - 2)
		b := rng.Uint64() >> rng.IntN(64)
		prod := new(big.Rat).Mul(rat(d), u(b))
		ceil := new(big.Int).Quo(prod.Num(), prod.Denom())
		if new(big.Rat).SetInt(ceil).Cmp(prod) < 0 {
			ceil.Add(ceil, big.NewInt(1))
		}
		var want uint64 = math.MaxUint64
		if ceil.IsUint64() {
			want = ceil.Uint64()
		}
		require.Equal(t, want, d.CeilMul(b), "ceil(%v × %d)", rat(d), b)
		for _, a := range []uint64{want - 1, want, want + 1, rng.Uint64() >> rng.IntN(64)} {
			require.Equal(t, u(a).Cmp(prod) < 0, d.Less(a, b), "%d < %v × %d", a, rat(d), b)
		}
	}
}

// MulFloat's whole part is that of the exact product, and it is within a few units in
// the last place of it.
func TestMulFloatWholePartIsExact(t *testing.T) {
	d, _ := Of(0.57)
	assert.Equal(t, 57.0, d.MulFloat(100))
	hundred, ratio := 100.0, 0.57
	assert.Equal(t, 56.99999999999999, hundred*ratio, "the float64 product")
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		d, _ := Of(float64(rng.IntN(1_000_000)) / math.Pow10(rng.IntN(8)))
		var v float64
		if rng.IntN(2) == 0 {
			v = float64(rng.IntN(1_000_000))
		} else {
			v = rng.Float64() * 1e6
		}
		got := d.MulFloat(v)
		exact := new(big.Rat).Mul(rat(d), new(big.Rat).SetFloat64(v))
		if f, _ := exact.Float64(); f >= maxWhole {
			continue
		}
		floor := new(big.Int).Quo(exact.Num(), exact.Denom())
		require.Equal(t, floor.Int64(), int64(got), "%v × %v", rat(d), v)
		if exact.IsInt() {
			require.Equal(t, float64(floor.Int64()), got)
		}
		want, _ := exact.Float64()
		require.InEpsilon(t, want, got, 1e-15, "%v × %v", rat(d), v)
	}
	assert.Equal(t, 3e300*0.5, Decimal{m: 5, e: -1, f: 0.5}.MulFloat(3e300), "out of range: the float64 product")
}

func TestAllocatesNothing(t *testing.T) {
	d, _ := Of(2.2)
	d = d.Shift(-2)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = d.Less(33, 1500)
		_ = d.CeilMul(1500)
		_ = d.MulFloat(1234.5)
	}))
}
