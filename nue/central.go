package nue

import (
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
)

// centralRoots picks every layer's roots (Algorithm 4.1, lines 3–4):
// sets[i] holds the destinations layer i's escape paths cover. The convex
// subgraph H of the switches holding them is the set of switches on
// shortest paths between them, and the root is the switch of highest
// betweenness centrality inside H (Brandes, "A faster algorithm for
// betweenness centrality", J. Math. Sociol. 25(2), 2001), counting shortest
// paths between destination switches weighted by their number of
// destinations. A disconnected switch graph gets one root per component
// that holds destinations (index: comp label; -1 otherwise). Up to workers
// goroutines share the sources; the result does not depend on workers.
// O(|D|·(S+C)) per class of equal layers for |D| destination switches.
// rows, when not nil, are the sweep's level rows: a source's breadth-first
// search is its row, built here once for both.
func centralRoots(g *fabric.Graph, sets [][]dest, comp []int32, workers int, rows *levelRows) [][]int32 {
	roots := make([][]int32, len(sets))
	// Layers whose destinations sit on the same switches in the same
	// numbers have the same centralities and hull, to the bit: compute
	// them once (round-robin on a regular fabric: the k=12 fat tree's 8
	// layers form 2 such classes).
	S := g.NumSwitches()
	counts := make([][]int32, len(sets))
	var reps []int                 // one layer per class
	same := make([]int, len(sets)) // layer -> its class's representative
	for i, ds := range sets {
		counts[i] = make([]int32, S)
		for _, d := range ds {
			counts[i][d.sw]++
		}
		same[i] = i
		for _, j := range reps {
			if slices.Equal(counts[i], counts[j]) {
				same[i] = j
				break
			}
		}
		if same[i] == i {
			reps = append(reps, i)
		}
	}
	workers = max(1, workers)
	acc := newAccum(S, counts, reps)
	// The sources' dependencies are independent: computed on all workers,
	// then added in source order, so that the sums are the same to the
	// bit whatever the workers.
	var srcs []int32
	for s := int32(0); int(s) < S; s++ {
		for _, i := range reps {
			if counts[i][s] != 0 {
				srcs = append(srcs, s)
				break
			}
		}
	}
	// In rounds of up to len(trees) sources: the workers compute the
	// round's trees, each in its own slot, then they are added in source
	// order. A round holds many trees on small fabrics, where a source's
	// work is too short to hand over one at a time.
	nw := parallel.Workers(len(srcs), workers)
	if len(srcs)*(S+g.NumChannels()) < minParallelWork {
		nw = 1
	}
	if nw == 1 {
		// One worker: one tree, built, accumulated and reused source
		// after source (the sums in the same order as by rounds).
		var t spTree
		lv := make([]int32, S)
		for _, s := range srcs {
			t.tree(g, s, rows, lv)
			acc.depend(&t)
			acc.add(&t)
		}
		acc.roots(comp, roots)
		return sameRoots(roots, same)
	}
	trees := make([]spTree, min(len(srcs), max(nw, treeBudget/treeBytes(g, len(reps)))))
	lvs := make([][]int32, nw)
	for lo := 0; lo < len(srcs); lo += len(trees) {
		round := srcs[lo:min(lo+len(trees), len(srcs))]
		_ = parallel.For(context.Background(), len(round), nw, func(wk, i int) error {
			if lvs[wk] == nil {
				lvs[wk] = make([]int32, S)
			}
			trees[i].tree(g, round[i], rows, lvs[wk])
			acc.depend(&trees[i])
			return nil
		})
		for i := range round {
			acc.add(&trees[i])
		}
	}
	acc.roots(comp, roots)
	return sameRoots(roots, same)
}

// sameRoots gives every layer the roots of its class's representative.
func sameRoots(roots [][]int32, same []int) [][]int32 {
	for i, j := range same {
		if j != i {
			roots[i] = slices.Clone(roots[j])
		}
	}
	return roots
}

// minParallelWork is the size of centralRoots' searches (sources ×
// (switches + channels)) below which one goroutine does them all: a
// fraction of a millisecond, less than what waiting for a second worker
// costs on a busy machine.
const minParallelWork = 1 << 18

