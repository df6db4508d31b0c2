package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// schedule is a plan indexed for verification: per destination LID its
// writes, SL changes and paused sources, the SL2VL schedule, the epochs.
// Steps are numbered from 1.
type schedule struct {
	K        int32
	writes   map[int32][]wref   // LID -> LFT writes
	sls      map[int32][]stepSL // LID -> SL changes, in step order
	pauses   map[int32]map[int32][]window
	epochs   []window
	vlStep   int32
	vlTouch  []bool
	after    *lft.SL2VL // old SL2VL with the plan's SL2VL writes applied
	final    *lft.Routing
	slUsed   [16]bool
	dark     map[int32]bool // Plan.Blackout
	problems []string
}

type wref struct {
	step int32
	sw   int32
	val  uint8
}

// index checks the plan's shape and indexes it. Problems (a write in a
// barrier, an entry written twice, an Old value that is not the old
// table's, an unmatched Pause) are collected, not fatal.
func index(g *fabric.Graph, old *lft.Routing, p *Plan) *schedule {
	sc := &schedule{K: int32(len(p.Steps)), writes: map[int32][]wref{}, sls: map[int32][]stepSL{},
		pauses: map[int32]map[int32][]window{}, final: old.Clone()}
	for _, sl := range old.SL.ByDest {
		sc.slUsed[sl&15] = true
	}
	for _, sl := range old.SL.BySrc {
		sc.slUsed[sl&15] = true
	}
	for _, sl := range old.SL.Pair {
		sc.slUsed[sl&15] = true
	}
	for _, d := range p.Blackout {
		if sc.dark == nil {
			sc.dark = map[int32]bool{}
		}
		sc.dark[d] = true
	}
	x := &indexer{g: g, old: old, sc: sc, written: map[int64]int32{}, open: map[[2]int32]int32{}}
	start := int32(1)
	for i := range p.Steps {
		s, k := &p.Steps[i], int32(i+1)
		if s.Kind > Resume {
			x.bad("step %d: unknown step kind %d", k, s.Kind)
		}
		if s.Kind != Write && (len(s.LFT) > 0 || len(s.SL) > 0 || len(s.SL2VL) > 0) {
			x.bad("step %d: a %s step writes tables", k, s.Kind)
		}
		if s.Kind != Pause && s.Kind != Resume && len(s.Paused) > 0 {
			x.bad("step %d: a %s step names paused pairs", k, s.Kind)
		}
		x.lftWrites(k, s)
		x.slChanges(k, s)
		if len(s.SL2VL) > 0 {
			x.sl2vlWrites(k, s)
		}
		x.pausedPairs(k, s)
		if s.Kind == Barrier {
			sc.epochs = append(sc.epochs, window{start, k})
			start = k
		}
	}
	// In key order: only the first 20 problems are kept, so map order would
	// make the report differ between runs.
	for _, key := range slices.SortedFunc(maps.Keys(x.open), func(a, b [2]int32) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		x.bad("step %d: LID %d from switch %d paused and never resumed", x.open[key], key[0], key[1])
	}
	if start <= sc.K {
		sc.epochs = append(sc.epochs, window{start, sc.K})
	}
	sc.after = &sc.final.SL2VL
	for lid := range sc.sls {
		cs := sc.sls[lid]
		slices.SortStableFunc(cs, func(a, b stepSL) int { return int(a.step - b.step) })
	}
	slices.Sort(sc.problems)
	return sc
}

// indexer is index's state across the steps: the entries written so far
// (entry -> step) and the open pauses ((DLID, source) -> Pause step).
type indexer struct {
	g       *fabric.Graph
	old     *lft.Routing
	sc      *schedule
	written map[int64]int32
	open    map[[2]int32]int32
}

// bad records a problem; the first 20 are kept.
func (x *indexer) bad(format string, a ...any) {
	if len(x.sc.problems) < 20 {
		x.sc.problems = append(x.sc.problems, fmt.Sprintf(format, a...))
	}
}

