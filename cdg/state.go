package cdg

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// State is what an incremental verification (State.Verify) keeps of a
// routing that passed: its fabric and tables, for every dependency the
// number of destinations whose paths have it, a topological order of the
// CDG, and for every destination LID the VLs its paths use. Counts and
// order are laid out for the fabric of the last full verification (base),
// of which the routing's fabric has lost some cables or switches since.
// Apart from a cache (memo), a State does not change once made: several
// verifications may start from it, also concurrently.
type State struct {
	v        *verifier // of the routing
	turnBase []int32   // v's turn -> base's turn (nil: v's fabric is base's)
	base     *verifier // of the base fabric (v after a full verification)
	baseCh   []int32   // base's turn -> channel
	toBase   []int32   // v's channel -> base channel
	k        *counts   // the CDG, laid out for base
	ord      []int32   // per base vertex (channel*V + VL): a topological order
	dmask    []uint32  // per LID: the VLs of its paths
	walked   int       // destinations walked to make the State
	// memo is a cache RepairBase leaves for the verification of the
	// repair, fmap one of the last fabric mapped onto the State's;
	// nothing else of a State changes once it is made.
	memo atomic.Pointer[repairMemo]
	fmap atomic.Pointer[mapMemo]
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
	if !v.cross && v.dests <= math.MaxUint16 {
		v.counting = true
		v.dmask = make([]uint32, v.g.MaxLID()+1)
		// A walker's counts take as much memory as the CDG has
		// dependency bits, so the walkers are few.
		v.opt.Workers = min(parallel.Workers(v.g.MaxLID()/block+1, v.opt.Workers), maxCountingWorkers)
	}
	v.run()
	rep := v.reportPairs()
	csr := v.reportCDG(rep)
	if !v.counting || len(v.wcnt) == 0 || !rep.OK() || v.noState.Load() {
		return rep, nil, rep.Err()
	}
	tc := turnChannels(v)
	toBase := make([]int32, v.g.NumChannels())
	for c := range toBase {
		toBase[c] = int32(c)
	}
	k := &counts{V: int64(v.V), cnt: v.wcnt[0], live: v.edges, perVL: slices.Clone(rep.EdgesPerVL)}
	for _, c := range v.wcnt[1:] {
		for b, n := range c {
			k.cnt[b] += n // at most one per destination
		}
	}
	st := &State{v: v, base: v, baseCh: tc, toBase: toBase, k: k, ord: topoOrder(csr), dmask: v.dmask, walked: v.dests}
	v.wcnt, v.dmask = nil, nil
	return rep, st, nil
}

// maxCountingWorkers bounds the walkers of a verification that keeps a
// State.
const maxCountingWorkers = 4

// turnChannels returns, per turn of v's fabric, the channel it starts on.
func turnChannels(v *verifier) []int32 {
	tc := make([]int32, v.tbase[len(v.tbase)-1])
	for c := range int32(len(v.tbase) - 1) {
		for t := v.tbase[c]; t < v.tbase[c+1]; t++ {
			tc[t] = c
		}
	}
	return tc
}

// Verify checks r on g as cdg.Verify does, with the same report, and
// returns the State of r when it passes. When g is the fabric of st with
// cables or switches without CA or router ports removed (matched by node
// GUID and port number) and r differs from st's routing in some
// destinations' columns, only those destinations are walked, in the old
// routing and in r, and the dependency counts are updated; every other
// destination's paths are the same switches and ports as before, so they
// are delivered and keep their dependencies. The CDG is checked for
// cycles through each dependency it gained, which keeps a topological
// order (Pearce and Kelly's dynamic topological sort); a cycle is then
// reported as Verify finds it. Otherwise (st nil, other options, SL2VL,
// SLs per pair, a cable or port added, a CA moved) r is verified in full.
func (st *State) Verify(g *fabric.Graph, r *lft.Routing, opt Options) (*Report, *State, error) {
	v, err := prepare(g, r, opt)
	if err != nil {
		return nil, nil, err
	}
	if st == nil || !st.applies(v) {
		return v.verifyState()
	}
	m := st.mapTo(g, v.opt.SwitchSources)
	if m == nil {
		return v.verifyState()
	}
	dirty, gone, _ := m.dirty(st.v.r, r)
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
	next = &State{v: v, base: st.base, baseCh: st.baseCh, toBase: m.compose(st.toBase),
		dmask: make([]uint32, v.g.MaxLID()+1), walked: len(dirty) + len(gone)}
	next.k, next.turnBase = st.takeMemo(v.g, dirty)
	if next.turnBase == nil {
		next.turnBase = turnBases(v, st.base, next.toBase)
	}
	if next.k == nil {
		next.k = st.k.clone()
		if !st.subtract(next.k, dirty, gone) {
			return nil, nil, false
		}
	}
	incrementalUpdates.Add(1)
	w := newCollector(v)
	var added []int64
	isDirty := make([]bool, len(next.dmask))
	w.collect(dirty, func(d int, bits []int64, mask uint32) {
		isDirty[d] = true
		for _, b := range bits {
			if bb := next.baseBit(b); next.k.inc(bb) {
				added = append(added, bb)
			}
		}
		next.dmask[d] = mask
	})
	for d := 1; d < len(next.dmask); d++ {
		if isDirty[d] {
			continue
		}
		dsw, _, term := lft.Target(v.g, d)
		if dsw < 0 {
			continue // not a destination: g's LIDs are st's (mapFabrics)
		}
		n, _ := v.ownSources(dsw, term)
		w.delivered(dsw, n)
		next.dmask[d] = st.dmask[d]
		w.vlMask |= next.dmask[d]
	}
	w.own = nil
	w.flush()
	rep = v.reportPairs()
	next.ord = slices.Clone(st.ord)
	if newOrderer(next).insertAll(added) {
		rep.EdgesPerVL = slices.Clone(next.k.perVL)
		for _, n := range next.k.perVL {
			rep.CDGEdges += n
		}
	} else {
		next.fillEdges()
		v.reportCDG(rep)
	}
	if !rep.OK() || w.paired {
		next = nil
	}
	return rep, next, true
}

