package cdg

import (
	"bytes"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// fabricMap matches a fabric g1 to the fabric g0 it came from by
// removing cables and switches: switches by node GUID, channels by the
// switches and port numbers at both ends.
type fabricMap struct {
	g0, g1 *fabric.Graph
	sw     []int32 // g1 switch -> g0 switch
	sw1    []int32 // g0 switch -> g1 switch, -1: removed
	ch     []int32 // g0 channel -> g1 channel, -1: removed
}

// mapFabrics returns the map of g1 onto g0, or nil when g1 is not g0 less
// some cables and switches (fabric.Graph.MatchTo: switches by node GUID
// with their LIDs, channels by switch ports), or a removed switch had
// sources (CA or router ports, or its own port with switchSources), or
// the CA and router ports or LIDs of the switches left changed.
func mapFabrics(g0, g1 *fabric.Graph, switchSources bool) *fabricMap {
	sw, ch1, ok := g1.MatchTo(g0)
	if !ok {
		return nil
	}
	m := &fabricMap{g0: g0, g1: g1, sw: sw, sw1: make([]int32, g0.NumSwitches()), ch: make([]int32, g0.NumChannels())}
	for s0 := range m.sw1 {
		m.sw1[s0] = -1
	}
	for s1, s0 := range sw {
		m.sw1[s0] = int32(s1)
	}
	for c0 := range m.ch {
		m.ch[c0] = -1
	}
	for c1, c0 := range ch1 {
		m.ch[c0] = int32(c1)
	}
	for s0, s1 := range m.sw1 {
		if s1 < 0 && (switchSources || len(g0.TermsOf(int32(s0))) > 0) {
			return nil
		}
	}
	if !m.sameTerminals() || !m.sameLIDs() {
		return nil
	}
	return m
}

// sameTerminals reports whether every switch left has the same CA and
// router ports on the same ports, and g1 has no others.
func (m *fabricMap) sameTerminals() bool {
	g0, g1 := m.g0, m.g1
	n := 0
	for s1 := range g1.NumSwitches() {
		t1, t0 := g1.TermsOf(int32(s1)), g0.TermsOf(m.sw[s1])
		if len(t1) != len(t0) {
			return false
		}
		for i := range t1 {
			a, b := &g1.Terms[t1[i]], &g0.Terms[t0[i]]
			if g1.F.Nodes[a.Node].GUID != g0.F.Nodes[b.Node].GUID || a.Port != b.Port ||
				a.LID != b.LID || a.LMC != b.LMC || a.SwitchPort != b.SwitchPort {
				return false
			}
		}
		n += len(t1)
	}
	return n == len(g1.Terms)
}

// sameLIDs reports whether every LID of g1 has the owner it had in g0 (a
// removed switch's own LID leaves g1).
func (m *fabricMap) sameLIDs() bool {
	g0, g1 := m.g0, m.g1
	if g1.MaxLID() > g0.MaxLID() {
		return false
	}
	for lid := 1; lid <= g1.MaxLID(); lid++ {
		sw1, t1 := g1.Owner(lid)
		sw0, t0 := g0.Owner(lid)
		switch {
		case sw1 >= 0:
			if sw0 != m.sw[sw1] {
				return false
			}
		case t1 >= 0:
			if t0 < 0 || g1.F.Nodes[g1.Terms[t1].Node].GUID != g0.F.Nodes[g0.Terms[t0].Node].GUID || g1.Terms[t1].Port != g0.Terms[t0].Port {
				return false
			}
		case t0 >= 0 || (sw0 >= 0 && m.sw1[sw0] >= 0):
			return false
		}
	}
	return true
}

// dirty returns the destinations of g1 whose next hops or SLs in r1
// differ from r0's (a next hop into a removed cable counts as changed),
// and the destinations of g0 that g1 lost, each in increasing order;
// same says that r1's entries and SLs are r0's.
func (m *fabricMap) dirty(r0, r1 *lft.Routing) (dirty, gone []int, same bool) {
	g0, g1 := m.g0, m.g1
	n := g1.MaxLID() + 1
	mark := make([]bool, n)
	same = true
	diff := func(a, b []uint8) {
		if bytes.Equal(a, b) {
			return
		}
		same = false
		for d := range a {
			if a[d] != b[d] {
				mark[d] = true
			}
		}
	}
	diff(r0.SL.ByDest[:n], r1.SL.ByDest[:n])
	for s1 := range int32(g1.NumSwitches()) {
		s0 := m.sw[s1]
		row0, row1 := r0.Row(s0)[:n], r1.Row(s1)[:n]
		diff(row0, row1)
		if r1.SL.BySrc != nil {
			diff(r0.SL.SrcRow(s0)[:n], r1.SL.SrcRow(s1)[:n])
		}
		for p, c := range g0.PortChannels(s0) {
			if c < 0 || m.ch[c] >= 0 {
				continue
			}
			for d, q := range row1 {
				if q == uint8(p) {
					mark[d] = true
				}
			}
		}
	}
	for d := 1; d < n; d++ {
		if sw, t := g1.Owner(d); mark[d] && (sw >= 0 || t >= 0) {
			dirty = append(dirty, d)
		}
	}
	for d := 1; d <= g0.MaxLID(); d++ {
		if sw, _ := g0.Owner(d); sw >= 0 && m.sw1[sw] < 0 {
			gone = append(gone, d)
		}
	}
	return dirty, gone, same
}

// mapMemo is the last fabric a State mapped its fabric onto.
type mapMemo struct {
	g             *fabric.Graph
	switchSources bool
	m             *fabricMap // nil: g is not the State's fabric less some parts
}

// mapTo returns mapFabrics(st's fabric, g, switchSources), remembering
// the last answer: the daemon asks Covers, RepairBase and Verify about
// the same fabric in turn.
func (st *State) mapTo(g *fabric.Graph, switchSources bool) *fabricMap {
	if mm := st.fmap.Load(); mm != nil && mm.g == g && mm.switchSources == switchSources {
		return mm.m
	}
	m := mapFabrics(st.v.g, g, switchSources)
	st.fmap.Store(&mapMemo{g: g, switchSources: switchSources, m: m})
	return m
}

// compose returns, per channel of g1, the base channel of toBase (g0's
// channels to base channels).
func (m *fabricMap) compose(toBase []int32) []int32 {
	out := make([]int32, m.g1.NumChannels())
	for c0, c1 := range m.ch {
		if c1 >= 0 {
			out[c1] = toBase[c0]
		}
	}
	return out
}