// lftWrites indexes step k's LFT writes and applies them to the final
// tables.
func (x *indexer) lftWrites(k int32, s *Step) {
	g, sc := x.g, x.sc
	for _, wr := range s.LFT {
		if wr.Switch < 0 || int(wr.Switch) >= g.NumSwitches() || wr.LID < 0 || int(wr.LID) >= sc.final.Stride {
			x.bad("step %d: write to switch %d LID %d outside the tables", k, wr.Switch, wr.LID)
			continue
		}
		key := int64(wr.Switch)<<32 | int64(wr.LID)
		if prev, ok := x.written[key]; ok {
			x.bad("step %d: switch %q LID %d already written in step %d (one write per entry)", k, g.SwitchName(wr.Switch), wr.LID, prev)
			continue
		}
		x.written[key] = k
		if got := x.old.Port(wr.Switch, int(wr.LID)); got != wr.Old {
			x.bad("step %d: switch %q LID %d holds port %d, the plan expects %d", k, g.SwitchName(wr.Switch), wr.LID, got, wr.Old)
		}
		sc.writes[wr.LID] = append(sc.writes[wr.LID], wref{step: k, sw: wr.Switch, val: wr.New})
		sc.final.SetPort(wr.Switch, int(wr.LID), wr.New)
	}
}

// slChanges indexes step k's SL changes and applies them to the final
// tables.
func (x *indexer) slChanges(k int32, s *Step) {
	g, sc := x.g, x.sc
	for _, c := range s.SL {
		if c.DLID < 0 || c.DLID >= len(sc.final.SL.ByDest) || c.DLID > 0xFFFF || int(c.Src) >= g.NumSwitches() || c.Src < -1 ||
			c.SLID < 0 || c.SLID > 0xFFFF || c.New >= lft.NumSLs {
			x.bad("step %d: SL change to %d for LID %d from switch %d (LID %d) outside the tables", k, c.New, c.DLID, c.Src, c.SLID)
			continue
		}
		sc.sls[int32(c.DLID)] = append(sc.sls[int32(c.DLID)], stepSL{step: k, c: c})
		sc.slUsed[c.New&15] = true
		lft.ApplySL(&sc.final.SL, g.NumSwitches(), c)
	}
}

// sl2vlWrites records step k as the plan's one SL2VL step, marks the
// switches it touches and applies its tables to the final ones.
func (x *indexer) sl2vlWrites(k int32, s *Step) {
	g, sc := x.g, x.sc
	if sc.vlStep != 0 {
		x.bad("step %d: SL2VL tables written again (first in step %d)", k, sc.vlStep)
	}
	sc.vlStep = k
	sc.vlTouch = make([]bool, g.NumSwitches())
	for _, c := range s.SL2VL {
		if why := badSL2VL(g, c, s.NewDefault); why != "" {
			x.bad("step %d: SL2VL table of switch %d: %s", k, c.Switch, why)
			continue
		}
		if c.Switch < 0 {
			for i := range sc.vlTouch {
				sc.vlTouch[i] = true
			}
		} else if int(c.Switch) < g.NumSwitches() {
			sc.vlTouch[c.Switch] = true
		}
		lft.ApplySL2VL(&sc.final.SL2VL, g.NumSwitches(), c, s.NewDefault)
	}
}

// pausedPairs opens the pauses of a Pause step and closes them into
// windows at a Resume step.
func (x *indexer) pausedPairs(k int32, s *Step) {
	sc := x.sc
	for _, pa := range s.Paused {
		for _, u := range pa.Sources {
			key := [2]int32{pa.DLID, u}
			switch s.Kind {
			case Pause:
				if _, ok := x.open[key]; ok {
					x.bad("step %d: LID %d from switch %d paused twice", k, pa.DLID, u)
				}
				x.open[key] = k
			case Resume:
				pk, ok := x.open[key]
				if !ok {
					x.bad("step %d: LID %d from switch %d resumed without a pause", k, pa.DLID, u)
					continue
				}
				delete(x.open, key)
				if sc.pauses[pa.DLID] == nil {
					sc.pauses[pa.DLID] = map[int32][]window{}
				}
				sc.pauses[pa.DLID][u] = append(sc.pauses[pa.DLID][u], window{pk, k})
			}
		}
	}
}

