package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// catalogServer is a local HTTP API that misbehaves on purpose, by query:
//   - every request takes latency to answer;
//   - "flaky-…": the first request for the query fails with 500, the next ones succeed;
//   - "slow-…": the first request for the query hangs (far past the client's timeout),
//     the next ones answer in time;
//   - "down-…": every request fails with 503;
//   - anything else answers 200.
type catalogServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error

	mu       sync.Mutex
	seen     map[string]int // requests per query
	requests int
}

const (
	latency = 50 * time.Millisecond
	hang    = 10 * time.Second // far past any timeout: the client gives up first
)

func startCatalogServer() (*catalogServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &catalogServer{ln: ln, done: make(chan error, 1), seen: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", s.search)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

func (s *catalogServer) URL() string { return "http://" + s.ln.Addr().String() }

func (s *catalogServer) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	s.mu.Lock()
	s.requests++
	s.seen[q]++
	nth := s.seen[q]
	s.mu.Unlock()

	wait := latency
	if strings.HasPrefix(q, "slow-") && nth == 1 {
		wait = hang
	}
	select {
	case <-time.After(wait):
	case <-r.Context().Done(): // the client gave up
		return
	}
	switch {
	case strings.HasPrefix(q, "flaky-") && nth == 1:
		http.Error(w, "flaky", http.StatusInternalServerError)
	case strings.HasPrefix(q, "down-"):
		http.Error(w, "down", http.StatusServiceUnavailable)
	default:
		fmt.Fprintf(w, "results for %s", q)
	}
}

// Requests returns how many requests the server has received.
func (s *catalogServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *catalogServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	return err
}
