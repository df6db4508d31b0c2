package dfsssp

import (
	"context"
	"slices"
)

// First-fit layering (parameter layering=firstfit): instead of breaking
// cycles after the fact, each path in turn goes to the lowest layer whose
// CDG stays acyclic with the path's dependencies added (the per-path check
// LASH makes, applied to DFSSSP's paths). Paths are taken in the order
// OpenSM lists layer 0 (destination by destination, sources by rank), so
// the result is deterministic. Each layer keeps a topological order of
// its channels, maintained under edge insertion by Pearce and Kelly's
// algorithm ("A dynamic topological sort algorithm for directed acyclic
// graphs", ACM JEA 11, 2006): a dependency that agrees with the order is
// added in O(1); otherwise only the channels between its ends in the order
// are searched and reordered.

// ffLayer is one layer's CDG with a topological order.
type ffLayer struct {
	has      []bool    // per turn
	out, in  [][]int32 // per channel: successor / predecessor channels
	ord      []int32   // per channel: position in the topological order
	mark     []bool    // per channel: visited in the current insertion
	fwd, bwd []int32   // scratch: channels visited forward / backward
}

func newFFLayer(C, T int) *ffLayer {
	l := &ffLayer{has: make([]bool, T), out: make([][]int32, C), in: make([][]int32, C), ord: make([]int32, C), mark: make([]bool, C)}
	for c := range l.ord {
		l.ord[c] = int32(c)
	}
	return l
}

// insert adds the dependency x -> y and reports true, or reports false
// (and changes nothing) when it would close a cycle.
func (l *ffLayer) insert(x, y int32) bool {
	lb, ub := l.ord[y], l.ord[x]
	if lb > ub {
		l.out[x] = append(l.out[x], y)
		l.in[y] = append(l.in[y], x)
		return true
	}
	// Forward from y within ord <= ub: reaching x closes a cycle.
	l.fwd = append(l.fwd[:0], y)
	l.mark[y] = true
	cyclic := x == y
	for i := 0; i < len(l.fwd) && !cyclic; i++ {
		for _, w := range l.out[l.fwd[i]] {
			if w == x {
				cyclic = true
				break
			}
			if !l.mark[w] && l.ord[w] <= ub {
				l.mark[w] = true
				l.fwd = append(l.fwd, w)
			}
		}
	}
	if cyclic {
		for _, v := range l.fwd {
			l.mark[v] = false
		}
		return false
	}
	// Backward from x within ord >= lb.
	l.bwd = append(l.bwd[:0], x)
	l.mark[x] = true
	for i := 0; i < len(l.bwd); i++ {
		for _, w := range l.in[l.bwd[i]] {
			if !l.mark[w] && l.ord[w] >= lb {
				l.mark[w] = true
				l.bwd = append(l.bwd, w)
			}
		}
	}
	// Reorder: the backward set before the forward set, on the positions
	// both held.
	byOrd := func(a, b int32) int { return int(l.ord[a] - l.ord[b]) }
	slices.SortFunc(l.fwd, byOrd)
	slices.SortFunc(l.bwd, byOrd)
	pos := make([]int32, 0, len(l.fwd)+len(l.bwd))
	for _, v := range l.bwd {
		pos = append(pos, l.ord[v])
	}
	for _, v := range l.fwd {
		pos = append(pos, l.ord[v])
	}
	slices.Sort(pos)
	i := 0
	for _, set := range [2][]int32{l.bwd, l.fwd} {
		for _, v := range set {
			l.ord[v] = pos[i]
			l.mark[v] = false
			i++
		}
	}
	l.out[x] = append(l.out[x], y)
	l.in[y] = append(l.in[y], x)
	return true
}

// remove drops x -> y, the dependency last added out of x and into y.
func (l *ffLayer) remove(x, y int32) {
	l.out[x] = l.out[x][:len(l.out[x])-1]
	l.in[y] = l.in[y][:len(l.in[y])-1]
}

// layeringFirstFit assigns every path to the lowest of at most limit
// layers that stays acyclic with it, and returns the layers used, or
// limit+1 as soon as a path fits in none.
func (b *builder) layeringFirstFit(ctx context.Context, limit int, st *Stats) (int, error) {
	g, p := b.g, b.p
	C, T := g.NumChannels(), len(b.tdOff)-1
	var layers []*ffLayer
	bySrcRank := make([]int32, b.S)
	for s := range b.S {
		bySrcRank[p.srcRank[s]] = int32(s)
	}
	var chans, added []int32
	needed := 1
	for di, d := range p.dests {
		if di&63 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		base := di * b.S
		nh := b.nh[base : base+b.S]
		for _, s := range bySrcRank {
			if p.mult[s] == 0 || s == d.sw || nh[s] < 0 {
				continue
			}
			chans = chans[:0]
			for c := nh[s]; ; c = nh[g.Head[c]] {
				chans = append(chans, c)
				if g.Head[c] == d.sw {
					break
				}
			}
			L := 0
			for ; ; L++ {
				if L == limit {
					return limit + 1, nil
				}
				if L == len(layers) {
					layers = append(layers, newFFLayer(C, T))
				}
				if l := layers[L]; b.fits(l, chans, &added) {
					break
				}
			}
			b.pl[base+int(s)] = uint8(L)
			if L > 0 {
				st.MovedPaths++
			}
			needed = max(needed, L+1)
		}
	}
	return needed, nil
}

// fits adds the path's dependencies to l and reports true, or leaves l
// unchanged and reports false when one of them would close a cycle.
func (b *builder) fits(l *ffLayer, chans []int32, added *[]int32) bool {
	*added = (*added)[:0]
	for i := 0; i+1 < len(chans); i++ {
		x, y := chans[i], chans[i+1]
		t := b.turn(x, y)
		if l.has[t] {
			continue
		}
		if !l.insert(x, y) {
			for j := len(*added) - 1; j >= 0; j-- {
				t := (*added)[j]
				x, y := chans[t], chans[t+1]
				l.remove(x, y)
				l.has[b.turn(x, y)] = false
			}
			return false
		}
		l.has[t] = true
		*added = append(*added, int32(i))
	}
	return true
}
