package plan

import (
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// The transition model. Time is counted in steps: "time k" is the span
// of step k, during which each entry written in step k may still hold its
// value of before the step or already the new one, and each may turn new
// at any moment but never back. A packet decides its next hop when it
// reaches a switch, from the entry it finds there at that moment; it keeps
// the SL its source gave it. A packet's hops therefore happen at
// non-decreasing times, which is what the walker (walk.go) enumerates.

// world is what planning and verification share: the fabric, the old
// routing (every entry's value before any write) and the SL2VL schedule.
// It is read-only once built.
type world struct {
	g    *fabric.Graph
	old  *lft.Routing
	es   *edgeSpace
	comp []int32 // switch -> connected component (lowest switch id in it)
	nsrc []int32 // switch -> terminals attached

	// SL2VL schedule: before is the old mapping, after the mapping once
	// the plan's SL2VL writes (all in step vlStep; 0 = none) are done;
	// vlTouched marks the switches whose mapping may change then.
	before, after *lft.SL2VL
	vlStep        int32
	vlTouched     []bool
	perPort       bool // some switch has its own SL2VL table before or after
}

func newWorld(g *fabric.Graph, old *lft.Routing, V int, cross bool) *world {
	w := &world{g: g, old: old, before: &old.SL2VL, after: &old.SL2VL}
	w.es = newEdgeSpace(g, V, cross)
	S := g.NumSwitches()
	w.comp = g.SwitchComponents()
	w.nsrc = make([]int32, S)
	for s := 0; s < S; s++ {
		w.nsrc[s] = g.TermOff[s+1] - g.TermOff[s]
	}
	w.perPort = !old.SL2VL.Uniform()
	return w
}

// setSL2VL schedules the SL2VL writes of a plan: mapping after, written in
// step step on the switches touched (all of them when touched is nil).
func (w *world) setSL2VL(after *lft.SL2VL, step int32, touched []bool) {
	w.after, w.vlStep = after, step
	w.vlTouched = touched
	if touched == nil {
		w.vlTouched = make([]bool, w.g.NumSwitches())
		for i := range w.vlTouched {
			w.vlTouched[i] = true
		}
	}
	w.perPort = w.perPort || !after.Uniform()
}

// vls returns the VLs a packet with SL sl may use leaving switch x on
// port out after entering on port in, at time t.
func (w *world) vls(x int32, in, out, sl uint8, t int32, buf *[2]uint8) []uint8 {
	if w.vlStep == 0 || !w.vlTouched[x] || t < w.vlStep {
		buf[0] = w.before.VL(x, in, out, sl)
		return buf[:1]
	}
	if t > w.vlStep {
		buf[0] = w.after.VL(x, in, out, sl)
		return buf[:1]
	}
	buf[0], buf[1] = w.before.VL(x, in, out, sl), w.after.VL(x, in, out, sl)
	if buf[0] == buf[1] {
		return buf[:1]
	}
	return buf[:2]
}

// portPerSource reports whether switch x maps VLs by input port at some
// time, so that sources on it must be told apart by port.
func (w *world) portPerSource(x int32) bool {
	return (w.before.Switch != nil && w.before.Switch[x] != nil) || (w.after.Switch != nil && w.after.Switch[x] != nil)
}

// destTL is one destination's timeline: per switch the entry before its
// write, the step of the write (0 = never written) and the value written;
// and the sources with their SL timelines.
type destTL struct {
	d     int
	dsw   int32 // destination switch
	dport uint8 // its port towards the destination (0 for a switch LID)
	term  int32 // destination terminal, -1 for a switch LID
	val0  []uint8
	wstep []int32
	wval  []uint8
	seeds []seed
}

func newDestTL(S int) *destTL {
	return &destTL{val0: make([]uint8, S), wstep: make([]int32, S), wval: make([]uint8, S)}
}

// reset loads destination LID d with every entry at its old value and no
// writes. It returns false when nobody answers d or its switch is unknown.
func (t *destTL) reset(w *world, d int) bool {
	t.d = d
	t.dsw, t.dport, t.term = lft.Target(w.g, d)
	for x := range t.val0 {
		t.val0[x] = w.old.Port(int32(x), d)
		t.wstep[x] = 0
	}
	t.seeds = t.seeds[:0]
	return t.dsw >= 0
}

// ports returns the values switch x's entry may hold at time k.
func (t *destTL) ports(x int32, k int32, buf *[2]uint8) []uint8 {
	ws := t.wstep[x]
	switch {
	case ws == 0 || k < ws:
		buf[0] = t.val0[x]
		return buf[:1]
	case k > ws:
		buf[0] = t.wval[x]
		return buf[:1]
	}
	buf[0], buf[1] = t.val0[x], t.wval[x]
	if buf[0] == buf[1] {
		return buf[:1]
	}
	return buf[:2]
}

// seed is a class of sources of one destination that behave alike: the
// terminals of switch u (or one terminal port when SLs or VLs depend on
// it), or switch u itself.
type seed struct {
	u      int32
	in     uint8 // input port for SL2VL (the terminal's switch port), 0 when it does not matter
	slid   int   // the source LID when the seed is one terminal LID, else 0
	pairs  int64 // pairs it stands for (0 for a switch seed)
	self   bool  // the switch's own traffic: delivery only, no dependencies
	sl0    uint8 // SL before any SL change
	ev     []slEvent
	lost   bool // the old tables do not deliver it on this fabric
	dark   bool // the plan stops delivering it on purpose (Plan.Blackout)
	paused []window
}

// slEvent: from step on, the source may use SL sl.
type slEvent struct {
	step int32
	sl   uint8
}

// window is a closed span of steps.
type window struct{ lo, hi int32 }

// stepSL is an SL change of a plan with its step.
type stepSL struct {
	step int32
	c    lft.SLChange
}

// addSeeds appends the sources of t's destination: per switch with
// terminals one seed, or one per terminal LID when perTerm or the switch
// maps VLs by input port; with self, each switch's own seed too. SL
// timelines follow chg (the destination's SL changes in step order).
func (t *destTL) addSeeds(w *world, perTerm, self bool, chg []stepSL) {
	g := w.g
	for u := int32(0); int(u) < g.NumSwitches(); u++ {
		if w.comp[u] != w.comp[t.dsw] {
			continue
		}
		n := int64(w.nsrc[u])
		if t.term >= 0 && g.Terms[t.term].Switch == u {
			n--
		}
		if n > 0 && !perTerm && !w.portPerSource(u) {
			s := seed{u: u, pairs: n}
			s.sl0, s.ev = seedSL(&w.old.SL, u, 0, t.d, chg)
			t.seeds = append(t.seeds, s)
		} else if n > 0 {
			for _, ti := range g.TermsOf(u) {
				if ti == t.term {
					continue
				}
				tm := &g.Terms[ti]
				for l := 0; l < 1<<tm.LMC; l++ {
					s := seed{u: u, in: tm.SwitchPort, slid: int(tm.LID) + l, pairs: 1}
					s.sl0, s.ev = seedSL(&w.old.SL, u, s.slid, t.d, chg)
					t.seeds = append(t.seeds, s)
				}
			}
		}
		if self && !(t.term < 0 && u == t.dsw) {
			s := seed{u: u, self: true, slid: int(g.SwitchLID(u))}
			s.sl0, s.ev = seedSL(&w.old.SL, u, s.slid, t.d, chg)
			t.seeds = append(t.seeds, s)
		}
	}
}

// seedSL replays SL changes (as lft.ApplySL would make them, in order) for
// the source (switch u, LID slid) of destination d: the SL before them and
// the SL after each change that alters it.
func seedSL(old *lft.SLTable, u int32, slid, d int, chg []stepSL) (uint8, []slEvent) {
	var (
		pairV, rowV uint8
		hasPair     bool
		override    = old.BySrc != nil
		byDest      = slAt(old.ByDest, d)
	)
	if slid != 0 && old.Pair != nil {
		pairV, hasPair = old.Pair[uint32(slid)<<16|uint32(d)]
	}
	if override {
		rowV = old.SrcRow(u)[d]
	}
	value := func() uint8 {
		switch {
		case hasPair:
			return pairV
		case override:
			return rowV
		}
		return byDest
	}
	sl0 := value()
	last := sl0
	var ev []slEvent
	for _, sc := range chg {
		c := sc.c
		switch {
		case c.SLID != 0:
			if c.SLID == slid {
				hasPair, pairV = true, c.New
			}
		case c.Src < 0:
			byDest, rowV = c.New, c.New
		case c.Src == u:
			override, rowV = true, c.New
		}
		if v := value(); v != last {
			ev = append(ev, slEvent{step: sc.step, sl: v})
			last = v
		}
	}
	return sl0, ev
}

func slAt(t []uint8, i int) uint8 {
	if i >= 0 && i < len(t) {
		return t[i]
	}
	return 0
}

// slOptions returns the SLs seed s may inject with during window [lo, hi]
// and the earliest time of each.
func (s *seed) slOptions(lo, hi int32, out []slEvent) []slEvent {
	cur := s.sl0
	for _, e := range s.ev {
		if e.step < lo {
			cur = e.sl
		}
	}
	out = append(out[:0], slEvent{step: lo, sl: cur})
	for _, e := range s.ev {
		if e.step >= lo && e.step <= hi {
			out = append(out, e)
		}
	}
	return out
}

// active reports whether the seed may have packets in flight at time k
// (it is not inside a pause: between its Pause and Resume steps).
func (s *seed) active(k int32) bool {
	for _, p := range s.paused {
		if k > p.lo && k < p.hi {
			return false
		}
	}
	return true
}

// windows splits epoch [lo, hi] into the spans in which the seed's
// packets live: a Pause at p ends a span at p (its packets drain during
// the pause step), a Resume at r starts one at r.
func (s *seed) windows(lo, hi int32, out []window) []window {
	out = out[:0]
	start := lo
	for _, p := range s.paused {
		if p.hi <= lo || p.lo >= hi { // resumed by the start, or paused at the end
			continue
		}
		if p.lo >= start {
			out = append(out, window{start, p.lo})
		}
		start = p.hi
	}
	if start <= hi {
		out = append(out, window{start, hi})
	}
	return out
}
