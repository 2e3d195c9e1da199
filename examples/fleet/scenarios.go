//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// quota runs the fleet twice on fresh quotas: with a round trip per decision, then with
// leases, and compares them.
func (f *fleet) quota(ctx context.Context, w io.Writer) error {
	g, err := f.launch(ctx, 0, 0)
	if err != nil {
		return err
	}
	perCall, err := f.wait(ctx, g)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "a round trip per decision: %s\n", f.summary(perCall))
	if g, err = f.launch(ctx, f.o.lease, 0); err != nil {
		return err
	}
	leased, err := f.wait(ctx, g)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "leases of %v:            %s\n", f.o.lease, f.summary(leased))
	fmt.Fprintf(w, "  %s\n", f.leaseSummary(leased))
	fmt.Fprintf(w, "leases make %.0fx the decisions per second of a round trip per decision, with %.2g times its Redis commands per decision\n",
		float64(leased.decisions)/float64(max(perCall.decisions, 1)),
		perDecision(leased)/perDecision(perCall))
	return nil
}

func perDecision(r result) float64 { return float64(r.commands) / float64(max(r.decisions, 1)) }

// kill runs the fleet with leases and kills instance 0 with SIGKILL halfway: the others
// stay within the bound, and the fleet admits the quota again within one lease life.
func (f *fleet) kill(ctx context.Context, w io.Writer) error {
	g, err := f.launch(ctx, f.o.lease, 0)
	if err != nil {
		return err
	}
	at := g.start.Add(f.span / 2)
	time.Sleep(time.Until(at))
	if err := g.kill(0); err != nil {
		g.stop()
		return err
	}
	r, err := f.wait(ctx, g, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "leases of %v, instance 0 killed (SIGKILL) at %v: %s\n", f.o.lease, f.span/2, f.summary(r))
	k := at.UnixNano()
	p, l := int64(f.o.period), int64(f.o.lease)
	fmt.Fprintf(w, "admitted per %v: %d before the kill; %d from the kill; %d from one lease life after it (the quota: %d)\n",
		f.o.period, admittedIn(r.admissions, k-p, k), admittedIn(r.admissions, k, k+p),
		admittedIn(r.admissions, k+l, k+l+p), f.o.permits)
	return nil
}

// outage runs the fleet on a round trip per decision with the live fair share, and pauses
// Redis for -seconds: the instances then decide in-process, each at its share of the
// quota. A second run stops two instances more than one heartbeat expiry before the
// outage: the two others then take half each.
func (f *fleet) outage(ctx context.Context, w io.Writer) error {
	for _, stopped := range []int{0, 2} {
		if err := f.outageRun(ctx, w, stopped); err != nil {
			return err
		}
	}
	return nil
}

func (f *fleet) outageRun(ctx context.Context, w io.Writer, stopped int) error {
	// The instances must find Redis gone soon: a call bounded by 100ms.
	hb, outage, timeout := f.o.heartbeat, f.span, f.o.timeout
	f.span, f.o.timeout = 3*hb+outage+time.Second, 100*time.Millisecond
	defer func() { f.span, f.o.timeout = outage, timeout }()
	g, err := f.launch(ctx, 0, hb)
	if err != nil {
		return err
	}
	var killed []int
	for i := range min(stopped, len(g.instances)-1) {
		killed = append(killed, i)
	}
	time.Sleep(time.Until(g.start.Add(hb / 2)))
	for _, i := range killed {
		if err := g.kill(i); err != nil {
			g.stop()
			return err
		}
	}
	from := g.start.Add(3 * hb)
	time.Sleep(time.Until(from))
	if err := pause(ctx, f.nodes, outage); err != nil {
		g.stop()
		return err
	}
	r, err := f.wait(ctx, g, killed...)
	if err != nil {
		return err
	}
	// The instances find Redis gone at their first call that times out: count from a
	// little later, to the outage's end.
	a, b := from.Add(300*time.Millisecond).UnixNano(), from.Add(outage).UnixNano()
	t := (int64(f.o.period) + int64(f.o.permits) - 1) / int64(f.o.permits)
	quota := (b - a) / t
	got := admittedIn(r.admissions, a, b)
	fmt.Fprintf(w, "Redis paused %v, %d of %d instances running: admitted %d in the outage's last %v; the quota is %d (%+.1f%%, one burst is %d)\n",
		outage, len(g.instances)-len(killed), len(g.instances), got, time.Duration(b-a), quota,
		100*float64(int64(got)-quota)/float64(quota), f.o.permits)
	fmt.Fprint(w, "  each instance:")
	for i, recs := range r.each {
		if !slices.Contains(killed, i) {
			fmt.Fprintf(w, " %d", admittedIn(recs, a, b))
		}
	}
	fmt.Fprintln(w)
	return nil
}

// admittedIn counts the admissions whose calls ended in [a, b).
func admittedIn(recs []record, a, b int64) int {
	n := 0
	for _, r := range recs {
		if r.t1 >= a && r.t1 < b {
			n++
		}
	}
	return n
}

// breaker runs the breaker scenario: instance 0 sees the dependency fail and opens; the
// others follow through the fleet. It prints how long after instance 0 each other
// instance opened, against a PING's round trip ping, and how many half-open trials ran in
// the fleet before it closed again.
func (f *fleet) breaker(ctx context.Context, w io.Writer, ping time.Duration) error {
	g, err := f.launchAs(ctx, 0, 0, true)
	if err != nil {
		return err
	}
	if _, err := f.wait(ctx, g); err != nil {
		return err
	}
	var rs []breakerReport
	for i, in := range g.instances {
		var r breakerReport
		if err := json.Unmarshal(in.out.Bytes(), &r); err != nil {
			return fmt.Errorf("instance %d: %v: %s", i, err, in.out.String())
		}
		rs = append(rs, r)
	}
	fmt.Fprintf(w, "breaker: instance 0 saw the dependency fail and opened (on its own calls: %v)\n", !rs[0].Followed)
	var ran int64
	for i, r := range rs {
		ran += r.Trials
		if i > 0 {
			fmt.Fprintf(w, "  instance %d opened %v after it (followed the fleet: %v; PING round trip meanwhile %v, on a quiet fleet %v)\n",
				i, time.Duration(r.Opened-rs[0].Opened).Round(time.Microsecond), r.Followed, r.Ping.Round(time.Microsecond),
				ping.Round(time.Microsecond))
		}
	}
	fmt.Fprintf(w, "half-open: %d trials ran in the fleet (at most %d), then every instance closed\n", ran, trials)
	return nil
}
