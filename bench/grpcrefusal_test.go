package bench

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// refusalStream is the server's side of one call as an interceptor sees it: SetTrailer
// merges the trailer as gRPC's own stream does (metadata.Join).
type refusalStream struct{ trailer metadata.MD }

func (s *refusalStream) Method() string               { return grpcInfo.FullMethod }
func (s *refusalStream) SetHeader(metadata.MD) error  { return nil }
func (s *refusalStream) SendHeader(metadata.MD) error { return nil }
func (s *refusalStream) SetTrailer(md metadata.MD) error {
	s.trailer = metadata.Join(s.trailer, md)
	return nil
}

// BenchmarkGRPCRefusal measures the server's side of one refused unary call, without the
// network: the interceptor's refusal with the call's stream in its context (so that a
// trailer is merged as gRPC merges it), then what gRPC does with the error: the status
// (status.FromError) and its encoding (proto.Marshal of the status's proto, which, unlike
// gRPC's transport, clones it first), with BenchmarkGRPCLoad's quota (nearly every call
// refused; refused/op the share). Ours (a Limit keyed by method; ResourceExhausted,
// RetryInfo and the pushback trailer) against go-grpc-middleware's ratelimit interceptor
// with x/time/rate and the RetryInfo detail attached by WithDetails (the peer of
// BenchmarkGRPCLoad). It is the in-process companion of BenchmarkGRPCLoad, steadier on a
// shared machine, for profiling the refusal.
func BenchmarkGRPCRefusal(b *testing.B) {
	b.Run("resilience4go/Limit/method", func(b *testing.B) {
		benchRefusal(b, oursGRPCLoad(b, resiliencegrpc.ByMethod, grpcLoadPeriod))
	})
	b.Run("middleware/ratelimit/retryinfo", func(b *testing.B) {
		benchRefusal(b, middlewareGRPCLoad(true, grpcLoadPeriod))
	})
}

func benchRefusal(b *testing.B, ic grpc.UnaryServerInterceptor) {
	base := peer.NewContext(context.Background(), grpcPeer)
	var refused int64
	refuse := func() {
		ctx := grpc.NewContextWithServerTransportStream(base, &refusalStream{})
		_, err := ic(ctx, grpcReq, grpcInfo, grpcHandler)
		if err == nil {
			return // the one call in 10ms that the quota admits
		}
		st, _ := status.FromError(err)
		if st.Code() != codes.ResourceExhausted {
			b.Fatalf("not refused: %v", err)
		}
		if _, err := proto.Marshal(st.Proto()); err != nil {
			b.Fatal(err)
		}
		refused++
	}
	b.ReportAllocs()
	for b.Loop() {
		refuse()
	}
	b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
}
