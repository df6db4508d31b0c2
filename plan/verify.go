package plan

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// Verify proves plan p safe for moving g from old to new, independently of
// how p was made (Build, OneShot, a file). For every step it checks every
// state the step's writes can produce in any order, and for every epoch
// (the steps between two barriers) the dependencies of every packet that
// can be in flight, on old, new and mixed paths:
//
//   - shape: writes only in Write steps, each LFT entry written at most
//     once and from its old value, SL2VL tables in at most one step,
//     pauses resumed, and the last step leaves exactly the new tables;
//   - loop freedom and delivery, per step: no state of any subset of the
//     step's writes lets an active pair loop or be dropped (pairs the old
//     tables already lose may be dropped until the plan repairs them);
//     exhaustively over the 2^n subsets of the write units (LFT blocks,
//     per-destination SL changes) when n <= MaxExhaustive, and always by
//     the union argument, exact for loops and drops (see walker.static);
//   - deadlock freedom, per epoch: the dependencies of every time-monotone
//     walk (see walker) of every active pair form an acyclic graph over
//     (channel, VL), checked with cdg.FindCycle;
//   - VLs within opt.MaxVLs in every state;
//   - in-order delivery: every pair whose path, SL or VLs change is paused
//     across every step that changes them (counted, not required, when p
//     was built with AllowReorder).
//
// The error is Report.Err (wrapping ErrUnsafePlan or ErrPlanShape), or an
// input error.
func Verify(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, p *Plan, opt Options) (*Report, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	if g == nil || old == nil || p == nil {
		return nil, fmt.Errorf("plan: verify needs a fabric, the old tables and a plan")
	}
	if err := old.CheckShape(g); err != nil {
		return nil, fmt.Errorf("plan: old tables: %w", err)
	}
	if new != nil {
		if err := new.CheckShape(g); err != nil {
			return nil, fmt.Errorf("plan: new tables: %w", err)
		}
	}
	sc := index(g, old, p)
	rep := newReport(p, sc, opt)
	if new != nil {
		if why := equivalent(g, sc.final, new); why != "" {
			sc.problems = append(sc.problems, "the plan does not end at the new tables: "+why)
		}
	}
	V := max(sc.maxVL(old)+1, 1)
	rep.VLsClaimed = V
	cross := !old.SL2VL.Uniform() || sc.vlStep != 0
	w := newWorld(g, old, V, cross)
	if sc.vlStep != 0 {
		w.setSL2VL(sc.after, sc.vlStep, sc.vlTouch)
	}
	v := &verifier{w: w, sc: sc, rep: rep, opt: opt, p: p}
	v.allocWindows()
	ds := destLIDs(g)
	parts := make([]*vpart, opt.Workers)
	if err := parallel.For(ctx, len(ds), opt.Workers, func(wi, i int) error {
		if parts[wi] == nil {
			parts[wi] = v.newPart()
		}
		parts[wi].dest(ds[i])
		return nil
	}); err != nil {
		return nil, err
	}
	for _, pt := range parts {
		if pt != nil {
			rep.merge(pt)
		}
	}
	for e := range sc.epochs {
		v.epochCycle(e)
	}
	if err := v.exhaustive(ctx); err != nil {
		return nil, err
	}
	rep.Shape = sc.problems
	rep.finish()
	return rep, rep.Err()
}

// verifier carries one Verify.
type verifier struct {
	w   *world
	sc  *schedule
	rep *Report
	opt Options
	p   *Plan
	// bits holds per epoch and per window of packet lifetimes the
	// dependencies of the walks living in that window.
	bits []map[window][]uint64
}

// allocWindows creates a dependency bitset for every window a seed's
// packets can live in: each epoch, split at the pauses of each pattern of
// paused steps the plan has.
func (v *verifier) allocWindows() {
	sc := v.sc
	patterns := [][]window{nil}
	seen := map[string]bool{"": true}
	for _, bySrc := range sc.pauses {
		for _, ws := range bySrc {
			key := fmt.Sprint(ws)
			if !seen[key] {
				seen[key] = true
				patterns = append(patterns, ws)
			}
		}
	}
	v.bits = make([]map[window][]uint64, len(sc.epochs))
	var buf []window
	for e, ep := range sc.epochs {
		v.bits[e] = map[window][]uint64{}
		for _, pat := range patterns {
			s := seed{paused: pat}
			buf = s.windows(ep.lo, ep.hi, buf)
			for _, w := range buf {
				if v.bits[e][w] == nil {
					v.bits[e][w] = make([]uint64, (v.w.es.size()+63)/64)
				}
			}
		}
	}
}

