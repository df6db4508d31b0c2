package addressing

import (
	"fmt"
	"math/bits"
	"slices"
)

// Dragonfly compaction (seed 002 §III-B). A switch of group i holds, with
// per-group addressing (group ID, switch ID, host ID), T host rules and
// S−1 rules for the other switches of its group (exact group bits, so
// every destination in group i is caught by them), then group rules of
// lower priority: a group-ID prefix with the switch and host bits
// wildcarded, one output port. A group rule may also match group i
// (caught earlier) and IDs no group has; it may not match a group that
// leaves through another port. The compacted count is T + (S−1) plus the
// fewest such prefixes for the groups behind each port: one per own
// global port, at least one per other switch of the group. So no switch
// needs fewer than ports + S − 1 rules (the paper's "at least S − 1
// additional rules").
//
// What is left open is the assignment of group IDs to global ports; the
// readings below differ only there.

// DFReadings lists the compaction readings DragonflyCompaction takes.
var DFReadings = []string{"seed-plain", "seed-dontcare", "aligned"}

// dfLayout is a Dragonfly's global wiring and group IDs: holds[i][j] are
// the groups switch j of group i reaches through its global ports, id[G]
// the binary ID of group G, bits the ID width.
type dfLayout struct {
	holds [][][]int
	id    []int
	real  []int // all IDs, sorted
	bits  int
	free  bool // group i and unused IDs are don't-cares
}

// seedLayout is the wiring of seed 002 §III-A (group i, switch j, global
// port m → group (i + j·h + m + 1) mod g), group ID = group number.
func seedLayout(a, h, g int, free bool) *dfLayout {
	l := &dfLayout{holds: make([][][]int, g), id: make([]int, g), bits: bits.Len(uint(g - 1)), free: free}
	for i := range g {
		l.id[i] = i
		l.holds[i] = make([][]int, a)
		for j := range a {
			for m := range h {
				l.holds[i][j] = append(l.holds[i][j], (i+j*h+m+1)%g)
			}
		}
	}
	l.real = slices.Clone(l.id)
	return l
}

// alignedLayout is the best assignment of group IDs to global ports for
// the balanced maximum g = a·h + 1: groups come in a blocks of h, block b
// on the IDs b·h'..b·h'+h−1 (h' = h rounded up to a power of two), and
// the last group alone on ID a·h'. Switch j of a group in block b reaches
// block (b + j) mod a — the whole block of a prefix, one rule — except
// switch 0, whose block is its own group's: it holds the other h−1 groups
// of that block and the last group (whose switch j reaches block j). So
// every switch needs one group rule per other switch, plus one for the
// switch 0 of its group (its block prefix and the last group's ID), which
// it does not need itself. Every group pair is cabled once and every
// switch has h global cables (TestAlignedWiring).
func alignedLayout(a, h int) *dfLayout {
	g, hp := a*h+1, 1<<bits.Len(uint(h-1))
	l := &dfLayout{holds: make([][][]int, g), id: make([]int, g), bits: bits.Len(uint(a * hp)), free: true}
	last := g - 1
	for G := range last {
		l.id[G] = (G/h)*hp + G%h
	}
	l.id[last] = a * hp
	block := func(b int) []int {
		var out []int
		for G := b * h; G < (b+1)*h; G++ {
			out = append(out, G)
		}
		return out
	}
	for i := range g {
		l.holds[i] = make([][]int, a)
		if i == last {
			for j := range a {
				l.holds[i][j] = block(j)
			}
			continue
		}
		b := i / h
		for j := range a {
			if j == 0 {
				own := slices.DeleteFunc(block(b), func(G int) bool { return G == i })
				l.holds[i][0] = append(own, last)
				continue
			}
			l.holds[i][j] = block((b + j) % a)
		}
	}
	l.real = slices.Sorted(slices.Values(l.id))
	return l
}

// Prefix is a group rule: IDs whose top Len bits (of Bits) equal those of
// Value.
type Prefix struct{ Value, Len, Bits int }

// Matches reports whether id falls under the prefix.
func (p Prefix) Matches(id int) bool { return id>>(p.Bits-p.Len) == p.Value>>(p.Bits-p.Len) }

