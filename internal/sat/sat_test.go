package sat_test

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience4go/resilience4go/internal/sat"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clamp is the exact result, computed without overflow, clamped to the Duration range.
func clamp(x *big.Int) time.Duration {
	switch {
	case x.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxInt64
	case x.Cmp(big.NewInt(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return time.Duration(x.Int64())
}

func TestAddSub_Saturate(t *testing.T) {
	vals := []time.Duration{math.MinInt64, math.MinInt64 + 1, -time.Hour, -1, 0, 1, time.Hour, math.MaxInt64 - 1, math.MaxInt64}
	for _, a := range vals {
		for _, b := range vals {
			sum := new(big.Int).Add(big.NewInt(int64(a)), big.NewInt(int64(b)))
			diff := new(big.Int).Sub(big.NewInt(int64(a)), big.NewInt(int64(b)))
			require.Equal(t, clamp(sum), sat.Add(a, b), "%d+%d", a, b)
			require.Equal(t, clamp(diff), sat.Sub(a, b), "%d-%d", a, b)
		}
	}
}

func TestLeft_NeverNegative(t *testing.T) {
	require.Equal(t, time.Duration(0), sat.Left(5, 10))
	require.Equal(t, time.Duration(5), sat.Left(10, 5))
	require.Equal(t, time.Duration(math.MaxInt64), sat.Left(math.MaxInt64, math.MinInt64))
	require.Equal(t, time.Duration(0), sat.Left(math.MinInt64, math.MaxInt64))
}

func TestScale_NeverNegativeNorNaN(t *testing.T) {
	require.Equal(t, time.Duration(0), sat.Scale(0, math.Inf(1)), "0 × +Inf is NaN")
	require.Equal(t, time.Duration(math.MaxInt64), sat.Scale(time.Second, math.Inf(1)))
	require.Equal(t, time.Duration(math.MaxInt64), sat.Scale(math.MaxInt64, 1))
	require.Equal(t, time.Duration(0), sat.Scale(time.Second, -1))
	require.Equal(t, 1500*time.Millisecond, sat.Scale(time.Second, 1.5))
	require.Equal(t, time.Duration(0), sat.FromFloat(math.NaN()))
}

func FuzzScale(f *testing.F) {
	f.Add(int64(0), math.Inf(1))
	f.Add(int64(time.Second), 2.0)
	f.Add(int64(math.MaxInt64), 1e300)
	f.Fuzz(func(t *testing.T, d int64, x float64) {
		got := sat.Scale(time.Duration(d), x)
		if got < 0 {
			t.Fatalf("Scale(%d, %v) = %d < 0", d, x, got)
		}
		if p := float64(d) * x; p > 0 && p < 1<<62 && math.Abs(float64(got)-p) > 1 {
			t.Fatalf("Scale(%d, %v) = %d, want about %v", d, x, got, p)
		}
	})
}

func TestMul_Saturates(t *testing.T) {
	vals := []int64{0, 1, 2, 3, 1 << 31, 1<<32 + 1, math.MaxInt64 / 2, math.MaxInt64 - 1, math.MaxInt64}
	for _, a := range vals {
		for _, b := range vals {
			prod := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
			require.Equal(t, int64(clamp(prod)), sat.Mul(a, b), "%d·%d", a, b)
		}
	}
	require.Equal(t, 3*time.Second, sat.Mul(3, time.Second), "on Durations too")
}