// subtract walks the destinations of the lists in st's routing and
// takes their dependencies out of k (laid out as st's). It reports false
// when one of them needs the pair walk, which st's routing never did.
func (st *State) subtract(k *counts, lists ...[]int) bool {
	if st.treesOnly() {
		return st.subtractTrees(k, lists...)
	}
	return st.subtractWalk(k, lists...)
}

// subtractWalk is subtract by the verifier's walk of each destination.
func (st *State) subtractWalk(k *counts, lists ...[]int) bool {
	w0 := newCollector(st.v)
	for _, list := range lists {
		w0.collect(list, func(_ int, bits []int64, _ uint32) {
			for _, b := range bits {
				k.dec(st.baseBit(b))
			}
		})
	}
	return !w0.paired
}

// baseBit returns the base's dependency bit of dependency bit b of st's
// routing.
func (st *State) baseBit(b int64) int64 {
	if st.turnBase == nil {
		return b
	}
	V := int64(st.v.V)
	if V&(V-1) == 0 { // the usual VL counts: no division per bit
		s := uint(bits.TrailingZeros64(uint64(V)))
		return int64(st.turnBase[b>>s])<<s | b&(V-1)
	}
	return int64(st.turnBase[b/V])*V + b%V
}

// turnBases returns, per turn of v's fabric, base's turn.
// It is forTurns without the call per turn: RepairBase and every
// incremental verification map the whole fabric's turns.
func turnBases(v, base *verifier, toBase []int32) []int32 {
	g, gb := v.g, base.g
	tb := make([]int32, v.tbase[len(v.tbase)-1])
	for c := range int32(g.NumChannels()) {
		h, cb := g.Head[c], toBase[c]
		b0 := base.tbase[cb] - int64(gb.Off[gb.Head[cb]])
		out := tb[v.tbase[c] : v.tbase[c]+int64(g.Degree(h))]
		for k, e := range toBase[g.Off[h]:g.Off[h+1]] {
			out[k] = int32(b0 + int64(e))
		}
	}
	return tb
}

// fillEdges sets the dependency bits of st's verifier from the counts.
func (st *State) fillEdges() {
	v := st.v
	forTurns(v, st.base, st.toBase, func(t, tb int64) {
		for b := st.k.vls(tb); b != 0; b &= b - 1 {
			bit := t*int64(v.V) + int64(bits.TrailingZeros64(b))
			v.edges[bit>>6] |= 1 << (bit & 63)
		}
	})
}

// forTurns calls fn with every turn of v's fabric and the turn of base's
// it is (toBase maps v's channels to base's).
func forTurns(v, base *verifier, toBase []int32, fn func(t, tb int64)) {
	g, gb := v.g, base.g
	for c := range int32(g.NumChannels()) {
		h, cb := g.Head[c], toBase[c]
		hb := gb.Head[cb]
		for k := range int32(g.Degree(h)) {
			kb := toBase[g.Off[h]+k] - gb.Off[hb]
			fn(v.tbase[c]+int64(k), base.tbase[cb]+int64(kb))
		}
	}
}

// newCollector returns a walker that collects one destination's
// dependency bits at a time (collect).
func newCollector(v *verifier) *walker {
	S := v.g.NumSwitches()
	return &walker{v: v, t: lft.NewWalker(v.g, v.r), cb: make([]int32, block*S), vls: make([]uint32, S), st: make([]uint32, S),
		own: make([]uint64, len(v.edges))}
}

// collect checks the destination LIDs ds in turn and calls fn with each
// one's dependency bits (valid during the call) and the VLs of its
// paths. It reads the tables a block of destinations at a time, each
// switch's row once per block, as the full verification does.
func (w *walker) collect(ds []int, fn func(d int, bits []int64, mask uint32)) {
	v, S := w.v, w.v.g.NumSwitches()
	for i := 0; i < len(ds); i += block {
		chunk := ds[i:min(i+block, len(ds))]
		for x := range int32(S) {
			pcs, row := v.g.PortChannels(x), v.r.Row(x)
			for j, d := range chunk {
				c := int32(-1)
				if p := row[d]; int(p) < len(pcs) && p != lft.NoPort {
					c = pcs[p]
				}
				w.cb[j*S+int(x)] = c
			}
		}
		for j, d := range chunk {
			m0 := w.vlMask
			w.vlMask = 0
			w.touched = w.touched[:0]
			w.check(d, w.cb[j*S:(j+1)*S], nil)
			for _, b := range w.touched {
				w.own[b>>6] = 0
			}
			mask := w.vlMask
			w.vlMask |= m0
			fn(d, w.touched, mask)
		}
	}
}
