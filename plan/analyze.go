package plan

import (
	"github.com/nuesm/nuesm/lft"
)

// destInfo is what the planner learns about one destination LID by
// comparing its old and new forwarding trees.
type destInfo struct {
	d       int32
	changed []int32 // switches whose entry changes, ascending
	// level of each changed switch: the number of changed switches on
	// its new path, itself included (the reverse topological order of the
	// new tree restricted to changed entries); 0 for an entry whose new
	// value does not deliver (written last, after a barrier).
	level    []int32
	maxLevel int32
	cleanup  int

	perTerm      bool  // SLs depend on the source port (per-pair exceptions)
	slChanged    bool  // some source's SL changes
	pairs        int64 // pairs (source port, this LID) the fabric connects
	changedPairs int64 // pairs whose path, SL or VLs change, or that the old tables lose
	lostPairs    int64 // pairs the old tables do not deliver (failed links)
	changedSrc   []int32
	srcPairs     []int64 // changed pairs per changedSrc entry
}

// analyzer holds one worker's scratch for analyze.
type analyzer struct {
	w        *world
	new      *lft.Routing
	pairDest map[int32]bool // destinations with per-pair SLs in either routing
	sameVLs  bool           // SL2VL identical in both routings
	t        *destTL
	st       []uint32 // per switch: stamp<<2 | state (walk memo)
	cnt      []int32  // per switch: changed switches on the new path
	stamp    uint32
	chain    []int32
	isChg    []bool
}

func newAnalyzer(w *world, new *lft.Routing, pairDest map[int32]bool, sameVLs bool) *analyzer {
	S := w.g.NumSwitches()
	return &analyzer{w: w, new: new, pairDest: pairDest, sameVLs: sameVLs, t: newDestTL(S),
		st: make([]uint32, S), cnt: make([]int32, S), isChg: make([]bool, S)}
}

const (
	stOK  = 1
	stBad = 2
	stCur = 3
)

// follow resolves, for every switch, whether following next() from it
// reaches the destination switch with entry dport there, memoising on the
// way; ok[x] is then st[x]&3 == stOK. onOK(x, next) runs when x is
// resolved good, after its successor.
func (a *analyzer) follow(next func(x int32) uint8, onOK func(x, y int32)) {
	t, g := a.t, a.w.g
	a.stamp++
	st := a.stamp << 2
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if a.st[s]&^3 == st {
			continue
		}
		a.chain = a.chain[:0]
		x, res := s, uint32(stBad)
		for {
			if v := a.st[x]; v&^3 == st {
				if v&3 != stCur {
					res = v & 3
				}
				break // stCur: a loop, res stays bad
			}
			a.st[x] = st | stCur
			a.chain = append(a.chain, x)
			p := next(x)
			if x == t.dsw {
				if p == t.dport {
					res = stOK
				}
				break
			}
			c, _ := a.w.hop(x, p)
			if c < 0 {
				break
			}
			x = g.Head[c]
		}
		for i := len(a.chain) - 1; i >= 0; i-- {
			y := a.chain[i]
			a.st[y] = st | res
			if res == stOK && onOK != nil {
				nx := int32(-1)
				if i+1 < len(a.chain) {
					nx = a.chain[i+1]
				} else if y != t.dsw {
					c, _ := a.w.hop(y, next(y))
					nx = g.Head[c]
				}
				onOK(y, nx)
			}
		}
	}
}

// analyze compares destination d's trees. ok is false when nobody
// answers d.
func (a *analyzer) analyze(d int) (destInfo, bool) {
	w, t, nw := a.w, a.t, a.new
	if !t.reset(w, d) {
		return destInfo{}, false
	}
	info := destInfo{d: int32(d), perTerm: a.pairDest[int32(d)]}
	S := int32(w.g.NumSwitches())
	for x := int32(0); x < S; x++ {
		a.isChg[x] = nw.Port(x, d) != t.val0[x]
		if a.isChg[x] {
			info.changed = append(info.changed, x)
		}
	}
	// Levels: changed switches on the new path, counted from the
	// destination (Francois and Bonaventure's ordering).
	a.follow(func(x int32) uint8 { return nw.Port(x, d) }, func(x, y int32) {
		a.cnt[x] = 0
		if y >= 0 {
			a.cnt[x] = a.cnt[y]
		}
		if a.isChg[x] {
			a.cnt[x]++
		}
	})
	newSt := a.stamp << 2
	newOK := func(x int32) bool { return a.st[x] == newSt|stOK }
	info.level = make([]int32, len(info.changed))
	for i, x := range info.changed {
		if newOK(x) {
			info.level[i] = a.cnt[x]
			info.maxLevel = max(info.maxLevel, a.cnt[x])
		} else {
			info.cleanup++
		}
	}
	// Old tree: which sources it still delivers, and whether a source's
	// old path is its new path entry by entry.
	same := make([]bool, S)
	a.follow(func(x int32) uint8 { return t.val0[x] }, func(x, y int32) {
		same[x] = !a.isChg[x] && (y < 0 || same[y])
	})
	oldSt := a.stamp << 2
	t.addSeeds(w, info.perTerm, false, nil)
	lastSrc := int32(-1)
	for i := range t.seeds {
		s := &t.seeds[i]
		info.pairs += s.pairs
		s.lost = a.st[s.u] != oldSt|stOK
		slNew := nw.SL.Of(s.u, s.slid, d)
		if s.sl0 != slNew {
			info.slChanged = true
		}
		if s.lost {
			info.lostPairs += s.pairs
		}
		if !s.lost && same[s.u] && s.sl0 == slNew && (a.sameVLs || a.sameVLPath(s, slNew)) {
			continue
		}
		info.changedPairs += s.pairs
		if s.u != lastSrc {
			info.changedSrc = append(info.changedSrc, s.u)
			info.srcPairs = append(info.srcPairs, 0)
			lastSrc = s.u
		}
		info.srcPairs[len(info.srcPairs)-1] += s.pairs
	}
	return info, true
}

// sameVLPath reports whether the seed's packets use the same VL on every
// hop of its (unchanged) path under both routings' SL2VL mappings.
func (a *analyzer) sameVLPath(s *seed, slNew uint8) bool {
	w, t, g := a.w, a.t, a.w.g
	oldM, newM := &w.old.SL2VL, &a.new.SL2VL
	x, in := s.u, s.in
	for steps := 0; steps <= g.NumSwitches(); steps++ {
		p := t.val0[x]
		if oldM.VL(x, in, p, s.sl0) != newM.VL(x, in, p, slNew) {
			return false
		}
		if x == t.dsw {
			return true
		}
		c, _ := w.hop(x, p)
		if c < 0 {
			return false
		}
		x, in = g.Head[c], g.InPort[c]
	}
	return false
}
