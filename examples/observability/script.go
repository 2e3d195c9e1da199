package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience4go/resilience4go/async"
	"github.com/resilience4go/resilience4go/clock"
	"github.com/resilience4go/resilience4go/policy"
)

// inventory is the inventory service, simulated: answer says how each request is
// answered, and the reply comes after its latency on clk.
type inventory struct {
	clk    clock.Clock
	answer func(sku string) reply
}

// reply is how the inventory answers one request.
type reply struct {
	latency time.Duration
	err     error
	// entered, when not nil, is told when the request arrives; held, when not nil, keeps
	// it in flight until it is closed, before its latency: a call that holds a
	// bulkhead's slot.
	entered chan<- struct{}
	held    <-chan struct{}
}

// ok is a reply of some stock after latency d; fail is the outage's 503 after d.
func ok(d time.Duration) reply   { return reply{latency: d} }
func fail(d time.Duration) reply { return reply{latency: d, err: errUnavailable} }

// Stock returns how many items of sku are in stock.
func (s *inventory) Stock(ctx context.Context, sku string) (int, error) {
	r := s.answer(sku)
	if r.entered != nil {
		r.entered <- struct{}{}
	}
	if r.held != nil {
		select {
		case <-r.held:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if err := s.clk.Sleep(ctx, r.latency); err != nil {
		return 0, err
	}
	if r.err != nil {
		return 0, r.err
	}
	return 7, nil
}

// step is one step of the script, played on a whole second of the manual clock (step i at
// i seconds); each ends well within its second.
type step struct {
	name string
	what string
	play func(s *scene)
}

// script is the scripted load. The figures that the tests expect are derived from it.
var script = []step{
	{"burst", "25 calls at once (4ms each)", func(s *scene) { s.calls(25, ok(4*time.Millisecond)) }},
	{"steady", "4 calls (30ms), one retried after a 503", func(s *scene) {
		s.call(ok(30 * time.Millisecond))
		s.call(fail(20*time.Millisecond), ok(30*time.Millisecond))
		s.calls(2, ok(30*time.Millisecond))
	}},
	{"outage", "8 calls; every request fails after 150ms", func(s *scene) {
		s.calls(8, fail(150*time.Millisecond), fail(150*time.Millisecond), fail(150*time.Millisecond))
	}},
	{"open", "5 calls", func(s *scene) { s.calls(5, ok(20*time.Millisecond)) }},
	{"open", "5 calls", func(s *scene) { s.calls(5, ok(20*time.Millisecond)) }},
	{"open", "5 calls", func(s *scene) { s.calls(5, ok(20*time.Millisecond)) }},
	{"half-open", "1 trial call, slow (300ms)", func(s *scene) { s.call(ok(300 * time.Millisecond)) }},
	{"recovered", "5 calls (40ms)", func(s *scene) { s.calls(5, ok(40*time.Millisecond)) }},
	{"bulkhead", "2 calls in flight (60ms), a third call", (*scene).fullBulkhead},
	{"steady", "5 calls (20ms)", func(s *scene) { s.calls(5, ok(20*time.Millisecond)) }},
	{"steady", "5 calls (20ms)", func(s *scene) { s.calls(5, ok(20*time.Millisecond)) }},
	{"prices", "3 quotes: 20ms, hedged, past the timeout", (*scene).quotes},
}

// report is what the script did, and what /metrics said after it.
type report struct {
	URL     string                       // the /metrics URL that was scraped
	Metrics map[string]*dto.MetricFamily // the scrape, by family name
	// Instruments are the names of the instruments that reported data at the end, as
	// OpenTelemetry names them (resilience.hedge.calls), sorted.
	Instruments []string
	Samples     []sample // the metrics read after each step
}

// play plays the script on a manual clock, serves /metrics at cfg.addr and scrapes it,
// prints each step's results and the key series, and draws the picture to cfg.svg.
func play(ctx context.Context, w io.Writer, cfg config) (*report, error) {
	clk := clock.NewManual()
	reader := sdkmetric.NewManualReader() // for the picture: the metrics after each step
	tel, err := newTelemetry(clk, logger(cfg.log), reader)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tel.close() }()
	s := &scene{ctx: ctx, clk: clk, replies: map[string][]reply{}}
	s.lookup, err = newLookup(tel.registry, &inventory{clk: clk, answer: s.answer})
	if err != nil {
		return nil, err
	}
	s.quote, err = newQuote(tel.registry, &prices{clk: clk, answer: s.answer})
	if err != nil {
		return nil, err
	}
	url, stop, err := listen(cmp.Or(cfg.addr, scriptAddr), tel.handler)
	if err != nil {
		return nil, err
	}
	defer stop()

	rep := &report{URL: url}
	fmt.Fprintf(w, "serving %s\nthe script, on a manual clock:\n", url)
	for i, st := range script {
		at := time.Duration(i) * time.Second
		clk.AdvanceTo(at)
		s.results = results{}
		st.play(s)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		smp, err := readSample(ctx, reader, at)
		if err != nil {
			return nil, err
		}
		rep.Samples = append(rep.Samples, smp)
		fmt.Fprintf(w, "  %-5s %-9s  %-43s %s\n", fmt.Sprintf("%ds", i), st.name, st.what, s.results)
	}

	rep.Metrics, err = scrape(ctx, url)
	if err != nil {
		return nil, err
	}
	rep.Instruments, err = instrumentNames(ctx, reader)
	if err != nil {
		return nil, err
	}
	summarize(w, url, rep.Metrics)
	if cfg.svg != "" {
		if err := os.WriteFile(cfg.svg, picture(rep.Samples), 0o644); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "drew %s\n", cfg.svg)
	}
	return rep, nil
}