// epochCycle checks epoch e: at every time k of it, the dependencies of
// the windows alive at k (packets of other windows are gone or not yet
// injected) must be acyclic.
func (v *verifier) epochCycle(e int) {
	ep := v.sc.epochs[e]
	er := &v.rep.Epochs[e]
	wins := make([]window, 0, len(v.bits[e]))
	for w := range v.bits[e] {
		wins = append(wins, w)
	}
	slices.SortFunc(wins, func(a, b window) int {
		if a.lo != b.lo {
			return int(a.lo - b.lo)
		}
		return int(a.hi - b.hi)
	})
	all := make([]uint64, (v.w.es.size()+63)/64)
	for _, w := range wins {
		orInto(all, v.bits[e][w])
	}
	_, er.Dependencies = v.w.es.cycle(all)
	done := map[string]bool{}
	for k := ep.lo; k <= ep.hi && er.Cycle == nil; k++ {
		var alive []window
		for _, w := range wins {
			if w.lo <= k && k <= w.hi {
				alive = append(alive, w)
			}
		}
		key := fmt.Sprint(alive)
		if done[key] {
			continue
		}
		done[key] = true
		u := make([]uint64, len(all))
		for _, w := range alive {
			orInto(u, v.bits[e][w])
		}
		if cyc, _ := v.w.es.cycle(u); cyc != nil {
			er.Cycle = v.w.es.cycleError(cyc)
			er.At = int(k)
		}
	}
}

func orInto(dst, src []uint64) {
	for i, x := range src {
		dst[i] |= x
	}
}

// vpart is one worker's scratch and tallies.
type vpart struct {
	v                             *verifier
	wk                            *walker
	t                             *destTL
	steps                         []stepTally
	epoch                         []epochTally
	pairs, lost, changed, reorder int64
	dark                          int64
	oldLoops                      int64
	vlMax                         uint8
	wins                          []window
	groups                        map[groupKey][]int32
}

// groupKey classes a destination's seeds for one walker run: same window,
// same leniency (lost by the old tables), switch traffic apart.
type groupKey struct {
	win     window
	lenient bool
	self    bool
}

type stepTally struct {
	loops, dropped int64
	ex             failure
	exDLID         int
}

type epochTally struct {
	drops  int64
	ex     failure
	exDLID int
}

func (v *verifier) newPart() *vpart {
	return &vpart{v: v, wk: newWalker(v.w), t: newDestTL(v.w.g.NumSwitches()),
		steps: make([]stepTally, v.sc.K+1), epoch: make([]epochTally, len(v.sc.epochs)), groups: map[groupKey][]int32{}}
}

// load builds destination d's timeline from the schedule.
func (v *verifier) load(t *destTL, d int) bool {
	if !t.reset(v.w, d) {
		return false
	}
	for _, wr := range v.sc.writes[int32(d)] {
		t.wstep[wr.sw], t.wval[wr.sw] = wr.step, wr.val
	}
	chg := v.sc.sls[int32(d)]
	perTerm := false
	for _, c := range chg {
		perTerm = perTerm || c.c.SLID != 0
	}
	for _, m := range []map[uint32]uint8{v.w.old.SL.Pair, v.sc.final.SL.Pair} {
		for k := range m {
			perTerm = perTerm || int(k&0xFFFF) == d
		}
	}
	t.addSeeds(v.w, perTerm, v.opt.SwitchDelivery, chg)
	pz := v.sc.pauses[int32(d)]
	for i := range t.seeds {
		s := &t.seeds[i]
		if !s.self && pz != nil {
			s.paused = pz[s.u]
		}
	}
	return true
}

// markLost marks the seeds the old tables do not deliver (time 0: nothing
// written yet) and returns the pairs they loop.
func (v *verifier) markLost(wk *walker, t *destTL) int64 {
	var loops int64
	wk.begin(t)
	for i := range t.seeds {
		s := &t.seeds[i]
		f := wk.reach(s.u, 0)
		s.lost = f&reachBad != 0
		s.dark = v.sc.dark[int32(t.d)] && !s.lost
		if f&reachLoop != 0 {
			loops += max(s.pairs, 1)
		}
	}
	return loops
}

