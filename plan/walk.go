package plan

import "github.com/nuesm/nuesm/lft"

// walker follows one destination's packets through a timeline. Each
// goroutine owns one; it is reused across destinations.
//
// walk enumerates every time-monotone walk: a packet at switch x at time k
// may wait until any later time k' of the window and leave on any value
// the entry holds at k' (both values during the step that writes it),
// with any VL the SL2VL schedule gives at k'. Waiting never adds options
// that an earlier time lacks except at the steps where x's entry or SL2VL
// table is written, so a state (channel, VL, SL) is expanded once, at the
// earliest time it is reached (a bucket queue over time), and only the
// times {k, write step of x, SL2VL step} are tried. Every consecutive pair
// of channels of such a walk is a dependency a packet in flight can
// create; dead ends (no route, a failed link, a wrong port at the
// destination switch) are reported. O((channels × VLs × SLs) × ports) per
// window.
type walker struct {
	w *world
	t *destTL

	slIdx [16]int8  // SL -> compact index for this run, -1 unused
	slRev [16]uint8 // compact index -> SL
	nsl   int32
	best  []int32  // per state: earliest time
	seen  []uint32 // per state: stamp when best is valid
	done  []uint32 // per state: stamp when expanded
	stamp uint32
	bkt   [][]int32 // per time offset: states to expand
	lo    int32
	hi    int32

	emit   func(e int64) // nil: no dependencies wanted
	strict bool          // dead ends are failures
	vlMax  uint8         // highest VL seen
	nFail  int64         // dead-end hops seen (strict runs)
	first  failure       // the first of them
	opts   []slEvent
	buf    [2]uint8
	vbuf   [2]uint8

	// static check scratch
	color []uint32 // per switch: stamp<<2 | colour
	flags []uint8  // per switch: reach flags
	where []int32  // per switch: switch of the first failure reachable
	why   []lft.Reason
	stack []int32
	stIdx []int8
}

type failure struct {
	seed  int32 // source switch
	slid  int
	at    int32 // switch where it happens
	why   lft.Reason
	k     int32 // time
	valid bool
}

func newWalker(w *world) *walker {
	S := w.g.NumSwitches()
	return &walker{w: w, color: make([]uint32, S), flags: make([]uint8, S), where: make([]int32, S), why: make([]lft.Reason, S)}
}

// walk enumerates the walks of seeds (all of t's seeds when idx is nil)
// injected in window [lo, hi].
func (wk *walker) walk(t *destTL, idx []int32, lo, hi int32) {
	wk.t, wk.lo, wk.hi = t, lo, hi
	wk.begin(t)
	for i := range wk.slIdx {
		wk.slIdx[i] = -1
	}
	wk.nsl = 0
	each := func(fn func(s *seed)) {
		if idx == nil {
			for i := range t.seeds {
				fn(&t.seeds[i])
			}
			return
		}
		for _, i := range idx {
			fn(&t.seeds[i])
		}
	}
	each(func(s *seed) {
		wk.opts = s.slOptions(lo, hi, wk.opts)
		for _, o := range wk.opts {
			if wk.slIdx[o.sl&15] < 0 {
				wk.slIdx[o.sl&15] = int8(wk.nsl)
				wk.slRev[wk.nsl] = o.sl & 15
				wk.nsl++
			}
		}
	})
	if wk.nsl == 0 {
		return
	}
	n := wk.w.g.NumChannels() * wk.w.es.V * int(wk.nsl)
	if len(wk.best) < n {
		wk.best, wk.seen, wk.done = make([]int32, n), make([]uint32, n), make([]uint32, n)
	}
	span := int(hi - lo + 1)
	for len(wk.bkt) < span {
		wk.bkt = append(wk.bkt, nil)
	}
	for i := 0; i < span; i++ {
		wk.bkt[i] = wk.bkt[i][:0]
	}
	each(func(s *seed) {
		wk.opts = s.slOptions(lo, hi, wk.opts)
		for _, o := range wk.opts {
			wk.decide(s, arrival{x: s.u, in: s.in, cIn: -1}, o.sl, o.step)
		}
	})
	g := wk.w.g
	V := int32(wk.w.es.V)
	for k := lo; k <= hi; k++ {
		for i := 0; i < len(wk.bkt[k-lo]); i++ {
			id := wk.bkt[k-lo][i]
			if wk.done[id] == wk.stamp || wk.best[id] != k {
				continue
			}
			wk.done[id] = wk.stamp
			si := id % wk.nsl
			cv := id / wk.nsl
			c, vl := cv/V, uint8(cv%V)
			wk.decide(nil, arrival{x: g.Head[c], in: g.InPort[c], cIn: c, vlIn: vl}, wk.slRev[si], k)
		}
	}
}

