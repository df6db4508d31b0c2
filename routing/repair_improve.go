package routing

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// newChannels returns g's channels whose cable before lacks (a repaired
// or added cable, or a cable of a switch before lacks), matched by the
// GUIDs and port numbers of both ends, in channel order.
func newChannels(g, before *fabric.Graph) []int32 {
	at := make(map[uint64]int32, before.NumSwitches())
	for s, id := range before.Switches {
		at[before.F.Nodes[id].GUID] = int32(s)
	}
	guid := func(g *fabric.Graph, s int32) uint64 { return g.F.Nodes[g.Switches[s]].GUID }
	var out []int32
	for c := int32(0); int(c) < g.NumChannels(); c++ {
		s0, ok := at[guid(g, g.Tail[c])]
		if ok {
			c0 := before.ChannelAt(s0, g.OutPort[c])
			if c0 >= 0 && before.InPort[c0] == g.InPort[c] && guid(before, before.Head[c0]) == guid(g, g.Head[c]) {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// improve moves traffic onto the new channels: switch u takes new channel
// c = u→v towards destination d when v's path to d is intact and at
// least two hops shorter than u's (u's path gets strictly shorter), and
// the new dependencies keep every VL acyclic: the traffic that enters u
// now turns into c, and u's traffic runs on along v's path (the
// re-attachment check of repairDest, for a switch that is not broken).
// Each such entry changes once; every entry improve changes leads into a
// new channel. It returns the entries changed.
//
// Cost: for every new channel and LID, a walk along the tables from both
// ends; then O(switches) per destination that improves, plus the
// Pearce–Kelly insertions of its new turns.
func (rp *repairer) improve(ctx context.Context, chans []int32) (int, error) {
	g := rp.g
	type cand struct {
		d int
		c int32
	}
	var cands []cand
	for d := 1; d <= g.MaxLID(); d++ {
		if d%256 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		for _, c := range chans {
			hu, hv := rp.hops(g.Tail[c], d), rp.hops(g.Head[c], d)
			if hu >= 0 && hv >= 0 && hv+1 < hu {
				cands = append(cands, cand{d, c})
			}
		}
	}
	n := 0
	for i := 0; i < len(cands); {
		j := i
		for j < len(cands) && cands[j].d == cands[i].d {
			j++
		}
		chs := make([]int32, 0, j-i)
		for _, x := range cands[i:j] {
			chs = append(chs, x.c)
		}
		n += rp.improveDest(cands[i].d, chs)
		i = j
	}
	return n, nil
}

// hops counts switch x's hops to LID d along the routing's tables, or -1
// when they do not reach d's switch.
func (rp *repairer) hops(x int32, d int) int {
	g, r := rp.g, rp.r
	sw, term := g.Owner(d)
	if term >= 0 {
		sw = g.Terms[term].Switch
	}
	if sw < 0 {
		return -1
	}
	for n := 0; n <= g.NumSwitches(); n++ {
		if x == sw {
			return n
		}
		p := r.Port(x, d)
		if p == lft.NoPort || p == 0 {
			return -1
		}
		c := g.ChannelAt(x, p)
		if c < 0 {
			return -1
		}
		x = g.Head[c]
	}
	return -1
}

// improveDest tries the new channels chs for destination d (see improve)
// and returns the entries changed.
func (rp *repairer) improveDest(d int, chs []int32) int {
	g, t, r := rp.g, rp.tree, rp.r
	col := rp.col
	for x := range col {
		col[x] = r.Port(int32(x), d)
	}
	if !t.load(d, col) {
		return 0
	}
	t.classify()
	rp.src = nil
	if r.SL.BySrc != nil {
		for x := range rp.srcBuf {
			rp.srcBuf[x] = r.SL.SrcRow(int32(x))[d]
		}
		t.ownPerSource(rp.srcBuf, &r.SL2VL.Default)
	} else {
		t.ownPerDest(r.SL2VL.Default[r.SL.ByDest[d]&0xF])
	}
	t.spread()
	rp.distances()
	n := 0
	for _, c := range chs {
		u, v := g.Tail[c], g.Head[c]
		if t.state[u] != stOK || t.state[v] != stOK || rp.dist[v]+1 >= rp.dist[u] {
			continue
		}
		if !rp.reroute(u, c) {
			continue
		}
		r.SetPort(u, d, g.OutPort[c])
		col[u] = g.OutPort[c]
		n++
		rp.distances()
	}
	rp.ly.commit()
	return n
}

// reroute moves switch u, on a settled path, to channel c: the traffic
// entering u turns into c, and u's traffic runs on along c's head's path.
// It reports false, changing nothing, when a new turn closes a cycle.
func (rp *repairer) reroute(u, c int32) bool {
	g, t, ly := rp.g, rp.tree, rp.ly
	m := ly.mark()
	for e := g.Off[u]; e < g.Off[u+1]; e++ {
		in := g.Rev[e]
		x := g.Tail[in]
		if t.nxt[x] != in {
			continue
		}
		for vl := uint8(0); t.mask[x]>>vl != 0; vl++ {
			if t.mask[x]>>vl&1 != 0 && !ly.try(vl, in, c) {
				ly.rollback(m)
				return false
			}
		}
	}
	prev := t.nxt[u]
	t.nxt[u] = c
	if !rp.turnsFit(u, t.mask[u]) {
		t.nxt[u] = prev
		ly.rollback(m)
		return false
	}
	t.push(g.Head[c], t.mask[u])
	return true
}