// treeBudget bounds the memory of the trees centralRoots keeps at a time.
const treeBudget = 1 << 18

// treeBytes estimates the memory of one spTree of g with dependencies for
// a layers.
func treeBytes(g *fabric.Graph, a int) int {
	return g.NumSwitches()*(4+8+4+4+8*a) + 4*g.NumChannels()
}

// spTree holds the shortest paths from one source switch: the switches it
// reaches in breadth-first order, their numbers of shortest paths from it,
// and each one's predecessors on them.
type spTree struct {
	src           int32
	dist          []int32
	sigma         []float64
	order         []int32
	pred, predOff []int32
	// the dependencies (accum.depend)
	act          []int
	delta, coeff []float64
}

// tree computes the tree of source s into t: from s's level row when
// rows has it (building it if nobody has), else by its own search; lv is
// the row's scratch.
func (t *spTree) tree(g *fabric.Graph, s int32, rows *levelRows, lv []int32) {
	if rows != nil {
		if r := rows.row(s, lv); r != nil {
			t.fromRow(g, s, r)
			return
		}
	}
	t.build(g, s)
}

// fromRow is build with the breadth-first search of s done already (its
// level row): the same order, and the same predecessors in the same order
// (the channels one level closer, in the switch's channel order), so the
// same path counts to the bit.
func (t *spTree) fromRow(g *fabric.Graph, s int32, r *levelRow) {
	S := g.NumSwitches()
	if len(t.dist) < S {
		t.dist, t.sigma = make([]int32, S), make([]float64, S)
		t.order, t.predOff = make([]int32, 0, S+1), make([]int32, 0, S+1)
		t.pred = make([]int32, 0, g.NumChannels()+1)
	}
	t.src = s
	sigma, head, off := t.sigma, g.Head, g.Off
	// s has no predecessors: its slot is empty.
	predOff, pred := append(t.predOff[:0], 0, 0), t.pred[:0]
	sigma[s] = 1
	for _, u := range r.order[1:] {
		su := 0.0
		for m := r.parOf(u); m != 0; m &= m - 1 {
			v := head[off[u]+int32(bits.TrailingZeros64(m))]
			pred = append(pred, v)
			su += sigma[v]
		}
		sigma[u] = su
		predOff = append(predOff, int32(len(pred)))
	}
	t.order, t.pred, t.predOff = append(t.order[:0], r.order...), pred, predOff
}

// build computes the tree of source s into t, reusing its storage.
func (t *spTree) build(g *fabric.Graph, s int32) {
	S := g.NumSwitches()
	if len(t.dist) < S {
		t.dist, t.sigma = make([]int32, S), make([]float64, S)
		// One slot beyond the most entries: the loop stores every
		// neighbour and keeps it or not.
		t.order, t.predOff = make([]int32, 0, S+1), make([]int32, 0, S+1)
		t.pred = make([]int32, 0, g.NumChannels()+1)
	}
	dist, sigma := t.dist, t.sigma
	for i := range dist {
		dist[i] = -1
		sigma[i] = 0
	}
	t.src = s
	order := t.order[:cap(t.order)]
	order[0] = s
	dist[s], sigma[s] = 0, 1
	// Breadth-first; a switch's predecessors (neighbours one level
	// closer) are all known when it is dequeued, and so are their path
	// counts. Without branches on the neighbours' levels, which are
	// unpredictable: each neighbour is stored as the next switch found
	// and as the next predecessor and kept where it is one, and a
	// non-predecessor adds +0 (its path count masked) to the sum, which
	// leaves the sum as it is.
	// (Locals, not t's fields, in the loop: the stores would keep the
	// compiler from holding them in registers.)
	predOff, pred := append(t.predOff[:0], 0), t.pred[:cap(t.pred)]
	head, off := g.Head, g.Off
	n, m := 1, 0
	for h := 0; h < n; h++ {
		u := order[h]
		du, su := dist[u], sigma[u]
		for _, v := range head[off[u]:off[u+1]] {
			dv := dist[v]
			isNew := b2i(dv < 0)
			isPred := b2i(dv == du-1) & b2i(dv >= 0)
			order[n] = v
			n += isNew
			dist[v] = dv + int32(isNew)*(du+1-dv)
			pred[m] = v
			m += isPred
			su += math.Float64frombits(math.Float64bits(sigma[v]) & -uint64(isPred))
		}
		sigma[u] = su
		predOff = append(predOff, int32(m))
	}
	t.order, t.pred, t.predOff = order[:n], pred[:m], predOff
}