// badSL2VL says why an SL2VL write cannot be applied to g ("" when it can).
func badSL2VL(g *fabric.Graph, c lft.SL2VLDelta, def [lft.NumSLs]uint8) string {
	if c.Switch < -1 || int(c.Switch) >= g.NumSwitches() {
		return "no such switch"
	}
	for _, vl := range def {
		if c.Switch < 0 && vl >= lft.MaxVLs {
			return fmt.Sprintf("default map names VL %d", vl)
		}
	}
	if t := c.Table; t != nil && c.Switch >= 0 {
		np := g.F.Nodes[g.Switches[c.Switch]].NumPorts()
		if t.NPorts != np || len(t.VL) != (np+1)*(np+1)*lft.NumSLs {
			return fmt.Sprintf("table for %d ports with %d entries, the switch has %d ports", t.NPorts, len(t.VL), np)
		}
		for _, vl := range t.VL {
			if vl >= lft.MaxVLs {
				return fmt.Sprintf("maps to VL %d", vl)
			}
		}
	}
	return ""
}

// maxVL returns the highest VL any used SL maps to on any port, before or
// after the SL2VL writes.
func (sc *schedule) maxVL(old *lft.Routing) int {
	m := 0
	for _, mp := range []*lft.SL2VL{&old.SL2VL, sc.after} {
		for sl, u := range sc.slUsed {
			if !u {
				continue
			}
			m = max(m, int(mp.Default[sl]))
			for _, t := range mp.Switch {
				if t == nil {
					continue
				}
				for i := sl; i < len(t.VL); i += lft.NumSLs {
					m = max(m, int(t.VL[i]))
				}
			}
		}
	}
	return m
}

// equivalent describes how a and b differ as forwarding, SL and SL2VL
// functions on g ("" when they agree).
func equivalent(g *fabric.Graph, a, b *lft.Routing) string {
	stride := max(a.Stride, b.Stride)
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for lid := 0; lid < stride; lid++ {
			if a.Port(s, lid) != b.Port(s, lid) {
				return fmt.Sprintf("LFT of %q, LID %d: port %d, the new tables have %d", g.SwitchName(s), lid, a.Port(s, lid), b.Port(s, lid))
			}
			if a.SL.Of(s, 0, lid) != b.SL.Of(s, 0, lid) {
				return fmt.Sprintf("SL from %q to LID %d: %d, the new tables have %d", g.SwitchName(s), lid, a.SL.Of(s, 0, lid), b.SL.Of(s, 0, lid))
			}
		}
		np := g.F.Nodes[g.Switches[s]].NumPorts()
		for in := 0; in <= np; in++ {
			for o := 0; o <= np; o++ {
				for sl := uint8(0); sl < lft.NumSLs; sl++ {
					if a.SL2VL.VL(s, uint8(in), uint8(o), sl) != b.SL2VL.VL(s, uint8(in), uint8(o), sl) {
						return fmt.Sprintf("SL2VL of %q differs", g.SwitchName(s))
					}
				}
			}
		}
	}
	for _, m := range []map[uint32]uint8{a.SL.Pair, b.SL.Pair} {
		for k := range m {
			slid, dl := int(k>>16), int(k&0xFFFF)
			sw, _ := g.Owner(slid)
			if a.SL.Of(sw, slid, dl) != b.SL.Of(sw, slid, dl) {
				return fmt.Sprintf("SL of the pair LID %d -> LID %d differs", slid, dl)
			}
		}
	}
	if a.SL2VL.Default != b.SL2VL.Default {
		return "default SL2VL map differs"
	}
	return ""
}
