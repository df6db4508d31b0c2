package routing

// detours re-attaches each break point of the destination at hand with as
// few changed entries as it can find, before the Dijkstra settling: a
// breadth-first search from the break point u through the broken
// switches (most of which route through u) finds the nearest one, x,
// with a settled neighbour v; u, the switches between and x then route
// along that path to v. Every other switch upstream of u can keep its
// entry. Of the candidates of one search depth, the shortest resulting
// path is tried first (then channel order); each switch on the detour is
// attached under the CDG check, x first. A break point without a detour
// within maxDetour hops is left to the Dijkstra settling.
func (rp *repairer) detours() {
	t := rp.tree
	for u := int32(0); int(u) < len(t.state); u++ {
		if t.state[u] == stBroken && t.nxt[u] < 0 {
			rp.detour(u)
		}
	}
}

// maxDetour bounds the broken switches a detour passes through.
const maxDetour = 3

// detour searches and attaches one break point's detour (see detours).
func (rp *repairer) detour(u int32) {
	g, t := rp.g, rp.tree
	for x := range rp.from {
		rp.from[x] = -2
	}
	rp.from[u] = -1
	level := append(rp.queue[:0], u)
	for depth := 0; depth <= maxDetour && len(level) > 0; depth++ {
		// Candidates at this depth: channels from a reached switch to a
		// settled one, best first.
		cands := rp.cands[:0]
		for _, x := range level {
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				if v := g.Head[c]; t.state[v] == stOK {
					cands = append(cands, uint64(rp.hopsOf(v)+1)<<32|uint64(uint32(c)))
				}
			}
		}
		sortKeys(cands)
		rp.cands = cands
		for _, key := range cands {
			if rp.attachChain(int32(key & 0xFFFFFFFF)) {
				return
			}
		}
		var next []int32
		for _, x := range level {
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				if y := g.Head[c]; t.state[y] == stBroken && rp.from[y] == -2 {
					rp.from[y] = c
					next = append(next, y)
				}
			}
		}
		level = next
	}
}

// attachChain settles the switch c leaves through c, then each switch on
// the search path back to the break point through the channel the search
// took; it stops at the first that does not fit and reports whether the
// break point was reached.
func (rp *repairer) attachChain(c int32) bool {
	g, t := rp.g, rp.tree
	for c >= 0 {
		w := g.Tail[c]
		if t.state[w] != stBroken || !rp.attach(w, c) {
			return false
		}
		rp.settled(w, c)
		c = rp.from[w]
	}
	return true
}

// sortKeys sorts keys in increasing order (insertion sort: the candidate
// lists are a few switches' degrees long).
func sortKeys(k []uint64) {
	for i := 1; i < len(k); i++ {
		for j := i; j > 0 && k[j] < k[j-1]; j-- {
			k[j], k[j-1] = k[j-1], k[j]
		}
	}
}
