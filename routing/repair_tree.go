package routing

import (
	"math/bits"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Walk states of a switch towards one destination.
const (
	stUnknown uint8 = iota
	stOnStack
	stOK      // the entries from here on reach the destination's switch
	stBroken  // the path leads into a failed cable or switch, or loops
	stNone    // no route by design (a NoPort entry the tables had)
	stOutside // another component of the switch graph than the destination
)

// destTree is one destination's view of the tables under repair: for
// every switch its entry (col), the channel that entry takes, whether the
// path from there is intact, and the VLs of the terminal traffic towards
// the destination that crosses the switch. Scratch, reused across
// destinations; one per goroutine.
type destTree struct {
	g     *fabric.Graph
	comp  []int32 // switch -> component of the switch graph
	fresh []bool  // switch -> its table is new (every entry to be routed)
	d     int
	dsw   int32
	col   []uint8  // per switch: its entry for d (aliases the caller's column)
	nxt   []int32  // per switch: channel its entry takes (-1: d's switch, or unusable)
	state []uint8  // per switch: stOK, stBroken, stNone or stOutside
	srcs  []int32  // switches with terminals (the sources of traffic)
	own   []uint16 // per switch: VLs its terminals send to d on (0 but at srcs)
	mask  []uint16 // per switch: VLs of the intact terminal traffic crossing it
	path  []int32
	// freshDest: d is new to the tables (every switch but its own has
	// NoPort for it), so every switch is to be routed.
	freshDest bool
	// whole: d's switch is new, or d answered nowhere in the fabric the
	// tables were made for (revived, per LID; nil: unknown). Its entries
	// are stale and its turns in no CDG, so every switch is re-attached.
	whole   bool
	revived []bool
	// turns, when set, receives the turns spread finds: per VL a bitset
	// over the turn ids of tbase (see turnSpace).
	turns [][]uint64
	tbase []int64
	// breaks counts the switches whose own entry is unusable: it leads
	// into a failed cable or switch, closes a loop, or is missing where a
	// route is due.
	breaks int
}

func (rp *repairer) newDestTree() *destTree {
	g := rp.g
	S := g.NumSwitches()
	t := &destTree{g: g, comp: rp.comp, fresh: rp.fresh, revived: rp.revived, nxt: make([]int32, S), state: make([]uint8, S),
		own: make([]uint16, S), mask: make([]uint16, S)}
	for x := int32(0); int(x) < S; x++ {
		if g.TermOff[x+1] > g.TermOff[x] {
			t.srcs = append(t.srcs, x)
		}
	}
	return t
}

// load takes destination d's column of entries (one per switch), sets
// nxt and counts the break points; when there are some, it classifies
// every switch. A NoPort entry is a break point at a switch whose table
// is new, and everywhere for a new destination (one that every other
// switch has NoPort for); elsewhere it is a gap the tables had by design.
// Every switch is broken for a destination whose switch is new or that
// was revived (see whole).
// It reports false when nobody answers d. O(switches).
func (t *destTree) load(d int, col []uint8) bool {
	g := t.g
	sw, term := g.Owner(d)
	if term >= 0 {
		sw = g.Terms[term].Switch
	}
	if sw < 0 {
		return false
	}
	t.d, t.dsw, t.col = d, sw, col
	unrouted := 0 // switches without a usable channel, d's own included
	for x, p := range col {
		c := g.ChannelAt(int32(x), p) // -1 for port 0 and NoPort (beyond fabric.MaxPorts) too
		t.nxt[x] = c
		if c < 0 {
			unrouted++
		}
	}
	t.whole = t.fresh[sw] || (t.revived != nil && t.revived[d])
	if unrouted == 1 && !t.whole { // the common case: every switch but d's routes on
		t.nxt[sw], t.breaks, t.freshDest = -1, 0, false
		return true
	}
	home := t.comp[sw]
	dead, gaps, freshGaps, routed := 0, 0, 0, 0
	for x, p := range col {
		if int32(x) == sw || t.comp[x] != home {
			continue
		}
		switch {
		case p != lft.NoPort:
			routed++
			if t.nxt[x] < 0 {
				dead++
			}
		case t.fresh[x]:
			freshGaps++
		default:
			gaps++
		}
	}
	t.nxt[sw] = -1
	t.freshDest = t.whole || (routed == 0 && gaps > 0)
	t.breaks = dead + freshGaps
	if t.freshDest {
		t.breaks += gaps
	}
	if t.whole {
		t.breaks = routed + gaps + freshGaps
	}
	if t.breaks > 0 {
		t.classify()
	}
	return true
}

// reload is load of bd's column (col, a copy) from the classification
// the scan kept, which depends on the column and the fabric only: it
// sets nxt and restores state without walking the tree again.
func (t *destTree) reload(bd *brokenDest, col []uint8) {
	g := t.g
	sw, term := g.Owner(bd.d)
	if term >= 0 {
		sw = g.Terms[term].Switch
	}
	t.d, t.dsw, t.col = bd.d, sw, col
	for x, p := range col {
		t.nxt[x] = g.ChannelAt(int32(x), p)
	}
	t.nxt[sw] = -1
	t.whole = t.fresh[sw] || (t.revived != nil && t.revived[bd.d])
	t.freshDest, t.breaks = bd.freshDest, bd.breaks
	copy(t.state, bd.state)
}

// classify sets state from nxt and counts the break points again, loops
// included. O(switches).
func (t *destTree) classify() {
	dsw := t.dsw
	t.breaks = 0
	for x := range t.state {
		switch {
		case t.comp[x] != t.comp[dsw]:
			t.state[x] = stOutside
		case int32(x) != dsw && t.col[x] == lft.NoPort && !t.fresh[x] && !t.freshDest:
			t.state[x] = stNone
		default:
			t.state[x] = stUnknown
		}
	}
	t.state[dsw] = stOK
	for x := int32(0); int(x) < len(t.state); x++ {
		if t.state[x] == stUnknown {
			t.walk(x)
		}
	}
	if t.whole {
		for x := range t.state {
			if t.state[x] == stOK && int32(x) != dsw {
				t.state[x] = stBroken
				t.breaks++
			}
		}
	}
}

// walk follows x's path until a switch of known state and gives every
// switch on the way the outcome.
func (t *destTree) walk(x int32) {
	t.path = t.path[:0]
	res := stBroken
	for {
		s := t.state[x]
		if s == stOnStack {
			t.breaks++ // x's entry closes a loop
			break
		}
		if s != stUnknown {
			res = s
			if s == stNone {
				res = stBroken // a dead end the tables had; not counted
			}
			break
		}
		t.state[x] = stOnStack
		t.path = append(t.path, x)
		c := t.nxt[x]
		if c < 0 {
			t.breaks++ // into a failed cable or switch, or no route
			break
		}
		x = t.g.Head[c]
	}
	for _, p := range t.path {
		t.state[p] = res
	}
}

// ownPerDest sets own for a routing whose SL depends on the destination
// only: every switch with terminals sends on VL vl.
func (t *destTree) ownPerDest(vl uint8) {
	for _, x := range t.srcs {
		t.own[x] = 1 << vl
	}
}

// ownPerSource sets own from the SLs of the paths from every switch to d
// (srcSL[x]: x's SL towards d).
func (t *destTree) ownPerSource(srcSL []uint8, sl2vl *[lft.NumSLs]uint8) {
	for _, x := range t.srcs {
		t.own[x] = 1 << sl2vl[srcSL[x]&0xF]
	}
}

// spread computes mask: the traffic of every source whose path is intact
// (every source when the tree has no break point), pushed down its path.
// With turns set (per VL, a bitset over tbase's turn ids), it records
// each turn the traffic takes. O(switches × VLs).
func (t *destTree) spread() {
	clear(t.mask)
	for _, x := range t.srcs {
		if x != t.dsw && (t.breaks == 0 || t.state[x] == stOK) {
			t.push(x, t.own[x])
		}
	}
}

// push adds the VLs bits to x's traffic and to every switch downstream
// that lacks some of them, recording the turns those VLs newly take.
func (t *destTree) push(x int32, vls uint16) {
	g := t.g
	nb := vls &^ t.mask[x]
	for nb != 0 {
		t.mask[x] |= nb
		c := t.nxt[x]
		if c < 0 {
			return // d's switch
		}
		y := g.Head[c]
		if t.turns != nil && y != t.dsw {
			turn := t.tbase[c] + int64(t.nxt[y]-g.Off[y])
			for b := nb; b != 0; b &= b - 1 {
				t.turns[bits.TrailingZeros16(b)][turn>>6] |= 1 << (turn & 63)
			}
		}
		x = y
		nb &^= t.mask[x]
	}
}
