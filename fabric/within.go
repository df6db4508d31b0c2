package fabric

// MatchTo maps g's switches and channels onto g0's by identity: a switch
// to g0's switch of the same node GUID, which must have the same LIDs
// (base LID and LMC); a channel to g0's channel out of the same port of
// the matched switch into the same port of the matched switch. sw[s] is
// g0's switch for g's switch s, ch[c] g0's channel for g's channel c. ok
// is false when a switch or channel of g has none, when two switches of
// g match one, or when g0's switch GUIDs are not unique (no identity to
// match by).
func (g *Graph) MatchTo(g0 *Graph) (sw, ch []int32, ok bool) {
	sw0 := make(map[uint64]int32, g0.NumSwitches())
	for s, id := range g0.Switches {
		sw0[g0.F.Nodes[id].GUID] = int32(s)
	}
	if len(sw0) != g0.NumSwitches() {
		return nil, nil, false
	}
	sw = make([]int32, g.NumSwitches())
	for s, id := range g.Switches {
		s0, ok := sw0[g.F.Nodes[id].GUID]
		if !ok {
			return nil, nil, false
		}
		if p, p0 := &g.F.Nodes[id].Ports[0], &g0.F.Nodes[g0.Switches[s0]].Ports[0]; p.LID != p0.LID || p.LMC != p0.LMC {
			return nil, nil, false
		}
		delete(sw0, g.F.Nodes[id].GUID) // matched once
		sw[s] = s0
	}
	ch = make([]int32, g.NumChannels())
	for c := range int32(g.NumChannels()) {
		c0 := g0.ChannelAt(sw[g.Tail[c]], g.OutPort[c])
		if c0 < 0 || g0.Head[c0] != sw[g.Head[c]] || g0.InPort[c0] != g.InPort[c] {
			return nil, nil, false
		}
		ch[c] = c0
	}
	return sw, ch, true
}

// Within reports whether g is g0 less some cables, switches and CA or
// router ports: every switch and channel of g is one of g0's (MatchTo),
// and every terminal of g is one of g0's (node GUID and port) with the
// same LIDs on the same switch port. Forwarding tables that route g0
// reach every LID of g over channels g has, unless an entry led into a
// part g lost.
func (g *Graph) Within(g0 *Graph) bool {
	to0, _, ok := g.MatchTo(g0)
	if !ok {
		return false
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
