package cdg

import (
	"fmt"
	"sync/atomic"

	"github.com/nuesm/nuesm/lft"
)

// block is the number of destination LIDs a walker reads at a time: one
// cache line of every switch's table, transposed so that each
// destination's next hops (a column of the tables) lie in one contiguous
// slice.
const block = 64

// walker checks one destination at a time; each worker owns one.
type walker struct {
	v *verifier
	t *lft.Walker
	// cb holds the block's next hops: cb[j*S+x] is the channel switch x
	// forwards LID d0+j on, -1 where the entry leads to no other switch
	// (uniform SL2VL only).
	cb     []int32
	sb     []uint8  // the block's per-source-switch SLs, laid out as cb (nil: not used)
	vls    []uint32 // per switch: VLs pushed through it for the current destination (tree; zero between destinations)
	st     []uint32 // per switch: tstamp<<2 | state for the current destination
	tstamp uint32
	path   []int32
	stamp  uint32
	// chStamp is per virtual channel: (dest stamp, SL) already walked
	// onward (dest; allocated when first needed).
	chStamp []uint32
	// own and touched collect one destination's dependency bits (nil own:
	// bits go to the verifier).
	own     []uint64
	touched []int64
	paired  bool     // dest walked a destination pair by pair
	memo    treeMemo // the trees settled, per destination switch (see same)
	inBlock bool     // cb holds the block of LIDs from blk0 (see block)
	blk0    int
	cnt     []uint16 // per dependency bit, when a State is kept: this walker's destinations setting it

	pairs, deliv, unconn, loops, dead int64
	vlMask                            uint32
	examples                          []example
}

// Tree states of a switch (st's low bits).
const (
	stVisiting uint32 = 1
	stOK       uint32 = 2
	stBad      uint32 = 3
)

func newWalker(v *verifier) *walker {
	S := v.g.NumSwitches()
	w := &walker{v: v, t: lft.NewWalker(v.g, v.r)}
	if !v.cross {
		w.cb, w.vls, w.st = make([]int32, block*S), make([]uint32, S), make([]uint32, S)
	}
	if v.srcCols {
		w.sb = make([]uint8, block*S)
	}
	if v.counting {
		w.cnt = make([]uint16, len(v.edges)*64)
	}
	return w
}

// block checks the destinations among LIDs b*block .. b*block+block-1.
func (w *walker) block(b int) {
	v, S := w.v, w.v.g.NumSwitches()
	d0 := b * block
	n := min(block, v.g.MaxLID()+1-d0)
	if w.cb != nil {
		for x := int32(0); int(x) < S; x++ {
			transposeHops(w.cb, S, x, v.g.PortChannels(x), v.r.Row(x)[d0:d0+n])
		}
	}
	if w.sb != nil {
		for x := int32(0); int(x) < S; x++ {
			transpose(w.sb, S, x, v.r.SL.SrcRow(x)[d0:d0+n])
		}
	}
	w.inBlock, w.blk0 = w.cb != nil, d0
	defer func() { w.inBlock = false }()
	for j := 0; j < n; j++ {
		d := d0 + j
		if sw, term := v.g.Owner(d); sw < 0 && term < 0 {
			continue
		}
		var sl []uint8
		if w.sb != nil {
			sl = w.sb[j*S : (j+1)*S]
		}
		var col []int32
		if w.cb != nil {
			col = w.cb[j*S : (j+1)*S]
		}
		if v.dmask == nil {
			w.check(d, col, sl)
			continue
		}
		m0 := w.vlMask
		w.vlMask = 0
		w.check(d, col, sl)
		v.dmask[d] = w.vlMask
		w.vlMask |= m0
	}
}

// check checks every source against destination LID d: by its tree of
// next hops when col holds them (nil: per-port SL2VL tables), else, or
// when some source is not delivered, pair by pair.
func (w *walker) check(d int, col []int32, sl []uint8) {
	if col == nil || !w.tree(d, col, sl) {
		w.dest(d)
	}
}

// transpose writes switch x's slice of a block of LIDs into the block's
// columns: tb[j*S+x] = row[j].
func transpose(tb []uint8, S int, x int32, row []uint8) {
	for j, p := range row {
		tb[j*S+int(x)] = p
	}
}

