package addressing

import "math/bits"

// RangePrefixes returns the fewest disjoint binary prefixes (TCAM rules
// with trailing wildcards) that match exactly the integers lo..hi
// (lo <= hi, both >= 0): the greedy split into maximal aligned blocks,
// which is optimal for a range. O(log hi).
func RangePrefixes(lo, hi int) int {
	n := 0
	for lo <= hi {
		// Largest aligned block starting at lo that fits in lo..hi.
		size := 1
		if lo > 0 {
			size = lo & -lo
		} else {
			size = 1 << (bits.Len(uint(hi+1)) - 1)
		}
		for lo+size-1 > hi {
			size >>= 1
		}
		lo += size
		n++
	}
	return n
}

// DragonflyCompact counts the compacted per-group rules of every switch of
// a Dragonfly wired as seed 002 §III-A (group i, switch j, global port m →
// group (i + j·h + m + 1) mod g) with group IDs in binary: T host rules,
// S−1 rules for the other switches of the group, one rule per own global
// port, and for each other switch j' of the group the prefixes of the
// contiguous (mod g) range of groups behind it (§III-B: remote groups
// compact only where their IDs align). Returns the minimum and maximum
// over all switches. Needs g = a·h + 1 (the balanced maximum, where each
// switch's groups form one range). O(g·a²·log g).
func DragonflyCompact(p, a, h, g int) (lo, hi int) {
	lo = -1
	for i := 0; i < g; i++ {
		for j := 0; j < a; j++ {
			n := dragonflySwitchRules(p, a, h, g, i, j)
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
	}
	return lo, hi
}

// dragonflySwitchRules is the compacted rule count of switch j of group i.
func dragonflySwitchRules(p, a, h, g, i, j int) int {
	n := p + (a - 1) + h
	for j2 := 0; j2 < a; j2++ {
		if j2 == j {
			continue
		}
		first := (i + j2*h + 1) % g
		if last := first + h - 1; last < g {
			n += RangePrefixes(first, last)
		} else {
			n += RangePrefixes(first, g-1) + RangePrefixes(0, last-g)
		}
	}
	return n
}
