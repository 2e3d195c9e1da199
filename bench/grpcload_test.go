package bench

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	mwrl "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/resilience4go/resilience4go/ratelimit"
	"github.com/resilience4go/resilience4go/ratelimit/keyed"
	"github.com/resilience4go/resilience4go/resiliencegrpc"
)

// grpcLoadCallers is how many unary calls are in flight at once in BenchmarkGRPCLoad.
const grpcLoadCallers = 32

// grpcLoadPeriod is the quota of BenchmarkGRPCLoad: one call per 10ms (100 calls/s, a
// burst of 1), on every side, so that nearly every call under load is refused.
const grpcLoadPeriod = 10 * time.Millisecond

// BenchmarkGRPCLoad: a real gRPC server on a loopback TCP connection, serving the health
// service (grpc.health.v1.Health/Check) behind a rate-limiting server interceptor with a
// quota of 100 calls/s; 32 goroutines call Check at once (b.SetParallelism) over one
// client connection, so nearly every call is refused; ns/op is the inverse of the
// throughput of the client and the server together (both run in this process), and
// refused/op the share of refused calls, cpu-ns/op the CPU time (user and system) the
// process spent per call. The sides:
//
//   - resilience4go/Limit/method: resiliencegrpc's interceptor with a Limit keyed by
//     method (one quota, as the peers have); a refusal is ResourceExhausted with a
//     google.rpc.RetryInfo detail and the grpc-retry-pushback-ms trailer;
//   - resilience4go/Limit/peer: the same keyed by peer, Limit's default (every caller is
//     127.0.0.1, so one key too);
//   - middleware/ratelimit/retryinfo: go-grpc-middleware's ratelimit interceptor with an
//     x/time/rate limiter (Allow), and an interceptor around it that attaches to its
//     ResourceExhausted status the same RetryInfo detail (the time until the limiter's
//     next token) the usual way, with Status.WithDetails;
//   - middleware/ratelimit/nodetail: go-grpc-middleware's interceptor alone, whose refusal has no
//     detail (for reference: what the detail costs).
func BenchmarkGRPCLoad(b *testing.B) {
	b.Run("resilience4go/Limit/method/refused/32callers", func(b *testing.B) {
		measureGRPCLoad(b, oursGRPCLoad(b, resiliencegrpc.ByMethod, grpcLoadPeriod), true, true)
	})
	b.Run("resilience4go/Limit/peer/refused/32callers", func(b *testing.B) {
		measureGRPCLoad(b, oursGRPCLoad(b, nil, grpcLoadPeriod), true, true)
	})
	b.Run("middleware/ratelimit/retryinfo/refused/32callers", func(b *testing.B) {
		measureGRPCLoad(b, middlewareGRPCLoad(true, grpcLoadPeriod), true, false)
	})
	b.Run("middleware/ratelimit/nodetail/refused/32callers", func(b *testing.B) {
		measureGRPCLoad(b, middlewareGRPCLoad(false, grpcLoadPeriod), false, false)
	})
}

// oursGRPCLoad is resiliencegrpc's unary interceptor with one Limit of one call per period
// for every method, keyed by key (nil: by peer).
func oursGRPCLoad(b *testing.B, key func(context.Context, string) string, period time.Duration) grpc.UnaryServerInterceptor {
	b.Helper()
	k, err := keyed.New[string](ratelimit.Permits(1), ratelimit.Period(period))
	if err != nil {
		b.Fatal(err)
	}
	s, err := resiliencegrpc.NewServer(resiliencegrpc.Limit(k, key))
	if err != nil {
		b.Fatal(err)
	}
	return s.UnaryInterceptor()
}

// rateLimit is go-grpc-middleware's ratelimit.Limiter on an x/time/rate limiter, as its
// documentation shows: Allow, and an error when it refuses.
type rateLimit struct{ l *rate.Limiter }

var errRateLimit = status.Error(codes.ResourceExhausted, "rate limit exceeded")

func (r rateLimit) Limit(context.Context) error {
	if !r.l.Allow() {
		return errRateLimit
	}
	return nil
}

// middlewareGRPCLoad is go-grpc-middleware's ratelimit interceptor with an x/time/rate
// limiter of one call per period (a burst of 1); with retryInfo, in a chain behind an interceptor that
// attaches a RetryInfo detail of the time until the limiter's next token to its
// ResourceExhausted status.
func middlewareGRPCLoad(retryInfo bool, period time.Duration) grpc.UnaryServerInterceptor {
	l := rate.NewLimiter(rate.Every(period), 1)
	limit := mwrl.UnaryServerInterceptor(rateLimit{l})
	if !retryInfo {
		return limit
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := limit(ctx, req, info, handler)
		if err == nil {
			return resp, nil
		}
		st := status.Convert(err)
		if st.Code() != codes.ResourceExhausted {
			return resp, err
		}
		wait := time.Duration((1 - l.Tokens()) / float64(l.Limit()) * float64(time.Second))
		if withInfo, derr := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(max(wait, 0))}); derr == nil {
			st = withInfo
		}
		return nil, st.Err()
	}
}

// measureGRPCLoad serves the health service behind ic on a loopback listener, checks that
// a refused call carries RetryInfo (and the pushback trailer, with pushback), and then
// has grpcLoadCallers goroutines call Check over one connection, b.N calls in all.
func measureGRPCLoad(b *testing.B, ic grpc.UnaryServerInterceptor, retryInfo, pushback bool) {
	b.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(ic))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	defer func() {
		srv.Stop()
		<-served
	}()
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	client := healthpb.NewHealthClient(conn)
	req := &healthpb.HealthCheckRequest{}
	checkGRPCRefusal(b, client, req, retryInfo, pushback)

	var refused atomic.Int64
	b.ReportAllocs()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((grpcLoadCallers + procs - 1) / procs)
	cpu := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var n int64
		for pb.Next() {
			_, err := client.Check(ctx, req)
			switch status.Code(err) {
			case codes.OK:
			case codes.ResourceExhausted:
				n++
			default:
				b.Errorf("a call ended with %v", err)
				return
			}
		}
		refused.Add(n)
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
}

// processCPU returns the CPU time the process has used, user and system, in nanoseconds:
// on a shared machine, the CPU a call costs is steadier than the wall time it takes.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// checkGRPCRefusal calls until a call is refused, and checks that the refusal carries a
// RetryInfo detail (decoded with the official types) and, for ours, the pushback trailer.
func checkGRPCRefusal(b *testing.B, client healthpb.HealthClient, req *healthpb.HealthCheckRequest, retryInfo, pushback bool) {
	b.Helper()
	for range 1000 {
		var trailer metadata.MD
		_, err := client.Check(context.Background(), req, grpc.Trailer(&trailer))
		if err == nil {
			continue
		}
		st := status.Convert(err)
		if st.Code() != codes.ResourceExhausted {
			b.Fatalf("refused with %v", err)
		}
		if !retryInfo {
			return
		}
		var found bool
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
				found = true
			}
		}
		if !found {
			b.Fatalf("a refusal without RetryInfo: %v", st.Proto())
		}
		if pushback && len(trailer["grpc-retry-pushback-ms"]) != 1 {
			b.Fatalf("a refusal without the pushback trailer: %v", trailer)
		}
		return
	}
	b.Fatal("no call refused")
}