func (pt *vpart) dest(d int) {
	v, t, wk := pt.v, pt.t, pt.wk
	if !v.load(t, d) {
		return
	}
	pt.oldLoops += v.markLost(wk, t)
	for i := range t.seeds {
		if s := &t.seeds[i]; !s.self {
			pt.pairs += s.pairs
			if s.lost {
				pt.lost += s.pairs
			}
			if s.dark {
				pt.dark += s.pairs
			}
		}
	}
	// Static states of every step, also those that do not touch d (its
	// state then is the one an earlier step left), so that a step's
	// tallies are exactly the pairs that can loop or drop during it.
	for k := int32(1); k <= v.sc.K; k++ {
		loops, dropped, ex := wk.static(t, nil, k)
		st := &pt.steps[k]
		st.loops += loops
		st.dropped += dropped
		if ex.valid && (!st.ex.valid || d < st.exDLID) {
			st.ex, st.exDLID = ex, d
		}
	}
	// In-flight dependencies, epoch by epoch, per class of sources.
	bits := v.bits
	for e, win := range v.sc.epochs {
		clear(pt.groups)
		for i := range t.seeds {
			s := &t.seeds[i]
			pt.wins = s.windows(win.lo, win.hi, pt.wins)
			for _, sw := range pt.wins {
				key := groupKey{win: sw, lenient: s.lost || s.dark, self: s.self}
				pt.groups[key] = append(pt.groups[key], int32(i))
			}
		}
		for key, idx := range pt.groups {
			wk.strict = !key.lenient
			wk.emit = nil
			if !key.self {
				b := bits[e][key.win]
				wk.emit = func(id int64) {
					word, mask := &b[id>>6], uint64(1)<<(id&63)
					if atomic.LoadUint64(word)&mask == 0 {
						atomic.OrUint64(word, mask)
					}
				}
			}
			wk.nFail, wk.first = 0, failure{}
			wk.walk(t, idx, key.win.lo, key.win.hi)
			et := &pt.epoch[e]
			et.drops += wk.nFail
			if wk.first.valid && (!et.ex.valid || d < et.exDLID) {
				et.ex, et.exDLID = wk.first, d
			}
		}
	}
	pt.vlMax = max(pt.vlMax, wk.vlMax)
	pt.inOrder(t)
}

// inOrder counts the pairs whose path, SL or VLs change and those among
// them not paused across a step that changes them.
func (pt *vpart) inOrder(t *destTL) {
	w, g := pt.v.w, pt.v.w.g
	for i := range t.seeds {
		s := &t.seeds[i]
		if s.self {
			continue
		}
		changed, exposed := false, false
		mark := func(k int32) {
			changed = true
			if s.active(k) {
				exposed = true
			}
		}
		for _, e := range s.ev {
			mark(e.step)
		}
		x, in := s.u, s.in
		for hops := 0; hops <= g.NumSwitches(); hops++ {
			p := t.val0[x]
			if t.wstep[x] > 0 && t.wval[x] != p {
				mark(t.wstep[x])
			}
			if w.vlStep > 0 && w.vlTouched[x] && w.before.VL(x, in, p, s.sl0) != w.after.VL(x, in, p, s.sl0) {
				mark(w.vlStep)
			}
			if x == t.dsw {
				break
			}
			c, _ := lft.Hop(g, x, p)
			if c < 0 {
				break
			}
			x, in = g.Head[c], g.InPort[c]
		}
		if changed {
			pt.changed += s.pairs
		}
		if exposed {
			pt.reorder += s.pairs
		}
	}
}

// sourceName names the source of a failure for reports.
func sourceName(g *fabric.Graph, f failure) string {
	if f.seed < 0 {
		return "a packet in flight"
	}
	if f.slid != 0 {
		if _, term := g.Owner(f.slid); term >= 0 {
			tm := g.Terms[term]
			return fmt.Sprintf("%s port %d (LID %d)", g.F.Name(tm.Node), tm.Port, f.slid)
		}
	}
	return fmt.Sprintf("terminals of %q", g.SwitchName(f.seed))
}
