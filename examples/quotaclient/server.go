package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// The quota both servers enforce, with golang.org/x/time/rate: 10 requests per second,
// bursts of 10.
const (
	serverRate  rate.Limit = 10
	serverBurst int        = 10
)

// quotaCounter enforces the quota and counts what it answered.
type quotaCounter struct {
	limiter *rate.Limiter

	mu          sync.Mutex
	ok, refused int
}

func newQuotaCounter() *quotaCounter {
	return &quotaCounter{limiter: rate.NewLimiter(serverRate, serverBurst)}
}

// allow reports whether a request is within the quota, and counts it.
func (q *quotaCounter) allow() bool {
	allowed := q.limiter.Allow()
	q.mu.Lock()
	defer q.mu.Unlock()
	if allowed {
		q.ok++
	} else {
		q.refused++
	}
	return allowed
}

// stats returns how many requests were within the quota, and how many above it.
func (q *quotaCounter) stats() (ok, refused int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ok, q.refused
}

// httpServer is an HTTP API on 127.0.0.1 that answers 429 above its quota.
type httpServer struct {
	*quotaCounter
	url  string
	srv  *http.Server
	done chan error
}

func startHTTPServer() (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &httpServer{quotaCounter: newQuotaCounter(), url: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		if !s.allow() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "quota exceeded", http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("results\n"))
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// close stops the server and waits until it has.
func (s *httpServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	if err := <-s.done; !errors.Is(err, http.ErrServerClosed) {
		panic(err)
	}
}

// grpcServer is a gRPC server on 127.0.0.1, with the health service standing in for an
// API, that answers ResourceExhausted above its quota.
type grpcServer struct {
	*quotaCounter
	addr string
	srv  *grpc.Server
	done chan struct{}
}

func startGRPCServer() (*grpcServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &grpcServer{quotaCounter: newQuotaCounter(), addr: ln.Addr().String(), done: make(chan struct{})}
	s.srv = grpc.NewServer(grpc.UnaryInterceptor(
		func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if !s.allow() {
				return nil, status.Error(codes.ResourceExhausted, "quota exceeded")
			}
			return handler(ctx, req)
		}))
	healthpb.RegisterHealthServer(s.srv, health.NewServer())
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// close stops the server and waits until it has.
func (s *grpcServer) close() {
	s.srv.GracefulStop()
	<-s.done
}