// transposeHops writes the channels switch x's entries of a block of LIDs
// lead to into the block's columns: cb[j*S+x] is the channel port row[j]
// leaves on (pcs: x's channels by port), -1 for none.
func transposeHops(cb []int32, S int, x int32, pcs []int32, row []uint8) {
	for j, p := range row {
		c := int32(-1)
		if int(p) < len(pcs) && p != lft.NoPort {
			c = pcs[p]
		}
		cb[j*S+int(x)] = c
	}
}

// dest checks every source against destination LID d with lft.Walker,
// reading the tables, whatever they hold, and walks the delivered paths
// for their dependencies (edges).
func (w *walker) dest(d int) {
	v, g := w.v, w.v.g
	w.paired = true
	if w.chStamp == nil {
		w.chStamp = make([]uint32, g.NumChannels()*v.V)
	}
	w.stamp++
	dsw, dport, term := lft.Target(g, d)
	w.t.Dest(d)
	for u := int32(0); int(u) < g.NumSwitches(); u++ {
		n := int64(v.nsrc[u])
		if term >= 0 && g.Terms[term].Switch == u {
			n-- // a port is not a source of its own LID
		}
		self := (v.opt.SwitchSources || v.opt.SwitchDelivery) && !(term < 0 && u == dsw)
		if self {
			n++
		}
		if n == 0 {
			continue
		}
		if dsw < 0 || v.comp[u] != v.comp[dsw] {
			w.unconn += n
			continue
		}
		w.pairs += n
		if why, at := w.t.Resolve(u); why != lft.Delivered {
			if why == lft.Loop {
				w.loops += n
			} else {
				w.dead += n
			}
			w.example(u, d, term, self, why, at)
			continue
		}
		w.deliv += n
		w.edges(u, d, dsw, dport, term, self && v.opt.SwitchSources)
	}
}

// sourceVLs returns the VLs of the walked paths from switch u to d when
// every port maps SLs by Default: one per distinct SL among u's sources.
func (w *walker) sourceVLs(u int32, d int, term int32, self bool, sl []uint8) uint32 {
	v, g, r := w.v, w.v.g, w.v.r
	def := &r.SL2VL.Default
	if len(r.SL.Pair) == 0 {
		inject := v.nsrc[u] > 0 && !(v.nsrc[u] == 1 && term >= 0 && g.Terms[term].Switch == u)
		if !inject && !self {
			return 0
		}
		if sl != nil {
			return 1 << def[sl[u]&0xF]
		}
		return 1 << def[r.SL.Of(u, 0, d)&0xF]
	}
	var m uint32
	for _, t := range g.TermsOf(u) {
		if t == term {
			continue
		}
		tm := &g.Terms[t]
		for l := 0; l < 1<<tm.LMC; l++ {
			m |= 1 << def[r.SL.Of(u, int(tm.LID)+l, d)&0xF]
		}
	}
	if self {
		m |= 1 << def[r.SL.Of(u, int(g.SwitchLID(u)), d)&0xF]
	}
	return m
}

// edges records the dependencies of the delivered paths from switch u to
// d: one walk per distinct (SL, input port) among u's sources.
func (w *walker) edges(u int32, d int, dsw int32, dport uint8, term int32, self bool) {
	v, g, r := w.v, w.v.g, w.v.r
	perPort := r.SL2VL.Switch != nil && r.SL2VL.Switch[u] != nil
	if len(r.SL.Pair) == 0 && !perPort {
		sl := r.SL.Of(u, 0, d)
		inject := v.nsrc[u] > 0 && !(v.nsrc[u] == 1 && term >= 0 && g.Terms[term].Switch == u)
		if inject {
			w.vlMask |= 1 << r.SL2VL.InjectVL(sl)
			w.walk(u, 0, sl, dsw, dport)
		} else if self {
			w.walk(u, 0, sl, dsw, dport)
		}
		return
	}
	for _, t := range g.TermsOf(u) {
		if t == term {
			continue
		}
		tm := &g.Terms[t]
		for l := 0; l < 1<<tm.LMC; l++ {
			sl := r.SL.Of(u, int(tm.LID)+l, d)
			w.vlMask |= 1 << r.SL2VL.InjectVL(sl)
			w.walk(u, tm.SwitchPort, sl, dsw, dport)
		}
	}
	if self {
		w.walk(u, 0, r.SL.Of(u, int(g.SwitchLID(u)), d), dsw, dport)
	}
}

