package fabric

// Within reports whether g is g0 less some cables, switches and CA or
// router ports: every switch of g is one of g0's (node GUID) with the same
// LIDs (base LID and LMC), every terminal of g is one of g0's (node GUID
// and port) with the same LIDs on the same switch port, and every channel
// of g is one of g0's. Forwarding tables that route g0 reach every LID of g over
// channels g has, unless an entry led into a part g lost.
func (g *Graph) Within(g0 *Graph) bool {
	sw0 := make(map[uint64]int32, g0.NumSwitches())
	for s, id := range g0.Switches {
		sw0[g0.F.Nodes[id].GUID] = int32(s)
	}
	if len(sw0) != g0.NumSwitches() {
		return false // duplicate GUIDs: no identity to match by
	}
	to0 := make([]int32, g.NumSwitches())
	for s, id := range g.Switches {
		s0, ok := sw0[g.F.Nodes[id].GUID]
		if !ok {
			return false
		}
		if p, p0 := &g.F.Nodes[id].Ports[0], &g0.F.Nodes[g0.Switches[s0]].Ports[0]; p.LID != p0.LID || p.LMC != p0.LMC {
			return false
		}
		to0[s] = s0
	}
	type port struct {
		guid uint64
		num  uint8
	}
	t0 := make(map[port]int32, len(g0.Terms))
	for i := range g0.Terms {
		t0[port{g0.F.Nodes[g0.Terms[i].Node].GUID, g0.Terms[i].Port}] = int32(i)
	}
	for i := range g.Terms {
		t := &g.Terms[i]
		j, ok := t0[port{g.F.Nodes[t.Node].GUID, t.Port}]
		if !ok {
			return false
		}
		u := &g0.Terms[j]
		if t.LID != u.LID || t.LMC != u.LMC || t.SwitchPort != u.SwitchPort || (t.Switch < 0) != (u.Switch < 0) ||
			t.Switch >= 0 && to0[t.Switch] != u.Switch {
			return false
		}
	}
	for c := range int32(g.NumChannels()) {
		c0 := g0.ChannelAt(to0[g.Tail[c]], g.OutPort[c])
		if c0 < 0 || g0.Head[c0] != to0[g.Head[c]] || g0.InPort[c0] != g.InPort[c] {
			return false
		}
	}
	return true
}

// Same reports whether g and g0 are one fabric to route: g is within g0
// (Within) and lacks none of its switches, CA or router ports and
// channels. Node order, descriptions, widths and speeds may differ: no
// engine reads them, so tables that route g0 route g entry for entry.
func (g *Graph) Same(g0 *Graph) bool {
	return g.NumSwitches() == g0.NumSwitches() && len(g.Terms) == len(g0.Terms) &&
		g.NumChannels() == g0.NumChannels() && g.MaxLID() == g0.MaxLID() && g.Within(g0)
}
