package cdg

import (
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// State is what an incremental verification (State.Verify) keeps of a
// routing that passed: its fabric and tables, for every dependency the
// number of destinations whose paths have it, and for every destination
// LID the VLs its paths use. A State is read-only once made, so one may
// be verified against from several goroutines.
type State struct {
	v     *verifier // of the routing, its dependency bits set
	cnt   []uint32  // per dependency bit: destinations setting it
	dmask []uint32  // per LID: the VLs of its paths
	// walked is the number of destinations walked to make the State.
	walked int
}

// Walked returns how many destinations were walked to verify the
// State's routing: every destination after a full verification, those
// whose paths changed (or left the fabric) after an incremental one.
func (st *State) Walked() int { return st.walked }

// incrementalUpdates counts the verifications State.Verify does
// incrementally (for tests: which way it went).
var incrementalUpdates atomic.Int64

// VerifyState is Verify that also returns the State an incremental
// verification starts from. The State is nil when the routing fails, when
// SL2VL tables differ by port, or when a destination's paths do not form
// a tree (the pair-by-pair walk, which keeps no counts, checked it).
func VerifyState(g *fabric.Graph, r *lft.Routing, opt Options) (*Report, *State, error) {
	v, err := prepare(g, r, opt)
	if err != nil {
		return nil, nil, err
	}
	return v.verifyState()
}

// verifyState runs v in full, counting per dependency the destinations
// that set it.
func (v *verifier) verifyState() (*Report, *State, error) {
	if !v.cross {
		v.cnt = make([]uint32, int64(len(v.edges))*64)
		v.dmask = make([]uint32, v.g.MaxLID()+1)
	}
	v.run()
	rep := v.report()
	if v.cnt == nil || !rep.OK() || v.noState.Load() {
		return rep, nil, rep.Err()
	}
	st := &State{v: v, cnt: v.cnt, dmask: v.dmask, walked: v.dests}
	v.cnt, v.dmask = nil, nil
	return rep, st, nil
}

// Verify checks r on g as cdg.Verify does, with the same report, and
// returns the State of r when it passes. When g is the fabric of st with
// cables or switches without CA or router ports removed (matched by node
// GUID and port number) and r differs from st's routing in some
// destinations' columns, only those destinations are walked, in the old
// routing and in r, and the dependency counts are updated; every other
// destination's paths are the same switches and ports as before, so they
// are delivered and keep their dependencies. The acyclicity check runs on
// the whole result. Otherwise (st nil, other options, SL2VL, SLs per pair,
// a cable or port added, a CA moved) r is verified in full.
func (st *State) Verify(g *fabric.Graph, r *lft.Routing, opt Options) (*Report, *State, error) {
	v, err := prepare(g, r, opt)
	if err != nil {
		return nil, nil, err
	}
	if st == nil || !st.applies(v) {
		return v.verifyState()
	}
	m := mapFabrics(st.v.g, g, v.opt.SwitchSources)
	if m == nil {
		return v.verifyState()
	}
	dirty, gone := m.dirty(st.v.r, r)
	rep, next, ok := st.update(v, m, dirty, gone)
	if !ok {
		return v.verifyState()
	}
	return rep, next, rep.Err()
}

// applies reports whether v's routing can be verified against st: the
// same options (but the workers), SL2VL and VL space, SLs not per pair.
func (st *State) applies(v *verifier) bool {
	o, n := st.v.opt, v.opt
	o.Workers, n.Workers = 0, 0
	r0, r1 := st.v.r, v.r
	return o == n && !v.cross && !st.v.cross && v.V == st.v.V &&
		len(r0.SL.Pair) == 0 && len(r1.SL.Pair) == 0 &&
		r0.SL2VL.Default == r1.SL2VL.Default && (r0.SL.BySrc == nil) == (r1.SL.BySrc == nil)
}

// update walks the dirty destinations (g1 LIDs) and the gone ones (g0
// LIDs no longer on the fabric) in st's routing, subtracting their
// dependencies, and the dirty ones in v's routing, adding theirs, counts
// every other destination as delivered, and reports. ok is false when a
// destination of st's routing unexpectedly needs the pair walk.
func (st *State) update(v *verifier, m *fabricMap, dirty, gone []int) (rep *Report, next *State, ok bool) {
	cnt := m.translate(st, v)
	w0 := newCollector(st.v)
	for _, list := range [][]int{dirty, gone} {
		for _, d := range list {
			bits, _ := w0.collect(d)
			for _, b := range bits {
				if b1 := m.bit(st.v, v, b); b1 >= 0 {
					cnt[b1]--
				}
			}
		}
	}
	if w0.paired {
		return nil, nil, false
	}
	incrementalUpdates.Add(1)
	w := newCollector(v)
	dmask := make([]uint32, v.g.MaxLID()+1)
	isDirty := make([]bool, len(dmask))
	for _, d := range dirty {
		isDirty[d] = true
		bits, mask := w.collect(d)
		for _, b := range bits {
			cnt[b]++
		}
		dmask[d] = mask
	}
	for d := 1; d < len(dmask); d++ {
		if isDirty[d] {
			continue
		}
		dsw, _, term := lft.Target(v.g, d)
		if dsw < 0 {
			continue // not a destination: g's LIDs are st's (mapFabrics)
		}
		n, _ := v.ownSources(dsw, term)
		w.delivered(dsw, n)
		dmask[d] = st.dmask[d]
		w.vlMask |= dmask[d]
	}
	for b, c := range cnt {
		if c != 0 {
			v.edges[b>>6] |= 1 << (b & 63)
		}
	}
	w.own = nil
	w.flush()
	rep = v.report()
	if rep.OK() && !w.paired {
		next = &State{v: v, cnt: cnt, dmask: dmask, walked: len(dirty) + len(gone)}
	}
	return rep, next, true
}

// newCollector returns a walker that collects one destination's
// dependency bits at a time (collect).
func newCollector(v *verifier) *walker {
	w := newWalker(v)
	w.own = make([]uint64, len(v.edges))
	w.cb = make([]int32, v.g.NumSwitches())
	return w
}

// collect checks destination LID d and returns its dependency bits and
// the VLs of its paths. The bits are valid until the next call.
func (w *walker) collect(d int) ([]int64, uint32) {
	v := w.v
	for x := int32(0); int(x) < v.g.NumSwitches(); x++ {
		c, pcs := int32(-1), v.g.PortChannels(x)
		if p := v.r.Port(x, d); int(p) < len(pcs) && p != lft.NoPort {
			c = pcs[p]
		}
		w.cb[x] = c
	}
	m0 := w.vlMask
	w.vlMask = 0
	w.touched = w.touched[:0]
	w.check(d, w.cb, nil)
	for _, b := range w.touched {
		w.own[b>>6] = 0
	}
	mask := w.vlMask
	w.vlMask |= m0
	return w.touched, mask
}
