package dfsssp

import "github.com/nuesm/nuesm/lft"

// splitLayers gives the VLs a layering leaves free to the fullest layers,
// as OpenSM does after dfsssp_remove_deadlocks: one spare VL at a time to
// the layer with the most paths per VL (the first such layer on ties).
// weight[L] is the layer's (source LID, destination LID) pairs. The
// result holds how many VLs each layer spreads over; it sums to maxVLs
// when there are fewer layers than VLs.
func splitLayers(weight []int64, maxVLs int) []int {
	split := make([]int, len(weight))
	for i := range split {
		split[i] = 1
	}
	for spare := maxVLs - len(weight); spare > 0 && len(weight) > 0; spare-- {
		best, bw, bs := 0, int64(0), int64(1)
		for L, w := range weight {
			// w/split > bw/bs without floating point.
			if w*bs > bw*int64(split[L]) {
				best, bw, bs = L, w, int64(split[L])
			}
		}
		split[best]++
	}
	return split
}

// assignSLs writes the SL of every path into r (per source switch,
// lft.SLTable.BySrc) and returns the VLs used. Layer L owns the VLs
// start_L .. start_L+split[L]−1 (start_L = Σ_{j<L} split[j]); a path of a
// layer spread over k VLs takes VL start_L + (s + di) mod k, so each
// destination's sources and each source's destinations rotate over the
// layer's VLs. Any subset of an acyclic layer is acyclic, so spreading
// never creates a cycle. OpenSM draws the VL at random per queue pair
// instead (get_dfsssp_sl); a fixed spread keeps the engine deterministic.
func (b *builder) assignSLs(r *lft.Routing, split []int) int {
	start := make([]int, len(split)+1)
	for L, k := range split {
		start[L+1] = start[L] + k
	}
	r.SL.EnableBySrc(b.S)
	maxVL := 0
	for s := int32(0); int(s) < b.S; s++ {
		row := r.SL.SrcRow(s)
		for di, d := range b.p.dests {
			pid := di*b.S + int(s)
			if b.nh[pid] < 0 {
				continue
			}
			L := b.pl[pid]
			vl := start[L]
			if k := split[L]; k > 1 {
				vl += (int(s) + di) % k
			}
			row[d.lid] = uint8(vl)
			maxVL = max(maxVL, vl)
		}
	}
	r.SL.Compact()
	return maxVL + 1
}

// layerWeights returns OpenSM's paths_per_vl for layers 0..n−1: the
// (source LID, destination LID) pairs of each layer, sources being the
// terminal LIDs of the path's source switch (minus the destination's own
// port) and the switch LIDs. A pair from a switch LID is in no CDG in
// OpenSM and never moves, so it counts in layer 0.
func (b *builder) layerWeights(n int) []int64 {
	g, p := b.g, b.p
	w := make([]int64, n)
	own := make([]int64, b.S) // terminal LIDs per switch
	var swLIDs int64
	for s := int32(0); int(s) < b.S; s++ {
		own[s] = p.lids[s] - 1<<g.F.Nodes[g.Switches[s]].Ports[0].LMC
		swLIDs += p.lids[s] - own[s]
	}
	for di, d := range p.dests {
		base := di * b.S
		for s := range b.S {
			pid := base + s
			if L := int(b.pl[pid]); L < n && (b.nh[pid] >= 0 || int32(s) == d.sw) {
				n := own[s]
				if int32(s) == d.sw && d.port != 0 {
					n -= 1 << d.lmc
				}
				w[L] += n
			}
		}
		w[0] += swLIDs
		if d.port == 0 {
			w[0] -= p.lids[d.sw] - own[d.sw]
		}
	}
	return w
}
