package dfsssp

import (
	"fmt"
	"math"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// Turns. A turn (a dependency of the CDG) is a channel c1 followed by a
// channel c2 leaving the switch c1 enters; its dense id is
// tbase[c1] + (c2 − Off[Head[c1]]), so the turns of all channels number
// 0..T−1 with T = Σ_c deg(Head[c]).

// layer is one virtual layer's CDG in OpenSM's form: a vertex per channel
// some path of the layer uses (created in first-use order), and per vertex
// its out-dependencies in the order paths first induced them. count[t] is
// the number of source LIDs whose paths in this layer induce turn t
// (OpenSM's num_pairs − removed); a turn stays linked when its count drops
// to 0 and is only unlinked when it is broken.
type layer struct {
	count   []int64  // per turn
	linked  []bool   // per turn: in its channel's dependency list
	adj     []int32  // per channel c: turns at adj[tbase[c] : tbase[c]+adjLen[c]]
	adjLen  []int32  // per channel
	created []uint32 // per channel: 1 + creation sequence, 0 when no vertex
	nodes   []int32  // vertices in creation order
	seq     uint32   // insertion stamp of the next path moved in
}

func newLayer(C, T int) *layer {
	return &layer{count: make([]int64, T), linked: make([]bool, T), adj: make([]int32, T),
		adjLen: make([]int32, C), created: make([]uint32, C)}
}

func (l *layer) reset() {
	clear(l.count)
	clear(l.linked)
	clear(l.adjLen)
	clear(l.created)
	l.nodes = l.nodes[:0]
	l.seq = 0
}

// node creates the vertex of channel c if it does not exist.
func (l *layer) node(c int32) {
	if l.created[c] == 0 {
		l.nodes = append(l.nodes, c)
		l.created[c] = uint32(len(l.nodes))
	}
}

// add counts m source LIDs on turn t out of channel c1, linking t at the
// end of c1's list when it is new.
func (l *layer) add(t, c1 int32, m int64, tbase []int32) {
	l.count[t] += m
	if !l.linked[t] {
		l.linked[t] = true
		l.adj[tbase[c1]+l.adjLen[c1]] = t
		l.adjLen[c1]++
	}
}

// unlink removes turn t from c1's list, keeping the others' order.
func (l *layer) unlink(t, c1 int32, tbase []int32) {
	lo := tbase[c1]
	n := l.adjLen[c1]
	for i := lo; i < lo+n; i++ {
		if l.adj[i] == t {
			copy(l.adj[i:lo+n-1], l.adj[i+1:lo+n])
			l.adjLen[c1]--
			l.linked[t] = false
			return
		}
	}
}

// builder records the routing's trees as SSSP produces them and owns the
// path state of the layering. A path is (source switch s, destination
// index di), id di·S + s.
type builder struct {
	p     *plan
	g     *fabric.Graph
	S, D  int
	tbase []int32  // per channel, len C+1
	key   []uint64 // per channel: OpenSM's channelID (switch LIDs and ports)
	nh    []int32  // per path: channel towards the destination, -1 none
	// Each destination's tree in preorder, so that a subtree is a slice:
	// pre[di·S + k] is the k-th switch, size[di·S + k] the size of its
	// subtree, pos[di·S + s] the position of switch s (reached switches
	// only); built[di] once built.
	pre, size, pos []uint16
	built          []bool
	tdOff          []int32 // CSR turn -> destination indices using it (ascending)
	tdDst          []int32
	l0             *layer
	pl             []uint8  // per path: layer
	stamp          []uint32 // per path in a layer >= 1: insertion order there

	sub     []int64 // per-destination scratch
	minRank []int32
	depth   []int32
	fresh   []int32
	kids    []int32 // preorder scratch: children CSR of a tree
	kidOff  []int32
	fill    []int32
	sz      []int32
	stack   []int32
}

func newBuilder(p *plan) (*builder, error) {
	g := p.g
	S, D, C := p.S, len(p.dests), g.NumChannels()
	if uint64(S)*uint64(D) >= math.MaxUint32 || S > math.MaxUint16 {
		return nil, fmt.Errorf("dfsssp: %d switches × %d destinations exceed the layering's path index", S, D)
	}
	b := &builder{p: p, g: g, S: S, D: D, tbase: make([]int32, C+1), key: make([]uint64, C),
		nh: make([]int32, S*D), pl: make([]uint8, S*D), stamp: make([]uint32, S*D),
		pre: make([]uint16, S*D), size: make([]uint16, S*D), pos: make([]uint16, S*D), built: make([]bool, D),
		sub: make([]int64, S), minRank: make([]int32, S), depth: make([]int32, S),
		kids: make([]int32, S), kidOff: make([]int32, S+1), fill: make([]int32, S), sz: make([]int32, S)}
	for c := 0; c < C; c++ {
		n := int64(b.tbase[c]) + int64(g.Degree(g.Head[c]))
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("dfsssp: more than %d channel dependencies", math.MaxInt32)
		}
		b.tbase[c+1] = int32(n)
		b.key[c] = uint64(g.SwitchLID(g.Tail[c]))<<48 | uint64(g.OutPort[c])<<32 |
			uint64(g.SwitchLID(g.Head[c]))<<16 | uint64(g.InPort[c])
	}
	for i := range b.nh {
		b.nh[i] = -1
	}
	b.l0 = newLayer(C, int(b.tbase[C]))
	b.tdOff = make([]int32, b.tbase[C]+1)
	return b, nil
}