// accum accumulates the betweenness of the layers mine (Brandes), side
// by side.
type accum struct {
	mine  []int
	n, bc [][]float64
	hull  [][]bool
}

func newAccum(S int, counts [][]int32, mine []int) *accum {
	a := &accum{mine: mine, n: make([][]float64, len(mine)), bc: make([][]float64, len(mine)), hull: make([][]bool, len(mine))}
	for li, i := range mine {
		a.n[li], a.bc[li], a.hull[li] = make([]float64, S), make([]float64, S), make([]bool, S)
		for v, x := range counts[i] {
			a.n[li][v] = float64(x)
		}
	}
	return a
}

// depend computes into t the dependencies of its source, t.delta[v·A+x],
// for the A layers t.act with destinations on it; it only reads a.
func (a *accum) depend(t *spTree) {
	s := t.src
	t.act = t.act[:0]
	for li := range a.mine {
		if a.n[li][s] != 0 {
			t.act = append(t.act, li)
		}
	}
	A := len(t.act)
	if A == 0 {
		return
	}
	S := len(t.dist)
	if cap(t.delta) < S*A {
		t.delta = make([]float64, S*A)
	}
	delta := t.delta[:S*A]
	for _, v := range t.order {
		clear(delta[int(v)*A : int(v+1)*A])
	}
	if A == 1 {
		t.depend1(a.n[t.act[0]], delta)
		return
	}
	if cap(t.coeff) < A {
		t.coeff = make([]float64, A)
	}
	coeff, sigma, order := t.coeff[:A], t.sigma, t.order // coeff: set before read
	for i := len(order) - 1; i > 0; i-- {
		w := order[i]
		dw := delta[int(w)*A : int(w+1)*A]
		for x, li := range t.act {
			coeff[x] = (a.n[li][w] + dw[x]) / sigma[w]
		}
		for _, v := range t.pred[t.predOff[i]:t.predOff[i+1]] {
			dv, sv := delta[int(v)*A:int(v+1)*A], sigma[v]
			for x := range dv {
				dv[x] += sv * coeff[x]
			}
		}
	}
}

// depend1 is depend for one layer (n: its destinations per switch), the
// same operations in the same order without the per-layer loops.
func (t *spTree) depend1(n, delta []float64) {
	sigma, order, pred, predOff := t.sigma, t.order, t.pred, t.predOff
	for i := len(order) - 1; i > 0; i-- {
		w := order[i]
		cw := (n[w] + delta[w]) / sigma[w]
		for _, v := range pred[predOff[i]:predOff[i+1]] {
			delta[v] += sigma[v] * cw
		}
	}
}

// add adds the dependencies of t (see depend) to the betweenness; the
// sources must come in the same order whatever the workers.
func (a *accum) add(t *spTree) {
	s, A := t.src, len(t.act)
	for x, li := range t.act {
		a.hull[li][s] = true
		for _, w := range t.order[1:] {
			dw := t.delta[int(w)*A+x]
			a.bc[li][w] += a.n[li][s] * dw
			if dw > 0 {
				a.hull[li][w] = true
			}
		}
	}
}

// roots sets roots[i] for the layers i of a: per component, the switch of
// the hull of highest betweenness (the lowest index among equal ones).
func (a *accum) roots(comp []int32, roots [][]int32) {
	S := len(comp)
	for li, i := range a.mine {
		r := make([]int32, S)
		for v := range r {
			r[v] = -1
		}
		for v := int32(0); int(v) < S; v++ {
			if !a.hull[li][v] {
				continue
			}
			c := comp[v]
			if x := r[c]; x < 0 || a.bc[li][v] > a.bc[li][x] {
				r[c] = v
			}
		}
		roots[i] = r
	}
}
