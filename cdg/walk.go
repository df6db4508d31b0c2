package cdg

import (
	"fmt"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Per-switch walk states, valid for the current destination stamp.
const (
	stVisiting uint32 = 1
	stOK       uint32 = 2
	stFail     uint32 = 3
)

// walker checks one destination at a time; each worker owns one.
type walker struct {
	v       *verifier
	st      []uint32 // per switch: stamp<<2 | state
	why     []uint8  // per switch: failure reason (when stFail)
	where   []int32  // per switch: switch where the failure happens
	stamp   uint32
	stack   []int32
	chStamp []uint32 // per channel: (dest stamp, SL) already walked onward

	pairs, deliv, unconn, loops, dead int64
	vlMask                            uint32
	examples                          []example
}

func newWalker(v *verifier) *walker {
	S := v.g.NumSwitches()
	return &walker{
		v: v, st: make([]uint32, S), why: make([]uint8, S), where: make([]int32, S),
		chStamp: make([]uint32, v.g.NumChannels()*v.V),
	}
}

// dest checks every source against destination LID d.
func (w *walker) dest(d int) {
	v, g := w.v, w.v.g
	w.stamp++
	sw, term := g.Owner(d)
	dsw, dport := sw, uint8(0)
	if term >= 0 {
		dsw, dport = g.Terms[term].Switch, g.Terms[term].SwitchPort
	}
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
		if w.resolve(u, d, dsw, dport) != stOK {
			if w.why[u] == reasonLoop {
				w.loops += n
			} else {
				w.dead += n
			}
			w.example(u, d, term, self)
			continue
		}
		w.deliv += n
		w.edges(u, d, dsw, dport, term, self && v.opt.SwitchSources)
	}
}

// resolve follows the LFTs from switch u towards destination LID d on
// switch dsw (port dport there; 0 for a switch LID) and returns stOK or
// stFail, memoising the outcome for every switch on the way.
func (w *walker) resolve(u int32, d int, dsw int32, dport uint8) uint32 {
	g, r := w.v.g, w.v.r
	w.stack = w.stack[:0]
	x := u
	var res uint32
	var why uint8
	var where int32
	for {
		if s := w.st[x]; s>>2 == w.stamp {
			if s&3 == stVisiting {
				res, why, where = stFail, reasonLoop, x
			} else {
				res, why, where = s&3, w.why[x], w.where[x]
			}
			break
		}
		w.st[x] = w.stamp<<2 | stVisiting
		w.stack = append(w.stack, x)
		p := r.Port(x, d)
		if x == dsw {
			res, where = stOK, x
			if p != dport {
				res, why = stFail, reasonWrongPort
				if p == lft.NoPort {
					why = reasonNoRoute
				}
			}
			break
		}
		node := &g.F.Nodes[g.Switches[x]]
		switch {
		case p == lft.NoPort:
			why = reasonNoRoute
		case p == 0:
			why = reasonWrongNode
		case int(p) > node.NumPorts():
			why = reasonBadPort
		case !node.Ports[p].Cabled():
			why = reasonUncabled
		case g.F.Nodes[node.Ports[p].Peer.Node].Kind != fabric.Switch:
			why = reasonWrongNode
		}
		if why != reasonOK {
			res, where = stFail, x
			break
		}
		x = g.SwitchOf[node.Ports[p].Peer.Node]
	}
	for _, y := range w.stack {
		w.st[y] = w.stamp<<2 | res
		w.why[y], w.where[y] = why, where
	}
	return res
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
			w.walk(u, 0, sl, d, dsw, dport)
		} else if self {
			w.walk(u, 0, sl, d, dsw, dport)
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
			w.walk(u, tm.SwitchPort, sl, d, dsw, dport)
		}
	}
	if self {
		w.walk(u, 0, r.SL.Of(u, int(g.SwitchLID(u)), d), d, dsw, dport)
	}
}

// walk follows one delivered path from switch u (entered on port in) with
// SL sl, setting a dependency bit per hop and stopping where an earlier walk
// for the same destination and SL already went on from the same virtual
// channel.
func (w *walker) walk(u int32, in uint8, sl uint8, d int, dsw int32, dport uint8) {
	g, r, V := w.v.g, w.v.r, int32(w.v.V)
	key := w.stamp<<4 | uint32(sl&0xF)
	x := u
	prev, prevVL := int32(-1), uint8(0)
	for x != dsw {
		p := r.Port(x, d)
		c := g.ChannelAt(x, p)
		vl := r.SL2VL.VL(x, in, p, sl)
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

func (w *walker) setEdge(c1 int32, vl1 uint8, c2 int32, vl2 uint8) {
	v, g := w.v, w.v.g
	turn := v.tbase[c1] + int64(c2-g.Off[g.Head[c1]])
	var bit int64
	if v.cross {
		bit = turn*int64(v.V*v.V) + int64(vl1)*int64(v.V) + int64(vl2)
	} else {
		bit = turn*int64(v.V) + int64(vl2)
	}
	word, mask := &v.edges[bit>>6], uint64(1)<<(bit&63)
	if atomic.LoadUint64(word)&mask == 0 {
		atomic.OrUint64(word, mask)
	}
}

// example records a failing pair from switch u (its first source) to d.
func (w *walker) example(u int32, d int, term int32, self bool) {
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
	f.Reason = fmt.Sprintf("%s at switch %q", reasonText[w.why[u]], g.SwitchName(w.where[u]))
	w.examples = append(w.examples, example{dlid: d, src: src, f: f})
}

// flush adds the walker's counts to the verifier.
func (w *walker) flush() {
	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pairs += w.pairs
	v.deliv += w.deliv
	v.unconn += w.unconn
	v.loops += w.loops
	v.dead += w.dead
	v.vlMask |= w.vlMask
	v.examples = append(v.examples, w.examples...)
}