// turn returns the id of turn c1 -> c2 (c2 leaves Head[c1]).
func (b *builder) turn(c1, c2 int32) int32 {
	return b.tbase[c1] + c2 - b.g.Off[b.g.Head[c1]]
}

// addDest adds destination di's tree (settling order, parent channels) to
// layer 0 exactly as OpenSM's update_channel_dep_graph would insert its
// paths source by source: a turn's count grows by the source LIDs of the
// subtree below it; a new turn goes to the end of its channel's list; new
// vertices are created in the order the first source (by rank) whose path
// uses them meets them. O(S log S) per destination.
func (b *builder) addDest(di int, order, par []int32) {
	g, p, l := b.g, b.p, b.l0
	root := order[0]
	base := di * b.S
	for _, v := range order {
		b.sub[v] = 0
		b.minRank[v] = math.MaxInt32
	}
	b.depth[root] = 0
	for _, v := range order[1:] {
		b.nh[base+int(v)] = par[v]
		b.depth[v] = b.depth[g.Head[par[v]]] + 1
	}
	for i := len(order) - 1; i >= 1; i-- {
		v := order[i]
		if p.mult[v] > 0 {
			b.sub[v] += p.mult[v]
			b.minRank[v] = min(b.minRank[v], p.srcRank[v])
		}
		y := g.Head[par[v]]
		b.sub[y] += b.sub[v]
		b.minRank[y] = min(b.minRank[y], b.minRank[v])
	}
	b.fresh = b.fresh[:0]
	for _, v := range order[1:] {
		c1 := par[v]
		t := int32(-1)
		if y := g.Head[c1]; y != root {
			t = b.turn(c1, par[y])
			b.tdOff[t+1]++
		}
		if b.sub[v] == 0 {
			continue // no source below v: OpenSM inserts no path here
		}
		if l.created[c1] == 0 {
			b.fresh = append(b.fresh, v)
		}
		if t >= 0 {
			l.add(t, c1, b.sub[v], b.tbase)
		}
	}
	// The first path through channel par[v] comes from the lowest-ranked
	// source below v; one source meets its channels from the far end.
	slices.SortFunc(b.fresh, func(x, y int32) int {
		if b.minRank[x] != b.minRank[y] {
			return int(b.minRank[x] - b.minRank[y])
		}
		return int(b.depth[y] - b.depth[x])
	})
	for _, v := range b.fresh {
		l.node(par[v])
	}
}

