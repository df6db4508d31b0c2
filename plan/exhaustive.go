package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// unit is one write that lands atomically: an LFT block of one switch, the
// SL changes of one destination, or one SL2VL table.
type unit struct {
	kind uint8 // unitBlock, unitSL, unitSL2VL
	sw   int32
	blk  int32
	dlid int32
}

const (
	unitBlock uint8 = iota
	unitSL
	unitSL2VL
)

// units lists a step's write units in a fixed order.
func units(s *Step) []unit {
	var out []unit
	seen := map[unit]bool{}
	for _, w := range s.LFT {
		u := unit{kind: unitBlock, sw: w.Switch, blk: int32(lft.Block(int(w.LID)))}
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, c := range s.SL {
		u := unit{kind: unitSL, dlid: int32(c.DLID)}
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, c := range s.SL2VL {
		out = append(out, unit{kind: unitSL2VL, sw: c.Switch})
	}
	return out
}

// exhaustive checks the steps with few write units state by state: for
// every subset of the units, the static routing that results (the units
// of earlier steps applied, of later steps not) must deliver every active
// pair without loops and have an acyclic dependency graph. Steps that
// write SL2VL tables are left to the union argument.
func (v *verifier) exhaustive(ctx context.Context) error {
	if v.opt.MaxExhaustive < 0 {
		return nil
	}
	for i := range v.p.Steps {
		s := &v.p.Steps[i]
		us := units(s)
		if s.Kind != Write || len(us) == 0 || len(us) > v.opt.MaxExhaustive || len(s.SL2VL) > 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := v.exhaustStep(ctx, int32(i+1), us); err != nil {
			return err
		}
	}
	return nil
}

// untouched walks the destinations step k does not touch: their
// dependencies (base) and their loops and drops (fixed, per destination of
// destLIDs: why it loops or drops) are the same in every state of the step.
func (v *verifier) untouched(ctx context.Context, k int32, touched map[int32]bool) (base []uint64, fixed []string, err error) {
	w := v.w
	base = make([]uint64, (w.es.size()+63)/64)
	ds := destLIDs(w.g)
	fixed = make([]string, len(ds))
	wks := make([]*walker, v.opt.Workers)
	tls := make([]*destTL, v.opt.Workers)
	if err := parallel.For(ctx, len(ds), v.opt.Workers, func(wi, i int) error {
		if touched[int32(ds[i])] {
			return nil
		}
		if wks[wi] == nil {
			wks[wi], tls[wi] = newWalker(w), newDestTL(w.g.NumSwitches())
		}
		wk, t := wks[wi], tls[wi]
		if !v.load(t, ds[i]) {
			return nil
		}
		v.markLost(wk, t)
		if loops, dropped, ex := wk.static(t, nil, k); loops+dropped > 0 {
			fixed[i] = describe(w.g, ex, t.d)
		}
		wk.emit = func(e int64) { atomicSet(base, e) }
		wk.walk(t, activeAt(t, k), k, k)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return base, fixed, nil
}

// touchedBy returns the destination LIDs whose SL or LFT entries step k
// (units us) writes.
func (v *verifier) touchedBy(k int32, us []unit) map[int32]bool {
	touched := map[int32]bool{}
	for _, u := range us {
		if u.kind == unitSL {
			touched[u.dlid] = true
		}
	}
	for lid, ws := range v.sc.writes {
		for _, wr := range ws {
			if wr.step == k {
				touched[lid] = true
			}
		}
	}
	return touched
}

func (v *verifier) exhaustStep(ctx context.Context, k int32, us []unit) error {
	w := v.w
	touched := v.touchedBy(k, us)
	base, fixed, err := v.untouched(ctx, k, touched)
	if err != nil {
		return err
	}
	var bfrom, bto []int32
	w.es.forEachEdge(base, func(_ int64, a, b int32) {
		bfrom, bto = append(bfrom, a), append(bto, b)
	})
	// Touched destinations, loaded once.
	var tl []*destTL
	for lid := range touched {
		t := newDestTL(w.g.NumSwitches())
		if v.load(t, int(lid)) {
			tl = append(tl, t)
		}
	}
	slices.SortFunc(tl, func(a, b *destTL) int { return a.d - b.d })
	wk := newWalker(w)
	for _, t := range tl {
		v.markLost(wk, t)
	}
	st := newDestTL(w.g.NumSwitches())
	sr := &v.rep.Steps[k-1]
	for _, why := range fixed {
		if why == "" {
			continue
		}
		// Every state fails: a destination the step does not touch
		// already loops or drops (an earlier step left it so).
		sr.StateFailures, sr.States = 1<<len(us), 1<<len(us)
		if sr.Example == "" {
			sr.Example = why
		}
		return nil
	}
	var edges []int64
	for mask := 0; mask < 1<<len(us); mask++ {
		if mask%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		edges = edges[:0]
		for _, t := range tl {
			staticState(st, t, k, us, mask)
			loops, dropped, ex := wk.static(st, nil, k)
			if loops+dropped > 0 {
				sr.StateFailures++
				if sr.Example == "" {
					sr.Example = describe(w.g, ex, t.d) + " " + applied(w, us, mask)
				}
			}
			wk.emit = func(e int64) { edges = append(edges, e) }
			wk.walk(st, activeAt(st, k), k, k)
		}
		slices.Sort(edges)
		edges = slices.Compact(edges)
		from, to := slices.Clone(bfrom), slices.Clone(bto)
		for _, e := range edges {
			if base[e>>6]&(1<<(e&63)) != 0 {
				continue
			}
			a, b := endpoints(w.es, e)
			from, to = append(from, a), append(to, b)
		}
		if cyc := w.es.cycleOf(from, to); cyc != nil && sr.StateCycle == nil {
			sr.StateCycle = w.es.cycleError(cyc)
			if sr.Example == "" {
				sr.Example = "dependency cycle " + applied(w, us, mask)
			}
		}
	}
	sr.States = 1 << len(us)
	return nil
}

// staticState copies t into st as the static state of step k in which
// exactly the units in mask have landed.
func staticState(st, t *destTL, k int32, us []unit, mask int) {
	st.d, st.dsw, st.dport, st.term = t.d, t.dsw, t.dport, t.term
	blk := int32(lft.Block(t.d))
	on := func(kind uint8, sw int32) bool {
		for i, u := range us {
			if mask&(1<<i) != 0 && u.kind == kind && (kind == unitSL && u.dlid == int32(t.d) || kind == unitBlock && u.sw == sw && u.blk == blk) {
				return true
			}
		}
		return false
	}
	for x := range t.val0 {
		ws := t.wstep[x]
		st.val0[x], st.wstep[x] = t.val0[x], 0
		if ws > 0 && (ws < k || ws == k && on(unitBlock, int32(x))) {
			st.val0[x] = t.wval[x]
		}
	}
	slOn := on(unitSL, 0)
	st.seeds = append(st.seeds[:0], t.seeds...)
	for i := range st.seeds {
		s := &st.seeds[i]
		for _, e := range s.ev {
			if e.step < k || e.step == k && slOn {
				s.sl0 = e.sl
			}
		}
		s.ev = nil
	}
}

// activeAt lists the seeds that may have packets in flight at step k.
func activeAt(t *destTL, k int32) []int32 {
	idx := []int32{}
	for i := range t.seeds {
		if t.seeds[i].active(k) && !t.seeds[i].self {
			idx = append(idx, int32(i))
		}
	}
	return idx
}

func atomicSet(bits []uint64, e int64) {
	word, mask := &bits[e>>6], uint64(1)<<(e&63)
	if atomic.LoadUint64(word)&mask == 0 {
		atomic.OrUint64(word, mask)
	}
}

// endpoints decodes an edge id into its vertices.
func endpoints(es *edgeSpace, e int64) (int32, int32) {
	d := dag{es: es}
	return d.endpoints(e)
}

// applied names the units of a state for examples.
func applied(w *world, us []unit, mask int) string {
	var on []string
	for i, u := range us {
		if mask&(1<<i) == 0 {
			continue
		}
		switch u.kind {
		case unitBlock:
			on = append(on, fmt.Sprintf("%s block %d", w.g.SwitchName(u.sw), u.blk))
		case unitSL:
			on = append(on, fmt.Sprintf("SLs of LID %d", u.dlid))
		}
	}
	if len(on) == 0 {
		return "(no write landed yet)"
	}
	return "(landed: " + strings.Join(on, ", ") + ")"
}
