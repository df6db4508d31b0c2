package fip

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// FabricBound is what the best possible routing can reach on a fabric
// under all-to-all traffic among its hosts, whatever its paths, VLs or
// adaptivity. Rates are flits per cycle per host, as a fraction of the
// link bandwidth (every link carries at most 1 per direction: the
// flitsim model). Hosts are the LID-bearing CA and router ports cabled
// to a switch, as flitsim counts nodes.
//
// The bounds come from the max concurrent multicommodity flow LP: route a
// demand λ/(N−1) from every host to every other host as a fractional flow
// on any paths, maximise λ; its optimum λ* bounds every routing, because
// the time-averaged traffic of any routing is such a flow.
//
//   - Shift: the exchange sends one message from every host to every
//     other; averaged over its completion time T it is a uniform demand
//     of (N−1)·M/T per host, so the accepted throughput (N−1)·M/T ≤ λ*.
//   - Uniform at overload: sources that avoid the bottleneck may be
//     served beyond λ* while others starve, so the mean accepted
//     throughput has its own bound Mean (see meanBound): the most total
//     flow when each pair is served at most at its offered rate.
type FabricBound struct {
	// Concurrent ≥ λ*: no routing sustains more for every host at once
	// (the least of the LP dual bounds found, the cut bounds and the host
	// links' 1; Study also takes the seed's earlier years' bound, as the
	// failures only add up).
	Concurrent float64 `json:"concurrent"`
	// ConcurrentLow ≤ λ*: a fractional flow that reaches it was found, so
	// λ* is known to within Concurrent/ConcurrentLow.
	ConcurrentLow float64 `json:"concurrent_low"`
	// Cut is the tightest cut bound found and CutName describes its side
	// (empty when no cut binds below 1): a set A of switches holding h_A
	// of the N hosts, with c_A channels leaving it, must carry
	// λ·h_A·(N−h_A)/(N−1) each way, so λ ≤ c_A·(N−1)/(h_A·(N−h_A)). The
	// cuts tried are every single switch and the sweeps of the dual
	// lengths (see sweepCuts).
	Cut     float64 `json:"cut"`
	CutName string  `json:"cut_name,omitempty"`
	// Mean bounds the mean accepted throughput per host of uniform random
	// traffic at offered load 1 in the long run (see meanBound).
	Mean float64 `json:"mean"`
	// Phases of the flow algorithm run.
	Phases int `json:"phases"`
}

// BoundOptions tune the flow algorithm; zero fields take defaults. The
// bounds stay sound whatever the values: only their tightness changes.
type BoundOptions struct {
	Epsilon   float64 // step size of the length updates (default 0.1)
	Gap       float64 // stop when Concurrent/ConcurrentLow ≤ 1+Gap (default 0.01)
	MaxPhases int     // stop after this many phases (default 1000)
}

func (o BoundOptions) withDefaults() BoundOptions {
	if o.Epsilon <= 0 {
		o.Epsilon = 0.1
	}
	if o.Gap <= 0 {
		o.Gap = 0.01
	}
	if o.MaxPhases <= 0 {
		o.MaxPhases = 1000
	}
	return o
}

// flowNet is the switch graph with hosts per switch: the commodities are
// grouped by source switch (hosts of one switch share their paths in the
// LP without loss), so switch s sends demand h_s·h_t/(N−1) per unit λ to
// every other switch t.
type flowNet struct {
	g       *fabric.Graph
	S       int
	hosts   []float64 // per switch
	N       float64
	sources []int32 // switches with hosts
}