// arrival is a packet reaching switch x through port in, over channel cIn
// with VL vlIn, or injected there when cIn < 0.
type arrival struct {
	x, cIn   int32
	in, vlIn uint8
}

// decide expands a packet arriving as a with SL sl at time k.
func (wk *walker) decide(s *seed, a arrival, sl uint8, k int32) {
	wk.expand(s, a, sl, k)
	ws := wk.t.wstep[a.x]
	if ws > k && ws <= wk.hi {
		wk.expand(s, a, sl, ws)
	}
	if vs := wk.w.vlStep; vs > k && vs <= wk.hi && vs != ws && wk.w.vlTouched[a.x] {
		wk.expand(s, a, sl, vs)
	}
}

func (wk *walker) expand(s *seed, a arrival, sl uint8, k int32) {
	t, w, x := wk.t, wk.w, a.x
	for _, p := range t.ports(x, k, &wk.buf) {
		if x == t.dsw {
			if why := lft.Arrive(p, t.dport); why != lft.Delivered {
				wk.fail(s, x, why, k)
			}
			continue
		}
		c2, why := lft.Hop(w.g, x, p)
		if c2 < 0 {
			wk.fail(s, x, why, k)
			continue
		}
		for _, vl := range w.vls(x, a.in, p, sl, k, &wk.vbuf) {
			wk.vlMax = max(wk.vlMax, vl)
			if int(vl) >= w.es.V {
				continue // over the limit: reported through vlMax
			}
			if a.cIn >= 0 && wk.emit != nil {
				wk.emit(w.es.edge(a.cIn, a.vlIn, c2, vl))
			}
			wk.push(c2, vl, sl, k)
		}
	}
}

func (wk *walker) push(c int32, vl, sl uint8, k int32) {
	id := (c*int32(wk.w.es.V)+int32(vl))*wk.nsl + int32(wk.slIdx[sl&15])
	if wk.seen[id] == wk.stamp && wk.best[id] <= k {
		return
	}
	wk.seen[id], wk.best[id] = wk.stamp, k
	wk.bkt[k-wk.lo] = append(wk.bkt[k-wk.lo], id)
}

func (wk *walker) fail(s *seed, x int32, why lft.Reason, k int32) {
	if !wk.strict {
		return
	}
	wk.nFail++
	if !wk.first.valid {
		wk.first = failure{at: x, why: why, k: k, valid: true, seed: -1}
		if s != nil {
			wk.first.seed, wk.first.slid = s.u, s.slid
		}
	}
}

// Static check flags.
const (
	reachLoop uint8 = 1 << iota
	reachBad
)

