package plan

import (
	"slices"

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
	wk       *lft.Walker // walks of the new tables, then of the old ones
	cnt      []int32     // per switch: changed switches on the new path
	isChg    []bool
	// upstream: a changed switch whose old entry leads into another one
	// is written a level before it (see upstreamFirst).
	upstream bool
}

func newAnalyzer(w *world, new *lft.Routing, pairDest map[int32]bool, sameVLs bool) *analyzer {
	S := w.g.NumSwitches()
	return &analyzer{w: w, new: new, pairDest: pairDest, sameVLs: sameVLs, t: newDestTL(S),
		wk: lft.NewWalker(w.g, new), cnt: make([]int32, S), isChg: make([]bool, S)}
}

// follow settles the walk of every switch on a.wk (started by the caller)
// and runs onOK(x, y) for each switch x that delivers, after its successor
// y (-1 for the destination switch).
func (a *analyzer) follow(onOK func(x, y int32)) {
	g, wk := a.w.g, a.wk
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if why, _ := wk.Resolve(s); why != lft.Delivered {
			continue
		}
		path := wk.Settled()
		for i := len(path) - 1; i >= 0; i-- {
			x, y := path[i], int32(-1)
			if x != a.t.dsw {
				y = g.Head[wk.Next(x)]
			}
			onOK(x, y)
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
	a.wk.Dest(d)
	a.follow(func(x, y int32) {
		a.cnt[x] = 0
		if y >= 0 {
			a.cnt[x] = a.cnt[y]
		}
		if a.isChg[x] {
			a.cnt[x]++
		}
	})
	info.level = make([]int32, len(info.changed))
	for i, x := range info.changed {
		if a.wk.Delivered(x) {
			info.level[i] = a.cnt[x]
			info.maxLevel = max(info.maxLevel, a.cnt[x])
		} else {
			info.cleanup++
		}
	}
	if a.upstream {
		a.upstreamFirst(&info, t.val0)
	}
	// Old tree: which sources it still delivers, and whether a source's
	// old path is its new path entry by entry.
	same := make([]bool, S)
	a.wk.DestColumn(t.val0, t.dsw, t.dport)
	a.follow(func(x, y int32) {
		same[x] = !a.isChg[x] && (y < 0 || same[y])
	})
	t.addSeeds(w, info.perTerm, false, nil)
	lastSrc := int32(-1)
	for i := range t.seeds {
		s := &t.seeds[i]
		info.pairs += s.pairs
		s.lost = !a.wk.Delivered(s.u)
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
		c, _ := lft.Hop(g, x, p)
		if c < 0 {
			return false
		}
		x, in = g.Head[c], g.InPort[c]
	}
	return false
}

// upstreamFirst raises the levels of info (computed on the new tables,
// which a.wk still walks) so that a changed switch w whose old path
// reaches a changed switch z (z the first on it) comes a level before z,
// keeping every switch after the nearest changed switch on its new path. With a barrier after
// each level (BuildLive's second try) a packet that took w's old entry
// towards z has then left the fabric before z changes, so no packet
// turns from w's old path into z's new one, a turn neither routing has. The
// levels stay as they are when the two orders conflict (a cycle).
func (a *analyzer) upstreamFirst(info *destInfo, val0 []uint8) {
	g, n := a.w.g, len(info.changed)
	pos := make(map[int32]int, n)
	for j, x := range info.changed {
		if info.level[j] > 0 {
			pos[x] = j
		}
	}
	var edges [][2]int // (i, j): changed[i] is written before changed[j]
	for j, x := range info.changed {
		if info.level[j] == 0 {
			continue
		}
		for y := x; y != a.t.dsw; {
			y = g.Head[a.wk.Next(y)]
			if i, ok := pos[y]; ok {
				edges = append(edges, [2]int{i, j})
				break
			}
		}
		// The first changed switch on x's old path.
		for y, hops := x, 0; hops < g.NumSwitches(); hops++ {
			c := g.ChannelAt(y, val0[y])
			if c < 0 {
				break
			}
			if y = g.Head[c]; y == a.t.dsw {
				break
			}
			if k, ok := pos[y]; ok {
				edges = append(edges, [2]int{j, k})
				break
			}
			if a.isChg[y] {
				break // a changed entry that no longer delivers
			}
		}
	}
	lv := make([]int32, n)
	for j := range lv {
		lv[j] = min(info.level[j], 1)
	}
	for round := 0; ; round++ {
		moved := false
		for _, e := range edges {
			if lv[e[1]] <= lv[e[0]] {
				lv[e[1]], moved = lv[e[0]]+1, true
			}
		}
		if !moved {
			break
		}
		if round > n {
			return // the orders conflict
		}
	}
	copy(info.level, lv)
	info.maxLevel = slices.Max(append(lv, 0))
}
