package resiliencegrpc

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
)

// retryInfoDelays are delays of every size: 0, nanoseconds, milliseconds, seconds, hours,
// the largest, and a negative one (sent as 0).
var retryInfoDelays = []time.Duration{0, 1, 999, 999_999_999, time.Millisecond, 70 * time.Millisecond,
	100 * time.Millisecond, time.Second, time.Second + 1, 90 * time.Second, 3*time.Hour + 7,
	1000 * time.Hour, time.Duration(math.MaxInt64), -5 * time.Second}

// SPEC GR-1: the RetryInfo encoded by hand is the one proto.Marshal makes, and reads back
// as the same delay, for delays of every size.
func TestGR1_RetryInfoEncoding(t *testing.T) {
	for _, d := range retryInfoDelays {
		want, err := proto.Marshal(&errdetails.RetryInfo{RetryDelay: durationpb.New(max(d, 0))})
		require.NoError(t, err)
		assert.Equal(t, want, appendRetryInfo(nil, max(d, 0)), "%v", d)
		assert.LessOrEqual(t, len(want), retryInfoMaxLen, "%v", d)

		st := refusedWithRetry("m", d)
		assert.Equal(t, codes.ResourceExhausted, st.Code())
		got, ok := RetryDelay(st.Err())
		require.True(t, ok, "%v", d)
		assert.Equal(t, max(d, 0), got)
	}
}

// SPEC GR-1: a refusal's status, built from a reused draft, is byte for byte the status
// that the official types make (what the server sends in grpc-status-details-bin), and
// status.FromError(...).Details() decodes its RetryInfo; a status made before another
// keeps its own delay and message.
func TestGR1_RefusalStatusIsTheOfficialOne(t *testing.T) {
	var made []*status.Status
	for i, d := range retryInfoDelays {
		msg := "refused " + d.String()
		st := refusedWithRetry(msg, d)
		made = append(made, st)

		detail, err := anypb.New(&errdetails.RetryInfo{RetryDelay: durationpb.New(max(d, 0))})
		require.NoError(t, err)
		want, err := proto.Marshal(&spb.Status{Code: int32(codes.ResourceExhausted), Message: msg, Details: []*anypb.Any{detail}})
		require.NoError(t, err)
		got, err := proto.Marshal(st.Proto())
		require.NoError(t, err)
		assert.Equal(t, want, got, "%v", d)

		for j, prev := range made[:i+1] {
			fromErr, ok := status.FromError(prev.Err())
			require.True(t, ok)
			details := fromErr.Details()
			require.Len(t, details, 1, "%v", retryInfoDelays[j])
			ri, ok := details[0].(*errdetails.RetryInfo)
			require.True(t, ok, "%T", details[0])
			assert.Equal(t, max(retryInfoDelays[j], 0), ri.GetRetryDelay().AsDuration())
			assert.Equal(t, "refused "+retryInfoDelays[j].String(), fromErr.Message())
		}
	}
}

// SPEC GR-13: the shared pushback trailer of a delay is the trailer pushback makes for it,
// the same map for every refusal of as many milliseconds under the cache's bound, and a
// map of its own beyond it.
func TestGR13_SharedPushbackTrailer(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, 0, 1, time.Millisecond, 69500 * time.Microsecond,
		time.Second, 1023 * time.Millisecond, 1024 * time.Millisecond, time.Hour, time.Duration(math.MaxInt64)} {
		got := sharedPushback(d)
		assert.Equal(t, pushback(d), got, "%v", d)
		again := sharedPushback(d)
		shared := pushbackMillis(d) < int64(len(sharedPushbacks))
		assert.Equal(t, shared, sameMap(got, again), "%v", d)
	}
}

// sameMap reports whether a and b are the same map, not merely equal ones.
func sameMap(a, b metadata.MD) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}

// joiningStream is a call's stream as an interceptor sees it: SetTrailer merges, as
// gRPC's own stream does.
type joiningStream struct{ trailer metadata.MD }

func (s *joiningStream) Method() string               { return "/pkg.Service/Method" }
func (s *joiningStream) SetHeader(metadata.MD) error  { return nil }
func (s *joiningStream) SendHeader(metadata.MD) error { return nil }
func (s *joiningStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

// SPEC GR-1, GR-13: a Limit's refusal of a unary call, with its pushback trailer and the
// status that gRPC sends, allocates the refusal, its message and the status (the clone
// that status.FromProto makes: 5), and the stream's merge of the trailer (3, gRPC's), but
// neither the draft of the status nor a trailer of its own (18 allocations before they
// were reused).
func TestGR1_RefusalAllocations(t *testing.T) {
	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(time.Second), ratelimit.WithClock(clock.NewManual()))
	require.NoError(t, err)
	srv, err := NewServer(Limit(k, ByMethod))
	require.NoError(t, err)
	unary := srv.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: "/pkg.Service/Method"}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	stream := &joiningStream{}
	ctx := grpc.NewContextWithServerTransportStream(context.Background(), stream)
	_, err = unary(ctx, nil, info, handler)
	require.NoError(t, err)
	refuse := func() {
		stream.trailer = nil
		_, err := unary(ctx, nil, info, handler)
		if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted {
			t.Fatalf("not refused: %v", err)
		}
	}
	refuse()
	require.Len(t, stream.trailer[pushbackHeader], 1)
	assert.LessOrEqual(t, testing.AllocsPerRun(100, refuse), 10.0)
}
