package fip

import (
	"fmt"
	"slices"
)

// cutValue returns the cut bound c_A·(N−1)/(h_A·(N−h_A)) (see
// FabricBound.Cut), +Inf-like 2 when one side has no host.
func (fn *flowNet) cutValue(channels, hostsA float64) float64 {
	if hostsA <= 0 || hostsA >= fn.N {
		return 2
	}
	return channels * (fn.N - 1) / (hostsA * (fn.N - hostsA))
}

// sweepCuts lowers b.Cut to the best sweep cut of lengths l (nil: hop
// counts): from every source switch, the sets of the switches nearest to
// it under l, for every radius (the region-growing cuts of Leighton and
// Rao, "Multicommodity max-flow min-cut theorems", J. ACM 1999, §3). The
// dual lengths are long on the bottleneck, so its cut is usually among
// them; the first set of each sweep is the source switch alone.
//
// Each cut also bounds uniform traffic at overload (b.Mean): at most c_A
// of the h_A·(N−h_A)/(N−1) offered across it each way gets across, and
// every other pair at most its offer, so the mean accepted per host is at
// most (N − 2·h_A·(N−h_A)/(N−1) + 2·c_A)/N. Cost O(sources · C log S).
func (fn *flowNet) sweepCuts(sc *dijkstra, b *FabricBound, l []float64) {
	g := fn.g
	dist := make([]float64, fn.S)
	in := make([]bool, fn.S)
	for _, s := range fn.sources {
		sc.run(fn, s, l, dist)
		order := slices.Clone(sc.order)
		clear(in)
		channels, hostsA := 0.0, 0.0
		for i, v := range order {
			in[v] = true
			hostsA += fn.hosts[v]
			for c := g.Off[v]; c < g.Off[v+1]; c++ {
				if in[g.Head[c]] {
					channels-- // the reverse channel no longer leaves A
				} else {
					channels++
				}
			}
			// Cut only between distinct distances: a set that splits a
			// tie is a valid cut too, but the ties of one radius go
			// together in region growing.
			if i+1 < len(order) && dist[order[i+1]] == dist[v] {
				continue
			}
			if hostsA > 0 && hostsA < fn.N {
				across := hostsA * (fn.N - hostsA) / (fn.N - 1)
				b.Mean = min(b.Mean, (fn.N-2*across+2*min(channels, across))/fn.N)
			}
			if val := fn.cutValue(channels, hostsA); val < b.Cut {
				b.Cut = val
				b.CutName = fmt.Sprintf("%d switches around %s (%g cables)", i+1, g.SwitchName(s), channels)
				if i == 0 {
					b.CutName = fmt.Sprintf("%s (%g cables)", g.SwitchName(s), channels)
				}
			}
		}
	}
}
