package nue

import "github.com/nuesm/nuesm/fabric"

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

// centralRoots picks a layer's roots (Algorithm 4.1, lines 3–4): the
// convex subgraph H of the switches holding the layer's destinations is
// the set of switches on shortest paths between them, and the root is the
// switch of highest betweenness centrality inside H (Brandes, "A faster
// algorithm for betweenness centrality", J. Math. Sociol. 25(2), 2001),
// counting shortest paths between destination switches weighted by their
// number of destinations. A disconnected switch graph gets one root per
// component that holds destinations (index: comp label; -1 otherwise).
// O(|D|·(S+C)) for |D| destination switches.
func centralRoots(g *fabric.Graph, ds []dest, comp []int32) (roots []int32, hull []bool) {
	S := g.NumSwitches()
	n := make([]float64, S)
	for _, d := range ds {
		n[d.sw]++
	}
	bc := make([]float64, S)
	hull = make([]bool, S)
	dist := make([]int32, S)
	sigma := make([]float64, S)
	delta := make([]float64, S)
	order := make([]int32, 0, S)
	for s := int32(0); int(s) < S; s++ {
		if n[s] == 0 {
			continue
		}
		hull[s] = true
		for i := range dist {
			dist[i] = -1
			sigma[i] = 0
			delta[i] = 0
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
		for i := len(order) - 1; i > 0; i-- {
			w := order[i]
			coeff := (n[w] + delta[w]) / sigma[w]
			for c := g.Off[w]; c < g.Off[w+1]; c++ {
				v := g.Head[c]
				if dist[v] == dist[w]-1 {
					delta[v] += sigma[v] * coeff
				}
			}
			bc[w] += n[s] * delta[w]
			if delta[w] > 0 {
				hull[w] = true
			}
		}
	}
	roots = make([]int32, S)
	for i := range roots {
		roots[i] = -1
	}
	for v := int32(0); int(v) < S; v++ {
		if !hull[v] {
			continue
		}
		c := comp[v]
		if r := roots[c]; r < 0 || bc[v] > bc[r] {
			roots[c] = v
		}
	}
	return roots, hull
}
