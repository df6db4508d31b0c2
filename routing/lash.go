package routing

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// LASH is layered shortest path routing (Skeie, Lysne and Theiss, "Layered
// Shortest Path (LASH) Routing in Irregular System Area Networks", IPDPS
// 2002; OpenSM's "lash" engine), registered as "lash". It routes every
// (source switch, destination switch) pair along one shortest path and
// puts each path into the lowest virtual layer whose channel dependency
// graph stays acyclic with it; the layer is the path's SL and, through the
// identity SL2VL mapping, its VL. Deadlock-free on any topology, as long as
// the layers fit in opt.MaxVLs.
//
// Paths. LFTs are destination-based, so every source must take the same
// next hop at a given switch towards a given destination. The paths are
// therefore cut from one shortest-path tree per destination switch (all
// its LIDs share the tree). A breadth-first search from the destination
// gives the minimal-hop DAG; then, nearest switches first, each switch
// takes the channel to a neighbour one hop closer whose path onwards has
// the least total load (the channel's load plus that neighbour's path
// load: a least-loaded path within the minimal ones; ties: the lowest
// channel, i.e. the lowest port). Once the tree is complete, every
// channel's load grows by the number of (source port, destination LID)
// paths that cross it. The loads persist across destinations, which
// spreads the trees over parallel shortest paths. (Compared with
// balancing only the first hop, on a 6×6×6 torus with 4 hosts per switch
// this lowers the maximum edge forwarding index from 1.96 to 1.33 times
// the mean and the layers from 8 to 5.)
//
// Layering. Destinations are taken in switch order and, for each, sources
// in switch order; a path of two or more hops is tried in layers 0, 1, …
// and kept in the first whose CDG stays acyclic with the path's turns (a
// new layer always accepts it). Each layer's CDG is a bitset over the
// turns of the switch graph (the complete CDG in CSR form) kept acyclic by
// a dynamic topological order (Pearce and Kelly 2006): a path that follows
// the current order costs O(hops); other turns search only the channels
// between their ends in that order. No full cycle search per path.
//
// Sources. By default the paths layered are those from switches with CA
// or router ports attached (the traffic cdg.Verify checks by default);
// SLs of paths that start at a switch without terminals are 0 and not
// proven safe. Config.AllSources ("sources=all") layers the paths from
// every switch as well (switch-originated traffic; cdg.Options.SwitchSources).
//
// VL limit. When the layers exceed opt.MaxVLs, LASH still finishes the
// layering and returns a *VLError whose Needed is the exact number of
// layers this greedy order uses (not a lower bound).
//
// Output: SLTable.BySrc (SL = layer of (source switch, destination
// switch)), compacted to per-destination SLs when one layer suffices;
// identity SL2VL; NumVLs = layers used. Deterministic; the work is
// sequential (each tree depends on the loads of the previous ones and each
// path on the layers so far), so opt.Workers is not used. Cost:
// O(S·(S+C)) for the trees, O(S²·h) for paths of h hops that follow the
// layer orders, plus the Pearce–Kelly searches; memory per layer one bit
// per turn and one int32 per channel, plus O(S·LIDs) for the SLs. Safe for
// concurrent use.
type LASH struct{ Config LASHConfig }

func init() {
	Register("lash", func() Engine { return LASH{} })
}

// Name returns "lash".
func (LASH) Name() string { return "lash" }

// DeadlockFree is true: every layer's CDG is acyclic by construction.
func (LASH) DeadlockFree() bool { return true }

// lashState is the scratch of one LASH run.
type lashState struct {
	g     *fabric.Graph
	dist  []int32 // per switch: hops to the current destination, -1 unreachable
	next  []int32 // per switch: channel towards the current destination, -1 none
	queue []int32 // BFS order
	base  []int64 // per switch: terminal sources
	w     []int64 // per switch: sources whose path crosses it (current destination)
	cost  []int64 // per switch: load of its path to the current destination
	load  []int64 // per channel: paths routed over it so far
}

