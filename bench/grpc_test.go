package bench

import (
	"context"
	"errors"
	"net"
	"testing"

	fsgrpc "github.com/failsafe-go/failsafe-go/failsafegrpc"
	fsrl "github.com/failsafe-go/failsafe-go/ratelimiter"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resilience"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// The call every gRPC benchmark makes: a unary call to one method, from one peer, answered
// by a handler that returns its request. No network: the interceptor is called directly,
// so what is measured is the interceptor's own cost.
var (
	grpcInfo     = &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
	grpcPeer     = &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}}
	grpcReq  any = &struct{ n int }{1}
)

func grpcHandler(_ context.Context, req any) (any, error) { return req, nil }

// errGRPCAdmitted is a call's error, in a "rejected" benchmark, when the interceptor let
// it through (a miss).
var errGRPCAdmitted = errors.New("call admitted")

// grpcCall returns one call of ic, with the peer's context, for measureCalls: its error
// for an "admitted" benchmark, and for a "rejected" one nil when ic refused the call and
// errGRPCAdmitted when it did not. A refusal is turned into the status that the server
// writes, as gRPC does with an interceptor's error (status.FromError, then the status's
// Proto, which the transport encodes), so that a refusal's cost includes its status:
// ours, ResourceExhausted with a RetryInfo detail, made when gRPC asks for it;
// failsafe-go's, Unknown with its error's text.
func grpcCall(ic grpc.UnaryServerInterceptor, rejected bool) func(context.Context) error {
	ctx := peer.NewContext(context.Background(), grpcPeer)
	return func(context.Context) error {
		_, err := ic(ctx, grpcReq, grpcInfo, grpcHandler)
		if !rejected {
			return err
		}
		if err == nil {
			return errGRPCAdmitted
		}
		if status.Convert(err).Proto().GetCode() == int32(codes.OK) {
			return errGRPCAdmitted
		}
		return nil
	}
}

// grpcPrepare checks ic outside the timer: an "admitting" interceptor answers with the
// handler's response, a "rejecting" one takes the quota's only permit on its first call
// and refuses the second with wantCode.
func grpcPrepare(b *testing.B, ic grpc.UnaryServerInterceptor, rejecting bool, wantCode codes.Code) grpc.UnaryServerInterceptor {
	b.Helper()
	ctx := peer.NewContext(context.Background(), grpcPeer)
	resp, err := ic(ctx, grpcReq, grpcInfo, grpcHandler)
	if err != nil || resp != grpcReq {
		b.Fatalf("the first call: %v, %v", resp, err)
	}
	if rejecting {
		if _, err := ic(ctx, grpcReq, grpcInfo, grpcHandler); err == nil {
			b.Fatal("the second call was admitted")
		} else if got := status.Code(err); got != wantCode {
			b.Fatalf("the second call ended with %v, not %v: %v", got, wantCode, err)
		}
	}
	return ic
}

func grpcQuota(rejecting bool) []ratelimit.Option {
	if rejecting {
		return []ratelimit.Option{ratelimit.Permits(1), ratelimit.Period(rejectPeriod)}
	}
	return []ratelimit.Option{ratelimit.Permits(admitPermits), ratelimit.Period(admitPeriod)}
}

// oursGRPCLimit is resiliencegrpc's unary interceptor with one Limit for every method, on
// a keyed limiter keyed by key (nil: by peer).
func oursGRPCLimit(b *testing.B, key func(context.Context, string) string, rejecting bool) grpc.UnaryServerInterceptor {
	b.Helper()
	k, err := keyed.New[string](grpcQuota(rejecting)...)
	if err != nil {
		b.Fatal(err)
	}
	s, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(k, key))
	if err != nil {
		b.Fatal(err)
	}
	return grpcPrepare(b, s.UnaryInterceptor(), rejecting, codes.ResourceExhausted)
}

// oursGRPCGuard is resiliencegrpc's unary interceptor with one Guard for every method: a
// composition of one rate limiter (not keyed) built by resilience.Wrap1.
func oursGRPCGuard(b *testing.B, rejecting bool) grpc.UnaryServerInterceptor {
	b.Helper()
	s, err := resiliencegrpc.NewServer(resiliencegrpc.Guard(newRegistry(b), "Bench.GRPC",
		[]resilience.Spec{resilience.RateLimiter(grpcQuota(rejecting)...)}))
	if err != nil {
		b.Fatal(err)
	}
	return grpcPrepare(b, s.UnaryInterceptor(), rejecting, codes.ResourceExhausted)
}

// failsafeGRPC is failsafe-go's unary interceptor around its smooth rate limiter (the one
// of BenchmarkLimiter). Its refusal is the limiter's error, which gRPC sends as Unknown.
func failsafeGRPC(b *testing.B, rejecting bool) grpc.UnaryServerInterceptor {
	b.Helper()
	l := fsrl.NewSmooth[any](admitPermits, admitPeriod)
	if rejecting {
		l = fsrl.NewSmooth[any](1, rejectPeriod)
	}
	return grpcPrepare(b, fsgrpc.NewUnaryServerInterceptor[any](l), rejecting, codes.Unknown)
}

// BenchmarkGRPCServer measures one unary call through a server interceptor that rate
// limits it, by one goroutine, admitted and rejected: ours limiting per peer (the
// interceptor's default, "Limit/peer"), ours with one quota for the method
// ("Limit/method", a keyed limiter with a single key), ours with a Guard of one rate
// limiter ("Guard/ratelimiter", one limiter through a resilience.Wrap1 composition, the
// like-for-like of failsafe-go's), and failsafe-go's NewUnaryServerInterceptor around its
// rate limiter, which has no per-peer limit. Ours refuses with ResourceExhausted and a
// RetryInfo detail; failsafe-go with its limiter's error.
func BenchmarkGRPCServer(b *testing.B) { benchmarkGRPCServer(b, false) }

// BenchmarkGRPCServerParallel is BenchmarkGRPCServer with one goroutine per processor, all
// calling from the same peer.
func BenchmarkGRPCServerParallel(b *testing.B) { benchmarkGRPCServer(b, true) }

func benchmarkGRPCServer(b *testing.B, parallel bool) {
	for _, outcome := range []struct {
		name      string
		rejecting bool
	}{{"admitted", false}, {"rejected", true}} {
		rej := outcome.rejecting
		b.Run("resilience4go/Limit/peer/"+outcome.name, func(b *testing.B) {
			measureCalls(b, parallel, grpcCall(oursGRPCLimit(b, nil, rej), rej))
		})
		b.Run("resilience4go/Limit/method/"+outcome.name, func(b *testing.B) {
			measureCalls(b, parallel, grpcCall(oursGRPCLimit(b, resiliencegrpc.ByMethod, rej), rej))
		})
		b.Run("resilience4go/Guard/ratelimiter/"+outcome.name, func(b *testing.B) {
			measureCalls(b, parallel, grpcCall(oursGRPCGuard(b, rej), rej))
		})
		b.Run("failsafe/NewUnaryServerInterceptor/ratelimiter/"+outcome.name, func(b *testing.B) {
			measureCalls(b, parallel, grpcCall(failsafeGRPC(b, rej), rej))
		})
	}
}
