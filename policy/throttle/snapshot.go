package throttle

// Snapshot is a throttle's state, as Throttle.Snapshot reads it.
type Snapshot struct {
	Instance string // the instance id
	Requests int    // the calls attempted in the window now, rejected ones included
	Accepts  int    // the calls the backend accepted in the window now
	// Probability is the rejection probability a call arriving now would be given:
	// max(0, (Requests − K·Accepts) / (Requests + 1)), at most MaxRejection; 0 for a
	// disabled throttle.
	Probability float64
}

// Snapshot returns the throttle's id, the requests and accepts of its window now and the
// rejection probability they give. The fields are read together, under the throttle's
// lock. It is safe for concurrent use; a registry hands out the throttle
// (resilience.Lookup[*Throttle] with Layer) to read it.
func (t *Throttle) Snapshot() Snapshot {
	now := t.clk.Now()
	t.mu.Lock()
	c := &t.cur.Load().cfg
	r, a, p := t.settle(now)
	t.mu.Unlock()
	s := Snapshot{Instance: t.events.ID, Requests: int(r), Accepts: int(a)}
	if !c.Disabled {
		s.Probability = p
	}
	return s
}