// cover returns the fewest disjoint prefixes that match every ID of x
// (sorted) and no real ID outside x, except own when l.free (then also
// any unused ID): a node of the ID trie is one rule when every real ID in
// it (own aside) is in x, else its halves are covered apart; without
// don't-cares unused IDs count as forbidden. Optimal for disjoint prefixes.
func (l *dfLayout) cover(x []int, own int, lo, size int, out []Prefix) []Prefix {
	nx := countIn(x, lo, lo+size)
	if nx == 0 {
		return out
	}
	forbidden := countIn(l.real, lo, lo+size) - nx
	if l.free {
		if own >= lo && own < lo+size {
			forbidden--
		}
	} else {
		forbidden = size - nx
	}
	if forbidden == 0 {
		return append(out, Prefix{Value: lo, Len: l.bits - bits.TrailingZeros(uint(size)), Bits: l.bits})
	}
	out = l.cover(x, own, lo, size/2, out)
	return l.cover(x, own, lo+size/2, size/2, out)
}

// countIn counts the values of sorted s in [lo, hi).
func countIn(s []int, lo, hi int) int {
	a, _ := slices.BinarySearch(s, lo)
	b, _ := slices.BinarySearch(s, hi)
	return b - a
}

// groupRules returns, for group i, the group-rule prefixes of the groups
// behind each of its switches.
func (l *dfLayout) groupRules(i int) [][]Prefix {
	out := make([][]Prefix, len(l.holds[i]))
	for j, gs := range l.holds[i] {
		x := make([]int, len(gs))
		for k, G := range gs {
			x[k] = l.id[G]
		}
		slices.Sort(x)
		out[j] = l.cover(x, l.id[i], 0, 1<<l.bits, nil)
	}
	return out
}

// DFCompaction summarises the compacted rule counts over every switch.
type DFCompaction struct {
	Reading  string
	Min, Max int
	Mean     float64
	AtBound  int // switches at ports + S − 1
	Switches int
	Bound    int // ports + S − 1
}

// DragonflyCompaction counts the compacted rules of every switch of the
// balanced Dragonfly p, a, h, g = a·h + 1 under a reading:
//
//   - seed-plain: the seed's wiring, group ID = group number, each
//     neighbour's range of groups split into prefixes that match nothing
//     else (the count DragonflyCompact gives);
//   - seed-dontcare: the same wiring and IDs, the own group and unused IDs
//     as don't-cares;
//   - aligned: the best assignment of group IDs to global ports
//     (alignedLayout); no assignment does better on the worst switch:
//     at the first bit where the groups split into two non-empty halves L
//     and R, a group in L gets every neighbour's groups as single prefixes
//     only if |R| ≡ 0 (mod h), one in R only if |R| ≡ 1, so for h > 1 some
//     switch needs ports + S rules.
//
// O(g·a·h·b·log g) for b ID bits.
func DragonflyCompaction(p, a, h int, reading string) (DFCompaction, error) {
	if p < 1 || a < 1 || h < 1 {
		return DFCompaction{}, fmt.Errorf("%w: dragonfly p=%d a=%d h=%d", ErrShape, p, a, h)
	}
	g := a*h + 1
	var l *dfLayout
	switch reading {
	case "seed-plain", "seed-dontcare":
		l = seedLayout(a, h, g, reading == "seed-dontcare")
	case "aligned":
		l = alignedLayout(a, h)
	default:
		return DFCompaction{}, fmt.Errorf("%w: compaction reading %q, expected one of %v", ErrShape, reading, DFReadings)
	}
	ports := p + (a - 1) + h
	c := DFCompaction{Reading: reading, Min: -1, Bound: ports + a - 1, Switches: g * a}
	sum := 0
	for i := range g {
		rules := l.groupRules(i)
		total := 0
		for _, r := range rules {
			total += len(r)
		}
		for j := range a {
			n := p + (a - 1) + h + total - len(rules[j])
			if c.Min < 0 || n < c.Min {
				c.Min = n
			}
			c.Max = max(c.Max, n)
			sum += n
			if n == c.Bound {
				c.AtBound++
			}
		}
	}
	c.Mean = float64(sum) / float64(c.Switches)
	return c, nil
}