func newFlowNet(g *fabric.Graph) (*flowNet, error) {
	S := g.NumSwitches()
	fn := &flowNet{g: g, S: S, hosts: make([]float64, S)}
	for _, t := range g.Terms {
		if t.Switch >= 0 && t.LID != 0 {
			fn.hosts[t.Switch]++
			fn.N++
		}
	}
	if fn.N < 2 {
		return nil, fmt.Errorf("fip: bound: %g hosts with a LID on a switch, need 2", fn.N)
	}
	for s, h := range fn.hosts {
		if h > 0 {
			fn.sources = append(fn.sources, int32(s))
		}
	}
	// Every pair of hosts must be connected, or no rate > 0 is possible.
	dist := make([]float64, S)
	var sc dijkstra
	sc.run(fn, fn.sources[0], nil, dist)
	for _, s := range fn.sources {
		if math.IsInf(dist[s], 1) {
			return nil, fmt.Errorf("fip: bound: hosts on %s cannot reach hosts on %s", g.SwitchName(fn.sources[0]), g.SwitchName(s))
		}
	}
	return fn, nil
}

// demand returns the demand from switch s to t per unit λ.
func (fn *flowNet) demand(s, t int32) float64 {
	if s == t {
		return 0
	}
	return fn.hosts[s] * fn.hosts[t] / (fn.N - 1)
}

// Bound computes the FabricBound of g.
//
// The concurrent flow is approximated by the multiplicative-weights
// scheme of Garg and Könemann ("Faster and simpler algorithms for
// multicommodity flow and other fractional packing problems", FOCS 1998,
// §5, max concurrent flow) with Fleischer's per-source shortest-path
// trees: each phase routes every source's full demand along shortest
// paths under channel lengths l, raising the length of each channel it
// loads. The result never rests on convergence: ConcurrentLow is the
// accumulated flow scaled to fit the capacities (feasible, so ≤ λ*), and
// Concurrent is the LP dual bound Σ_c l_c / Σ_{s,t} d(s,t)·dist_l(s,t),
// valid for every l ≥ 0 by weak duality, minimised over the phases.
//
// Cost per phase O(sources · C log S) for the Dijkstra runs (C channels,
// S switches); memory O(S + C).
func Bound(ctx context.Context, g *fabric.Graph, opt BoundOptions) (*FabricBound, error) {
	opt = opt.withDefaults()
	fn, err := newFlowNet(g)
	if err != nil {
		return nil, err
	}
	b := &FabricBound{Concurrent: 1, Cut: 1, Mean: 1} // host links: λ ≤ 1
	C := g.NumChannels()
	if C == 0 || len(fn.sources) < 2 { // one switch: only the host links
		b.ConcurrentLow = 1
		return b, nil
	}
	var sc dijkstra
	l := make([]float64, C)
	for c := range l {
		l[c] = 1
	}
	// Hop counts: the distance bound and the cuts of BFS balls (single
	// switches among them).
	b.Concurrent = fn.dualBound(&sc, l)
	best := slices.Clone(l)
	fn.sweepCuts(&sc, b, nil)
	x := make([]float64, C) // flow of the completed phases
	for b.Phases < opt.MaxPhases && b.Concurrent > b.ConcurrentLow*(1+opt.Gap) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fn.phase(&sc, l, x, opt.Epsilon)
		b.Phases++
		maxX := 0.0
		for _, v := range x {
			maxX = max(maxX, v)
		}
		b.ConcurrentLow = max(b.ConcurrentLow, min(1, float64(b.Phases)/maxX))
		if u := fn.dualBound(&sc, l); u < b.Concurrent {
			b.Concurrent = u
			copy(best, l)
		}
		if b.Phases%10 == 1 {
			fn.sweepCuts(&sc, b, l)
		}
		b.Concurrent = min(b.Concurrent, b.Cut)
	}
	fn.sweepCuts(&sc, b, best)
	b.Concurrent = min(b.Concurrent, b.Cut)
	b.Mean = min(b.Mean, fn.meanBound(&sc, best))
	// Θ* ≥ λ* ≥ ConcurrentLow: a Mean below it is rounding.
	b.Mean = max(b.Mean, b.ConcurrentLow)
	return b, nil
}