// static checks every state step k's writes can leave destination t in,
// from the seeds active at k (all when idx is nil): a source can loop in
// some state iff it reaches a cycle of the union forwarding graph (old and
// new value of each entry written at k, one value elsewhere), and can be
// dropped in some state iff it reaches an entry that does not deliver: a
// shortest path to the cycle or the bad entry, plus the cycle, fixes one
// value per switch, so the state exists. Exact, O(switches) per step.
// It returns the pairs (and switch sources) that can loop and, among
// seeds not lost by the old tables, that can be dropped.
func (wk *walker) static(t *destTL, idx []int32, k int32) (loops, dropped int64, ex failure) {
	wk.begin(t)
	check := func(s *seed) {
		if !s.active(k) {
			return
		}
		f := wk.reach(s.u, k)
		n := max(s.pairs, 1)
		if f&reachLoop != 0 {
			loops += n
		} else if f&reachBad != 0 && !s.lost && !s.dark {
			dropped += n
		} else {
			return
		}
		if !ex.valid {
			why := lft.Loop
			if f&reachLoop == 0 {
				why = wk.why[s.u]
			}
			ex = failure{seed: s.u, slid: s.slid, at: wk.where[s.u], why: why, k: k, valid: true}
		}
	}
	if idx == nil {
		for i := range t.seeds {
			check(&t.seeds[i])
		}
	} else {
		for _, i := range idx {
			check(&t.seeds[i])
		}
	}
	return loops, dropped, ex
}

// begin starts static checks of t (reach memos are valid for one time k
// until the next begin).
func (wk *walker) begin(t *destTL) {
	wk.t = t
	wk.stamp++
	if wk.stamp == 0 || wk.stamp >= 1<<30 {
		wk.stamp = 1
		clear(wk.color)
		clear(wk.seen)
		clear(wk.done)
	}
}

// reach runs an iterative depth-first search from u over the union graph
// at time k and returns u's reach flags.
func (wk *walker) reach(u int32, k int32) uint8 {
	const grey, black = 1, 2
	t, st := wk.t, wk.stamp
	if c := wk.color[u]; c>>2 == st && c&3 == black {
		return wk.flags[u]
	}
	wk.stack, wk.stIdx = append(wk.stack[:0], u), append(wk.stIdx[:0], 0)
	wk.color[u], wk.flags[u], wk.where[u] = st<<2|grey, 0, u
	for len(wk.stack) > 0 {
		top := len(wk.stack) - 1
		x := wk.stack[top]
		opts := t.ports(x, k, &wk.buf)
		i := int(wk.stIdx[top])
		if i == len(opts) || x == t.dsw {
			if x == t.dsw {
				for _, p := range opts {
					if p != t.dport {
						wk.flags[x] |= reachBad
						wk.where[x], wk.why[x] = x, lft.WrongPort
					}
				}
			}
			wk.color[x] = st<<2 | black
			wk.stack, wk.stIdx = wk.stack[:top], wk.stIdx[:top]
			if top > 0 {
				par := wk.stack[top-1]
				if wk.flags[x]&^wk.flags[par] != 0 && wk.flags[par]&reachBad == 0 {
					wk.where[par], wk.why[par] = wk.where[x], wk.why[x]
				}
				wk.flags[par] |= wk.flags[x]
			}
			continue
		}
		wk.stIdx[top]++
		c, why := lft.Hop(wk.w.g, x, opts[i])
		if c < 0 {
			if wk.flags[x]&reachBad == 0 {
				wk.where[x], wk.why[x] = x, why
			}
			wk.flags[x] |= reachBad
			continue
		}
		y := wk.w.g.Head[c]
		switch cy := wk.color[y]; {
		case cy>>2 != st:
			wk.color[y], wk.flags[y], wk.where[y] = st<<2|grey, 0, y
			wk.stack, wk.stIdx = append(wk.stack, y), append(wk.stIdx, 0)
		case cy&3 == grey: // a cycle: everything on the stack reaches it
			for _, z := range wk.stack {
				wk.flags[z] |= reachLoop
			}
		default:
			if wk.flags[y]&^wk.flags[x] != 0 && wk.flags[x]&reachBad == 0 {
				wk.where[x], wk.why[x] = wk.where[y], wk.why[y]
			}
			wk.flags[x] |= wk.flags[y]
		}
	}
	return wk.flags[u]
}