// scene is where the script plays: the wrapped lookup and quote, the manual clock, the
// replies the inventory and the price service give each request, and the results of the
// current step's calls.
type scene struct {
	ctx     context.Context
	clk     *clock.Manual
	lookup  func(context.Context, string) (int, error)
	quote   func(context.Context, string) *async.Future[int]
	results results

	mu      sync.Mutex
	skus    int                // calls made so far: each call looks a new SKU up
	replies map[string][]reply // by SKU, the replies to its next attempts
}

// answer pops the reply to the next request for sku.
func (s *scene) answer(sku string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.replies[sku]
	if len(rs) == 0 {
		return reply{err: errors.New("the script has no reply for " + sku)}
	}
	s.replies[sku] = rs[1:]
	return rs[0]
}

// plan returns a new SKU whose attempts are answered with replies, in order.
func (s *scene) plan(replies ...reply) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skus++
	sku := "sku-" + strconv.Itoa(s.skus)
	s.replies[sku] = replies
	return sku
}

// call makes one call, whose attempts reach the inventory with these replies (the calls
// that a layer rejects never reach it: their replies go unused).
func (s *scene) call(replies ...reply) {
	sku := s.plan(replies...)
	_, err := s.lookup(s.ctx, sku)
	s.results.add(err)
	s.mu.Lock()
	delete(s.replies, sku)
	s.mu.Unlock()
}

// calls makes n calls one after another, each with these replies.
func (s *scene) calls(n int, replies ...reply) {
	for range n {
		s.call(replies...)
	}
}

// quotes asks for 3 quotes: one answered in 20ms; one whose first attempt is slow
// (200ms), hedged at 50ms by a second attempt that answers in 20ms and wins, the first
// then canceled; one whose two attempts (400ms each) both run past the timeout.
func (s *scene) quotes() {
	s.quoteOf(ok(20 * time.Millisecond))
	s.quoteOf(ok(200*time.Millisecond), ok(20*time.Millisecond))
	s.quoteOf(ok(400*time.Millisecond), ok(400*time.Millisecond))
}

// quoteOf asks for one quote, whose attempts reach the price service with these
// replies, and advances the clock 10ms at a time until it completes (at most 1s).
func (s *scene) quoteOf(replies ...reply) {
	sku := s.plan(replies...)
	f := s.quote(s.ctx, sku)
	for range 100 {
		if _, done, _ := f.Result(); done {
			break
		}
		s.clk.Advance(10 * time.Millisecond)
	}
	_, done, err := f.Result()
	if !done {
		err = errors.New("the quote of " + sku + " did not complete within 1s")
	}
	s.results.add(err)
	s.mu.Lock()
	delete(s.replies, sku)
	s.mu.Unlock()
}

// fullBulkhead holds 2 calls in flight, which take both of the bulkhead's slots, makes a
// third call, which the bulkhead rejects, and then lets the two go, one after the other,
// each after 60ms: the first ends 60ms after it started, the second 120ms.
func (s *scene) fullBulkhead() {
	type inFlight struct {
		release chan struct{}
		done    chan error
	}
	var held [2]inFlight
	for i := range held {
		entered := make(chan struct{}, 1)
		held[i] = inFlight{release: make(chan struct{}), done: make(chan error, 1)}
		sku := s.plan(reply{latency: 60 * time.Millisecond, entered: entered, held: held[i].release})
		go func() {
			_, err := s.lookup(s.ctx, sku)
			held[i].done <- err
		}()
		select {
		case <-entered: // in flight
		case err := <-held[i].done: // it never got there: the results will say
			held[i].done <- err
		}
	}
	s.call(ok(60 * time.Millisecond))
	for i := range held {
		close(held[i].release)
		s.results.add(<-held[i].done)
	}
}

// results counts how a step's calls ended.
type results struct {
	succeeded, failed int
	rejected          map[policy.Layer]int
	order             []policy.Layer // the layers, in the order they first rejected a call
}

func (r *results) add(err error) {
	if err == nil {
		r.succeeded++
		return
	}
	rej, ok := errors.AsType[policy.Rejection](err)
	if !ok {
		r.failed++
		return
	}
	l := rej.RejectedBy()
	if r.rejected == nil {
		r.rejected = map[policy.Layer]int{}
	}
	if r.rejected[l] == 0 {
		r.order = append(r.order, l)
	}
	r.rejected[l]++
}

// String reads e.g. "10 succeeded, 15 rejected by rateLimiter".
func (r results) String() string {
	var parts []string
	if r.succeeded > 0 {
		parts = append(parts, fmt.Sprintf("%d succeeded", r.succeeded))
	}
	if r.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", r.failed))
	}
	for _, l := range r.order {
		parts = append(parts, fmt.Sprintf("%d rejected by %s", r.rejected[l], l))
	}
	return strings.Join(parts, ", ")
}