// preorder stores destination di's tree (from the next hops) in
// preorder with subtree sizes, once, when the layering first needs it.
func (b *builder) preorder(di int) {
	if b.built[di] {
		return
	}
	b.built[di] = true
	g := b.g
	base := di * b.S
	nh := b.nh[base : base+b.S]
	root := b.p.dests[di].sw
	off := b.kidOff
	clear(off)
	for v, c := range nh {
		if c >= 0 && int32(v) != root {
			off[g.Head[c]+1]++
		}
	}
	for s := 0; s < b.S; s++ {
		off[s+1] += off[s]
	}
	fill := b.fill
	copy(fill, off[:b.S])
	for v, c := range nh {
		if c >= 0 && int32(v) != root {
			y := g.Head[c]
			b.kids[fill[y]] = int32(v)
			fill[y]++
		}
	}
	pre, size, pos := b.pre[base:base+b.S], b.size[base:base+b.S], b.pos[base:base+b.S]
	n := 0
	st := append(b.stack[:0], root)
	for len(st) > 0 {
		v := st[len(st)-1]
		st = st[:len(st)-1]
		pre[n], pos[v] = uint16(v), uint16(n)
		n++
		st = append(st, b.kids[off[v]:off[v+1]]...)
	}
	b.stack = st
	// Children follow their parent in preorder: sum sizes from the end.
	sz := b.sz
	for k := n - 1; k >= 0; k-- {
		v := int32(pre[k])
		sz[v] = 1
		for _, c := range b.kids[off[v]:off[v+1]] {
			sz[v] += sz[c]
		}
		size[k] = uint16(sz[v])
	}
}

// finish builds the turn -> destinations index from the recorded trees.
func (b *builder) finish() {
	g := b.g
	T := len(b.tdOff) - 1
	for t := 0; t < T; t++ {
		b.tdOff[t+1] += b.tdOff[t]
	}
	b.tdDst = make([]int32, b.tdOff[T])
	fill := append([]int32(nil), b.tdOff[:T]...)
	for di := 0; di < b.D; di++ {
		root := b.p.dests[di].sw
		nh := b.nh[di*b.S : (di+1)*b.S]
		for v, c1 := range nh {
			if c1 < 0 || int32(v) == root {
				continue
			}
			if y := g.Head[c1]; y != root {
				t := b.turn(c1, nh[y])
				b.tdDst[fill[t]] = int32(di)
				fill[t]++
			}
		}
	}
}

// pathStamp orders the paths of one layer as OpenSM lists them on a
// dependency: layer 0 by (destination, source rank), later layers by the
// order they were moved in.
func (b *builder) pathStamp(pid int) uint32 {
	if b.pl[pid] == 0 {
		return uint32(pid/b.S)*uint32(b.S) + uint32(b.p.srcRank[pid%b.S])
	}
	return b.stamp[pid]
}

// pathsOn appends to buf the paths of layer L that induce turn t (out of
// channel c1), in their listing order, as stamp<<32 | path id. A path
// induces t when its destination's tree uses t and its source lies in the
// subtree below Tail[c1]. A path's layer never falls below that of a path
// it passes through (whatever moves a path moves every same-layer path
// through it), so a subtree whose root source is above L is skipped.
func (b *builder) pathsOn(t, c1 int32, L uint8, buf []uint64) []uint64 {
	x := b.g.Tail[c1]
	mult := b.p.mult
	for _, di := range b.tdDst[b.tdOff[t]:b.tdOff[t+1]] {
		b.preorder(int(di))
		base := int(di) * b.S
		pre, size, pl := b.pre[base:base+b.S], b.size[base:base+b.S], b.pl[base:base+b.S]
		k := int(b.pos[base+int(x)])
		for j, end := k, k+int(size[k]); j < end; {
			z := int(pre[j])
			if mult[z] == 0 {
				j++
				continue
			}
			switch {
			case pl[z] == L:
				buf = append(buf, uint64(b.pathStamp(base+z))<<32|uint64(base+z))
			case pl[z] > L:
				j += int(size[j])
				continue
			}
			j++
		}
	}
	slices.Sort(buf)
	return buf
}

// move takes path pid out of layer from (counts only: its turns stay
// linked) and inserts it at the end of layer to, as OpenSM's
// remove_path_from_cdg and update_channel_dep_graph do.
func (b *builder) move(pid int, from, to *layer) {
	g := b.g
	di, s := pid/b.S, int32(pid%b.S)
	root := b.p.dests[di].sw
	nh := b.nh[di*b.S : (di+1)*b.S]
	m := b.p.mult[s]
	prev := int32(-1)
	for c := nh[s]; ; {
		to.node(c)
		if prev >= 0 {
			t := b.turn(prev, c)
			from.count[t] -= m
			to.add(t, prev, m, b.tbase)
		}
		y := g.Head[c]
		if y == root {
			break
		}
		prev, c = c, nh[y]
	}
	b.pl[pid]++
	b.stamp[pid] = to.seq
	to.seq++
}