// Route computes the LASH routing; see LASH and LASHConfig.
func (e LASH) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	const name = "lash"
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	allSources := e.Config.AllSources
	S := g.NumSwitches()
	st := &lashState{
		g: g, dist: make([]int32, S), next: make([]int32, S), queue: make([]int32, S),
		base: make([]int64, S), w: make([]int64, S), cost: make([]int64, S), load: make([]int64, g.NumChannels()),
	}
	for s := 0; s < S; s++ {
		st.base[s] = int64(g.TermOff[s+1] - g.TermOff[s])
	}
	dl := lidsBySwitch(g)
	r := lft.New(g, name)
	r.SL.EnableBySrc(S)
	ts := newTurnSpace(g)
	sc := newDAGScratch(g.NumChannels())
	var layers []*dagLayer
	path := make([]int32, 0, S)
	for d := int32(0); int(d) < S; d++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lo, hi := dl.off[d], dl.off[d+1]
		if lo == hi {
			continue
		}
		st.tree(d, int64(hi-lo))
		for u := int32(0); int(u) < S; u++ {
			row := r.Row(u)
			if u == d {
				for j := lo; j < hi; j++ {
					row[dl.lid[j]] = dl.port[j]
				}
				continue
			}
			c := st.next[u]
			if c < 0 {
				continue // another component
			}
			for j := lo; j < hi; j++ {
				row[dl.lid[j]] = g.OutPort[c]
			}
			if st.dist[u] < 2 || (st.base[u] == 0 && !allSources) {
				continue // no dependencies, or no traffic: SL 0
			}
			path = path[:0]
			for x := u; x != d; x = g.Head[st.next[x]] {
				path = append(path, st.next[x])
			}
			l := 0
			for ; ; l++ {
				if l == len(layers) {
					layers = append(layers, ts.newLayer())
				}
				if ts.tryAdd(layers[l], path, sc) {
					break
				}
			}
			slRow := r.SL.SrcRow(u)
			for j := lo; j < hi; j++ {
				slRow[dl.lid[j]] = uint8(l)
			}
		}
		if opt.Progress != nil {
			opt.Progress(int(d)+1, S)
		}
	}
	if len(layers) > opt.MaxVLs {
		return nil, &VLError{Engine: name, Needed: len(layers), Limit: opt.MaxVLs}
	}
	r.NumVLs = max(1, len(layers))
	r.SL.Compact()
	return r, nil
}

// tree builds the balanced shortest-path tree towards switch d (see LASH)
// in O(S + C):
// next[u] is u's channel towards d, -1 for d itself and unreachable
// switches. nl is the number of LIDs of d.
func (st *lashState) tree(d int32, nl int64) {
	g := st.g
	for i := range st.dist {
		st.dist[i], st.next[i] = -1, -1
	}
	st.dist[d] = 0
	st.queue[0] = d
	h, t := 0, 1
	for h < t {
		u := st.queue[h]
		h++
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if v := g.Head[c]; st.dist[v] < 0 {
				st.dist[v] = st.dist[u] + 1
				st.queue[t] = v
				t++
			}
		}
	}
	st.cost[d] = 0
	for i := 1; i < t; i++ {
		u := st.queue[i]
		best, bc := int32(-1), int64(0)
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			v := g.Head[c]
			if st.dist[v] != st.dist[u]-1 {
				continue
			}
			if x := st.load[c] + st.cost[v]; best < 0 || x < bc {
				best, bc = c, x
			}
		}
		st.next[u], st.cost[u] = best, bc
	}
	copy(st.w, st.base)
	for i := t - 1; i >= 1; i-- {
		u := st.queue[i]
		c := st.next[u]
		st.load[c] += st.w[u] * nl
		st.w[g.Head[c]] += st.w[u]
	}
}
