package keyed

import "github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"

// eachCell calls yield on the schedule of every key's cell that follows the limiter's rate, one shard at a time under its
// lock, so that no cell is added or evicted meanwhile (calls for the keys held go on,
// without the lock).
func (k *Limiter[K]) eachCell(yield func(*rlcore.Schedule)) {
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		if t := s.index.Load(); t != nil {
			for j := range t.slots {
				if e := t.slots[j].e.Load(); e != nil && !e.slots.Own() { // an own rate stays
					yield(&e.slots)
				}
			}
		}
		s.mu.Unlock()
	}
}

// moveWindows moves every key's further windows to those of nr (rlcore.Multi.Move), one
// shard at a time under its lock, under the conversion lock; the reservations granted
// before give nothing back when canceled after it. A key is decided by the windows its
// cell keeps: until its cell is moved, those before the change.
func (k *Limiter[K]) moveWindows(nr *rlcore.Rate) {
	if !k.windowed {
		return
	}
	b := &k.base.b
	b.Conv.Lock()
	defer b.Conv.Unlock()
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		if t := s.index.Load(); t != nil {
			for j := range t.slots {
				if e := t.slots[j].e.Load(); e != nil && !e.slots.Own() {
					k.multiOf(&e.cell).Move(nr)
				}
			}
		}
		s.mu.Unlock()
	}
	b.Epoch.Add(1)
}
