package main

import (
	"slices"
	"sort"
	"time"
)

// overBound checks admissions against the GCRA bound of permits per period: no interval
// [a, a+d] may hold more than permits + floor(d/T), T the emission interval (the period
// divided by permits, rounded up to a nanosecond). An admission's instant is known only to
// lie within the call that made it, [t0, t1]; an interval certainly holds the admissions
// whose calls ran wholly inside it, so the check counts those, over every interval from
// some call's start to some call's end. It returns the largest excess found (0: none over
// the bound) and the interval where it is. It takes quadratic time in the admissions.
func overBound(recs []record, permits int, period time.Duration) (excess int, at [2]int64) {
	t := (int64(period) + int64(permits) - 1) / int64(permits)
	byStart := slices.Clone(recs)
	slices.SortFunc(byStart, func(x, y record) int { return cmp64(x.t0, y.t0) })
	var ends []int64 // the ends of the calls that start at or after a, sorted
	for i := len(byStart) - 1; i >= 0; i-- {
		a := byStart[i].t0
		e := byStart[i].t1
		j := sort.Search(len(ends), func(k int) bool { return ends[k] > e })
		ends = slices.Insert(ends, j, e)
		if i > 0 && byStart[i-1].t0 == a {
			continue // the interval from a is checked once every call from a is in
		}
		for k, b := range ends {
			if k+1 < len(ends) && ends[k+1] == b {
				continue
			}
			if over := k + 1 - permits - int((b-a)/t); over > excess {
				excess, at = over, [2]int64{a, b}
			}
			if len(ends)-permits-int((b-a)/t) <= excess {
				break // no later end can hold more over the bound than found
			}
		}
	}
	return excess, at
}

func cmp64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
