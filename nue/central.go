package nue

import (
	"sync"

	"github.com/nuesm/nuesm/fabric"
)

// components labels every switch with the lowest switch index of its
// connected component of the switch graph.
func components(g *fabric.Graph) []int32 {
	S := g.NumSwitches()
	comp := make([]int32, S)
	for i := range comp {
		comp[i] = -1
	}
	dist, q := make([]int32, S), make([]int32, S)
	for s := int32(0); int(s) < S; s++ {
		if comp[s] >= 0 {
			continue
		}
		g.BFS(s, dist, q)
		for t, d := range dist {
			if d >= 0 {
				comp[t] = s
			}
		}
	}
	return comp
}

// centralRoots picks every layer's roots (Algorithm 4.1, lines 3–4):
// sets[i] holds the destinations layer i's escape paths cover. The convex
// subgraph H of the switches holding them is the set of switches on
// shortest paths between them, and the root is the switch of highest
// betweenness centrality inside H (Brandes, "A faster algorithm for
// betweenness centrality", J. Math. Sociol. 25(2), 2001), counting shortest
// paths between destination switches weighted by their number of
// destinations. A disconnected switch graph gets one root per component
// that holds destinations (index: comp label; -1 otherwise). Layers are
// independent, so up to workers goroutines share them out; the result does
// not depend on workers. O(|D|·(S+C)) per layer for |D| destination
// switches.
func centralRoots(g *fabric.Graph, sets [][]dest, comp []int32, workers int) [][]int32 {
	roots := make([][]int32, len(sets))
	workers = max(1, min(workers, len(sets)))
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		var mine []int
		for i := k; i < len(sets); i += workers {
			mine = append(mine, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			brandes(g, sets, mine, comp, roots)
		}()
	}
	wg.Wait()
	return roots
}

// brandes sets roots[i] for the layers i in mine. The breadth-first search
// from a source switch does not depend on the layer, so it runs once for
// all of them; each layer accumulates in the same order as on its own.
func brandes(g *fabric.Graph, sets [][]dest, mine []int, comp []int32, roots [][]int32) {
	S := g.NumSwitches()
	n := make([][]float64, len(mine))
	bc := make([][]float64, len(mine))
	hull := make([][]bool, len(mine))
	for li, i := range mine {
		n[li], bc[li], hull[li] = make([]float64, S), make([]float64, S), make([]bool, S)
		for _, d := range sets[i] {
			n[li][d.sw]++
		}
	}
	dist := make([]int32, S)
	sigma := make([]float64, S)
	delta := make([]float64, S*len(mine))
	coeff := make([]float64, len(mine))
	order := make([]int32, 0, S)
	var pred, predOff []int32
	var act []int
	for s := int32(0); int(s) < S; s++ {
		needed := false
		for li := range mine {
			needed = needed || n[li][s] != 0
		}
		if !needed {
			continue
		}
		for i := range dist {
			dist[i] = -1
			sigma[i] = 0
		}
		order = append(order[:0], s)
		dist[s], sigma[s] = 0, 1
		for h := 0; h < len(order); h++ {
			u := order[h]
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				v := g.Head[c]
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					order = append(order, v)
				}
				if dist[v] == dist[u]+1 {
					sigma[v] += sigma[u]
				}
			}
		}
		// The predecessors of every reached switch on shortest paths
		// from s, once for all layers.
		predOff = append(predOff[:0], 0)
		pred = pred[:0]
		for _, w := range order {
			for c := g.Off[w]; c < g.Off[w+1]; c++ {
				if v := g.Head[c]; dist[v] == dist[w]-1 {
					pred = append(pred, v)
				}
			}
			predOff = append(predOff, int32(len(pred)))
		}
		// Accumulate the layers with destinations on s side by side:
		// delta[v*A+a] for the a-th of them, each in the order a single
		// layer would use, so the sums are the same to the bit.
		act = act[:0]
		for li := range mine {
			if n[li][s] != 0 {
				act = append(act, li)
				hull[li][s] = true
			}
		}
		A := len(act)
		delta = delta[:S*A]
		for _, v := range order {
			clear(delta[int(v)*A : int(v+1)*A])
		}
		coeff = coeff[:A]
		for i := len(order) - 1; i > 0; i-- {
			w := order[i]
			dw := delta[int(w)*A : int(w+1)*A]
			for a, li := range act {
				coeff[a] = (n[li][w] + dw[a]) / sigma[w]
			}
			for _, v := range pred[predOff[i]:predOff[i+1]] {
				dv, sv := delta[int(v)*A:int(v+1)*A], sigma[v]
				for a := range dv {
					dv[a] += sv * coeff[a]
				}
			}
			for a, li := range act {
				bc[li][w] += n[li][s] * dw[a]
				if dw[a] > 0 {
					hull[li][w] = true
				}
			}
		}
	}
	for li, i := range mine {
		r := make([]int32, S)
		for v := range r {
			r[v] = -1
		}
		for v := int32(0); int(v) < S; v++ {
			if !hull[li][v] {
				continue
			}
			c := comp[v]
			if x := r[c]; x < 0 || bc[li][v] > bc[li][x] {
				r[c] = v
			}
		}
		roots[i] = r
	}
}
