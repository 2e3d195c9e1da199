package keyed

import "github.com/resilience4go/resilience4go/ratelimit/internal/rlcore"

// eachCell calls yield on the schedule of every key's cell, one shard at a time under its
// lock, so that no cell is added or evicted meanwhile (calls for the keys held go on,
// without the lock).
func (k *Limiter[K]) eachCell(yield func(*rlcore.Schedule)) {
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		if t := s.index.Load(); t != nil {
			for j := range t.slots {
				if e := t.slots[j].e.Load(); e != nil {
					yield(&e.slots)
				}
			}
		}
		s.mu.Unlock()
	}
}