// phase routes every source's demand once along shortest-path trees,
// adding the flow to x and multiplying each loaded channel's length by
// 1+ε·(flow/capacity). A step routes at most one capacity's worth on any
// channel (Garg and Könemann's rule), so a source may take several trees.
// The lengths are rescaled to sum to 1 afterwards (the bounds and the
// update rule are invariant to scale; this keeps them in range).
func (fn *flowNet) phase(sc *dijkstra, l, x []float64, eps float64) {
	g := fn.g
	rem := make([]float64, fn.S)
	acc := make([]float64, fn.S)
	dist := make([]float64, fn.S)
	for _, s := range fn.sources {
		for _, t := range fn.sources {
			rem[t] = fn.demand(s, t)
		}
		for left := 1.0; left > 1e-12; {
			sc.run(fn, s, l, dist)
			copy(acc, rem)
			maxF := 0.0
			for i := len(sc.order) - 1; i > 0; i-- { // leaves first; order[0] = s
				v := sc.order[i]
				c := sc.pred[v]
				acc[g.Tail[c]] += acc[v]
				maxF = max(maxF, acc[v])
			}
			sigma := 1.0
			if maxF > 1 {
				sigma = 1 / maxF
			}
			for i := len(sc.order) - 1; i > 0; i-- {
				v := sc.order[i]
				if f := sigma * acc[v]; f > 0 {
					c := sc.pred[v]
					x[c] += f
					l[c] *= 1 + eps*f
				}
			}
			for _, t := range fn.sources {
				rem[t] *= 1 - sigma
			}
			left *= 1 - sigma
			if sigma == 1 {
				break
			}
		}
	}
	sum := 0.0
	for _, v := range l {
		sum += v
	}
	for c := range l {
		l[c] /= sum
	}
}

// dualBound returns Σ_c l_c / Σ_{s,t} d(s,t)·dist_l(s,t) (capacities 1):
// the LP dual value of lengths l, an upper bound on λ*.
func (fn *flowNet) dualBound(sc *dijkstra, l []float64) float64 {
	sum := 0.0
	for _, v := range l {
		sum += v
	}
	dist := make([]float64, fn.S)
	alpha := 0.0
	for _, s := range fn.sources {
		sc.run(fn, s, l, dist)
		for _, t := range fn.sources {
			alpha += fn.demand(s, t) * dist[t]
		}
	}
	if alpha <= 0 {
		return math.Inf(1)
	}
	return sum / alpha
}

// dijkstra is the scratch of shortest-path runs: after run, order holds
// the reached switches in order of distance (the source first) and
// pred[v] the channel into v on its shortest path.
type dijkstra struct {
	order []int32
	pred  []int32
	q     distHeap
}

// run computes distances from s under lengths l (nil: hop counts) into
// dist (+Inf where unreachable).
func (sc *dijkstra) run(fn *flowNet, s int32, l []float64, dist []float64) {
	g := fn.g
	if len(sc.pred) != fn.S {
		sc.pred = make([]int32, fn.S)
	}
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	sc.order = sc.order[:0]
	dist[s] = 0
	sc.q = append(sc.q[:0], distItem{0, s})
	for len(sc.q) > 0 {
		it := sc.q.pop()
		if it.d > dist[it.v] {
			continue
		}
		sc.order = append(sc.order, it.v)
		for c := g.Off[it.v]; c < g.Off[it.v+1]; c++ {
			w := 1.0
			if l != nil {
				w = l[c]
			}
			h := g.Head[c]
			if nd := it.d + w; nd < dist[h] {
				dist[h], sc.pred[h] = nd, c
				sc.q.push(distItem{nd, h})
			}
		}
	}
}

type distItem struct {
	d float64
	v int32
}

// distHeap is a binary min-heap on (d, v).
type distHeap []distItem

func (h distHeap) less(i, j int) bool {
	return h[i].d < h[j].d || (h[i].d == h[j].d && h[i].v < h[j].v)
}

func (h *distHeap) push(it distItem) {
	*h = append(*h, it)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *distHeap) pop() distItem {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}
