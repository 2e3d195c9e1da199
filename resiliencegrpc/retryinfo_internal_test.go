package resiliencegrpc

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// SPEC GR-1: the RetryInfo encoded by hand is the one proto.Marshal makes, and reads back
// as the same delay, for delays of every size.
func TestGR1_RetryInfoEncoding(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999_999_999, time.Second, 100 * time.Millisecond, 70 * time.Millisecond,
		3*time.Hour + 7, time.Duration(math.MaxInt64), -5 * time.Second} {
		want, err := proto.Marshal(&errdetails.RetryInfo{RetryDelay: durationpb.New(max(d, 0))})
		require.NoError(t, err)
		assert.Equal(t, want, appendRetryInfo(nil, max(d, 0)), "%v", d)

		st := throttled("m", d)
		assert.Equal(t, codes.ResourceExhausted, st.Code())
		got, ok := RetryDelay(st.Err())
		require.True(t, ok, "%v", d)
		assert.Equal(t, max(d, 0), got)
	}
}
