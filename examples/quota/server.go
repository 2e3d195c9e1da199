package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// quotaServer is an HTTP API with a quota per API key: 10 requests per second with bursts
// of 10, enforced with golang.org/x/time/rate, an implementation independent of
// resilience4go's. A request above the quota gets 429 Too Many Requests. It listens on
// 127.0.0.1, on a port of the system's choosing.
type quotaServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error

	mu   sync.Mutex
	keys map[string]*keyStats
}

// keyStats is one API key's quota and what the server answered it.
type keyStats struct {
	limiter *rate.Limiter
	ok      int
	tooMany int
}

// The quota the server enforces for each API key: 10 tokens per second, bursts of 10.
const serverRate rate.Limit = 10

const serverBurst = 10

func startQuotaServer() (*quotaServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &quotaServer{ln: ln, done: make(chan error, 1), keys: map[string]*keyStats{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", s.search)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// URL returns the server's base URL, e.g. "http://127.0.0.1:41235".
func (s *quotaServer) URL() string { return "http://" + s.ln.Addr().String() }

// search answers 200 within the quota of the request's API key, 429 above it.
func (s *quotaServer) search(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-API-Key")
	s.mu.Lock()
	k := s.keys[key]
	if k == nil {
		// A new key starts with a full bucket: a burst of 10 is allowed at once.
		k = &keyStats{limiter: rate.NewLimiter(serverRate, serverBurst)}
		s.keys[key] = k
	}
	allowed := k.limiter.Allow()
	if allowed {
		k.ok++
	} else {
		k.tooMany++
	}
	s.mu.Unlock()
	if !allowed {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "quota exceeded", http.StatusTooManyRequests)
		return
	}
	_, _ = w.Write([]byte("results for " + r.URL.Query().Get("q") + "\n"))
}

// stats returns how many requests of key the server answered with 200 and with 429.
func (s *quotaServer) stats(key string) (ok, tooMany int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.keys[key]; k != nil {
		return k.ok, k.tooMany
	}
	return 0, 0
}

// close stops the server and waits until it has.
func (s *quotaServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	return err
}
