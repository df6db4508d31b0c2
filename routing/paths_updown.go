package routing

import "github.com/nuesm/nuesm/fabric"

// Distance rows: one uint16 per switch, the hop count of the route the
// engine will take from that switch to one destination switch. Up*/Down*
// rows also carry a mode bit: set when the switch forwards downwards only.
const (
	noDist   uint16 = 0xFFFF // destination unreachable (or illegal) from here
	downBit  uint16 = 0x8000 // the switch reaches the destination going down only
	distMask uint16 = 0x7FFF
)

// Distances fit: a fabric has fewer than 0xC000 LIDs, hence switches, so
// no hop count reaches distMask.

// hopRow fills row with min-hop distances to switch dst (noDist where
// unreachable): a BFS over the channels entering each switch. queue is
// scratch of NumSwitches() entries. O(S + C), no allocation.
func hopRow(g *fabric.Graph, dst int32, row []uint16, queue []int32) {
	for i := range row {
		row[i] = noDist
	}
	row[dst] = 0
	queue[0] = dst
	h, t := 0, 1
	for h < t {
		v := queue[h]
		h++
		dv := row[v] + 1
		for c := g.Off[v]; c < g.Off[v+1]; c++ {
			u := g.Tail[g.Rev[c]]
			if row[u] == noDist {
				row[u] = dv
				queue[t] = u
				t++
			}
		}
	}
}

// upDown is an acyclic orientation of the channels (Schroeder et al.,
// "Autonet", IEEE JSAC 9(8) 1991, §6.6.1): up[c] says channel c goes up;
// both directions of a cable disagree, and following up channels never
// returns to a switch. order lists every switch such that the head of each
// up channel comes before its tail. A legal route is zero or more up
// channels followed by zero or more down channels; such routes cannot form
// a cycle of channel dependencies, so one VL suffices.
type upDown struct {
	up    []bool
	order []int32
}

// dist fills row for destination switch dst with the legal routes an LFT
// can realise. A destination-based table cannot know whether a packet has
// already turned down, so a switch from which dst can be reached going
// down only must always go down (else a packet that arrived descending
// would climb again): such switches get their shortest down-only distance
// with downBit set. Every other switch climbs: its distance is one more
// than the smallest among the heads of its up channels (computed first,
// thanks to order). The route from u is then a shortest legal route under
// that rule; noDist marks switches without one. O(S + C), no allocation;
// queue is scratch of NumSwitches() entries.
func (ud *upDown) dist(g *fabric.Graph, dst int32, row []uint16, queue []int32) {
	for i := range row {
		row[i] = noDist
	}
	// Down-only distances: u reaches v descending iff v reaches u by up
	// channels, so search from dst along up channels.
	row[dst] = downBit
	queue[0] = dst
	h, t := 0, 1
	for h < t {
		v := queue[h]
		h++
		dv := row[v] + 1
		for c := g.Off[v]; c < g.Off[v+1]; c++ {
			if u := g.Head[c]; ud.up[c] && row[u] == noDist {
				row[u] = dv
				queue[t] = u
				t++
			}
		}
	}
	for _, u := range ud.order {
		if row[u] != noDist {
			continue
		}
		best := noDist
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if !ud.up[c] {
				continue
			}
			if hv := row[g.Head[c]]; hv != noDist && hv&distMask < best {
				best = hv & distMask
			}
		}
		if best != noDist {
			row[u] = best + 1
		}
	}
}

// upCandidate reports whether channel c out of switch u continues a route
// of row: u at distance du takes c to a switch one hop closer, descending
// when u is in down mode and climbing otherwise. With up == nil (plain
// min-hop rows) any channel one hop closer qualifies.
func upCandidate(up []bool, c int32, du, hv uint16) bool {
	if hv == noDist {
		return false
	}
	if up == nil {
		return hv+1 == du
	}
	if du&downBit != 0 {
		return !up[c] && hv+1 == du // hv carries downBit too
	}
	return up[c] && hv&distMask+1 == du
}
