package fip

import (
	"cmp"
	"slices"
)

// meanBound bounds the mean accepted throughput per host of uniform random
// traffic at offered load 1. Each pair of hosts is offered 1/(N−1), and in
// the long run no pair is served more than it is offered, so the accepted
// traffic is a flow with pair caps u_k = 1/(N−1) (the max multicommodity
// flow LP). Its dual: for any channel lengths y ≥ 0,
//
//	total ≤ Σ_c y_c + Σ_k u_k·max(0, 1 − dist_y(k)),
//
// with pairs on one switch at distance 0. meanBound tries y = α·l for the
// concurrent flow's best lengths l and y = the indicator of the channels
// leaving or entering chosen switches (greedily: a switch's channels join
// when they lower the bound), each with the best α, and returns the least
// total divided by N (at most 1); sweepCuts adds the cuts' bounds. Cost
// O(sources² · C log S).
func (fn *flowNet) meanBound(sc *dijkstra, l []float64) float64 {
	best := fn.scaledDual(sc, l)
	y := make([]float64, len(l))
	try := make([]float64, len(l))
	cur := fn.scaledDual(sc, y) // y = 0: the total offered
	for _, s := range fn.sources {
		for _, in := range []bool{false, true} {
			copy(try, y)
			fn.markSwitch(try, s, in)
			if v := fn.scaledDual(sc, try); v < cur {
				cur = v
				copy(y, try)
			}
		}
	}
	return min(1, best/fn.N, cur/fn.N)
}

// markSwitch sets the length of the channels leaving s (in: entering s)
// to 1.
func (fn *flowNet) markSwitch(y []float64, s int32, in bool) {
	g := fn.g
	for c := g.Off[s]; c < g.Off[s+1]; c++ {
		if in {
			y[g.Rev[c]] = 1
		} else {
			y[c] = 1
		}
	}
}

// scaledDual returns min over α ≥ 0 of α·Σy + Σ_k u_k·max(0, 1 − α·d_k),
// d_k the distances under y: a convex piecewise-linear function of α,
// least at α = 0 or at a breakpoint 1/d_k.
func (fn *flowNet) scaledDual(sc *dijkstra, y []float64) float64 {
	sumY := 0.0
	for _, v := range y {
		sumY += v
	}
	type pair struct{ d, u float64 }
	var pairs []pair
	total := 0.0 // Σ u_k: the value at α = 0
	dist := make([]float64, fn.S)
	for _, s := range fn.sources {
		sc.run(fn, s, y, dist)
		for _, t := range fn.sources {
			u := fn.hosts[s] * fn.hosts[t] / (fn.N - 1)
			if s == t {
				u = fn.hosts[s] * (fn.hosts[s] - 1) / (fn.N - 1)
			}
			total += u
			if dist[t] > 0 {
				pairs = append(pairs, pair{dist[t], u})
			}
		}
	}
	// At α = 1/d_j the pairs with d_k ≥ d_j contribute nothing and those
	// with d_k < d_j contribute u_k − α·u_k·d_k.
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.d, b.d) })
	near := total // Σ u_k over pairs with d_k < d_j (the d = 0 ones first)
	for _, p := range pairs {
		near -= p.u
	}
	best, nearUD := total, 0.0
	for j := 0; j < len(pairs); {
		d := pairs[j].d
		alpha := 1 / d
		best = min(best, alpha*sumY+near-alpha*nearUD)
		for ; j < len(pairs) && pairs[j].d == d; j++ {
			near += pairs[j].u
			nearUD += pairs[j].u * pairs[j].d
		}
	}
	return best
}