// walk follows one delivered path from switch u (entered on port in) with
// SL sl, setting a dependency bit per hop and stopping where an earlier walk
// for the same destination and SL already went on from the same virtual
// channel.
func (w *walker) walk(u int32, in uint8, sl uint8, dsw int32, dport uint8) {
	g, r, V := w.v.g, w.v.r, int32(w.v.V)
	key := w.stamp<<4 | uint32(sl&0xF)
	x := u
	prev, prevVL := int32(-1), uint8(0)
	for x != dsw {
		c := w.t.Next(x)
		vl := r.SL2VL.VL(x, in, g.OutPort[c], sl)
		w.vlMask |= 1 << vl
		if prev >= 0 {
			w.setEdge(prev, prevVL, c, vl)
		}
		// The rest of the path depends on (c, SL) only, but the next
		// dependency also on the VL used on c, so memoise on (c, VL).
		if w.chStamp[c*V+int32(vl)] == key {
			return
		}
		w.chStamp[c*V+int32(vl)] = key
		prev, prevVL = c, vl
		in, x = g.InPort[c], g.Head[c]
	}
	if dport != 0 {
		w.vlMask |= 1 << r.SL2VL.VL(dsw, in, dport, sl)
	}
}

// setEdge sets the dependency from channel c1 on VL vl1 to channel c2 (out
// of the switch c1 enters) on VL vl2.
func (w *walker) setEdge(c1 int32, vl1 uint8, c2 int32, vl2 uint8) {
	v, g := w.v, w.v.g
	turn := v.tbase[c1] + int64(c2-g.Off[g.Head[c1]])
	var bit int64
	if v.cross {
		bit = turn*int64(v.V*v.V) + int64(vl1)*int64(v.V) + int64(vl2)
	} else {
		bit = turn*int64(v.V) + int64(vl2)
	}
	w.set(bit)
}

// set records dependency bit for the current destination: in the
// walker's own bitset when it collects one destination's dependencies
// (an incremental verification), else in the verifier's bitset and, when
// it keeps a State, the walker's counts (a destination sets each bit at
// most once along its tree).
func (w *walker) set(bit int64) {
	if w.own != nil {
		word, mask := &w.own[bit>>6], uint64(1)<<(bit&63)
		if *word&mask == 0 {
			*word |= mask
			w.touched = append(w.touched, bit)
		}
		return
	}
	if w.cnt != nil {
		w.cnt[bit]++
	}
	setBit(w.v.edges, bit)
}

// setBit sets a dependency bit; walkers of other destinations set bits
// concurrently.
func setBit(edges []uint64, bit int64) {
	word, mask := &edges[bit>>6], uint64(1)<<(bit&63)
	if atomic.LoadUint64(word)&mask == 0 {
		atomic.OrUint64(word, mask)
	}
}

// example records a failing pair from switch u (its first source) to d,
// lost for reason why at switch at.
func (w *walker) example(u int32, d int, term int32, self bool, why lft.Reason, at int32) {
	v, g := w.v, w.v.g
	if len(w.examples) >= v.opt.MaxExamples {
		return
	}
	f := PairFailure{DLID: d}
	src := int(u) * 1024
	found := false
	for _, t := range g.TermsOf(u) {
		if t == term {
			continue
		}
		tm := &g.Terms[t]
		f.Src = fmt.Sprintf("%s port %d", g.F.Name(tm.Node), tm.Port)
		f.SLID = int(tm.LID)
		src += int(tm.SwitchPort)
		found = true
		break
	}
	if !found && self {
		f.Src = fmt.Sprintf("switch %q", g.SwitchName(u))
		f.SLID = int(g.SwitchLID(u))
	}
	f.Reason = fmt.Sprintf("%s at switch %q", why, g.SwitchName(at))
	w.examples = append(w.examples, example{dlid: d, src: src, f: f})
}

// flush adds the walker's counts to the verifier (after the walks).
func (w *walker) flush() {
	v := w.v
	v.pairs += w.pairs
	v.deliv += w.deliv
	v.unconn += w.unconn
	v.loops += w.loops
	v.dead += w.dead
	v.vlMask |= w.vlMask
	v.examples = append(v.examples, w.examples...)
	if w.paired {
		v.noState.Store(true)
	}
	if w.cnt != nil {
		v.wcnt = append(v.wcnt, w.cnt)
	}
}
