package topo

import (
	"fmt"
	"math/rand/v2"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/nuesm/nuesm/fabric"
)

// injector holds the original fabric, what has failed so far, and the
// host connectivity of the current state. Ids are the original fabric's
// throughout; the output fabric is materialised at the end.
type injector struct {
	f        *fabric.Fabric
	isSwitch []bool
	cas      []fabric.NodeID // the CAs, in node order
	caIndex  []int32         // node id -> index into cas, -1 for other kinds

	cables   []fabric.Link // every cable (fabric.Links order), loopbacks included
	portBase []int32       // node id -> offset into portCab
	portCab  []int32       // (node, port) -> cable index, -1 uncabled

	// Adjacency over non-loopback cables: node u's cables are
	// adjCab[adjOff[u]:adjOff[u+1]], leading to adjPeer.
	adjOff, adjCab []int32
	adjPeer        []fabric.NodeID

	linkPool             []int32         // shuffled candidate cables
	switchPool           []fabric.NodeID // shuffled candidate switches
	nextLink, nextSwitch int             // next untried pool entries
	doneLinks            int             // failures applied so far
	doneSwitches         int
	repaired             []Failure // critical picks repaired (skip mode), in order

	cableDead, nodeDead []bool

	base     labeling // components of the current state
	partners []int32  // per CA: how many CAs it reaches in the current state

	// Scratch.
	tmp   labeling
	mark  []uint32
	epoch uint32
	queue []fabric.NodeID
	count []int32
}

// cand is a candidate failure: a cable (sw = NoNode) or a switch (cable -1).
type cand struct {
	cable int32
	sw    fabric.NodeID
}

// labeling numbers the connected parts of the switch graph (in order of
// their lowest node id) and lists the parts each CA has a live port in; a
// CA-CA cable c is a part of its own, numbered parts+c.
type labeling struct {
	comp  []int32 // node id -> part of a live switch, -1 otherwise
	parts int
	caOff []int32 // CA index -> offset into caLab (len(cas)+1)
	caLab []int32
}

func (l *labeling) labels(ca int) []int32 { return l.caLab[l.caOff[ca]:l.caOff[ca+1]] }

func newInjector(f *fabric.Fabric, hostLinks bool) (*injector, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("topo: failures: %w", err)
	}
	n := len(f.Nodes)
	inj := &injector{
		f: f, isSwitch: make([]bool, n), caIndex: make([]int32, n),
		portBase: make([]int32, n+1), nodeDead: make([]bool, n),
		adjOff: make([]int32, n+1), mark: make([]uint32, n),
	}
	for i := range f.Nodes {
		nd := &f.Nodes[i]
		inj.caIndex[i] = -1
		switch nd.Kind {
		case fabric.Switch:
			inj.isSwitch[i] = true
			inj.switchPool = append(inj.switchPool, fabric.NodeID(i))
		case fabric.CA:
			inj.caIndex[i] = int32(len(inj.cas))
			inj.cas = append(inj.cas, fabric.NodeID(i))
		}
		inj.portBase[i+1] = inj.portBase[i] + int32(len(nd.Ports))
	}
	inj.portCab = make([]int32, inj.portBase[n])
	for i := range inj.portCab {
		inj.portCab[i] = -1
	}
	inj.cables = f.Links()
	inj.cableDead = make([]bool, len(inj.cables))
	for c, l := range inj.cables {
		inj.portCab[inj.portBase[l.A.Node]+int32(l.A.Port)] = int32(c)
		inj.portCab[inj.portBase[l.B.Node]+int32(l.B.Port)] = int32(c)
		if l.A.Node == l.B.Node {
			continue
		}
		inj.adjOff[l.A.Node+1]++
		inj.adjOff[l.B.Node+1]++
		if hostLinks || inj.isSwitch[l.A.Node] && inj.isSwitch[l.B.Node] {
			inj.linkPool = append(inj.linkPool, int32(c))
		}
	}
	for i := 0; i < n; i++ {
		inj.adjOff[i+1] += inj.adjOff[i]
	}
	inj.adjCab = make([]int32, inj.adjOff[n])
	inj.adjPeer = make([]fabric.NodeID, inj.adjOff[n])
	fill := append([]int32(nil), inj.adjOff[:n]...)
	for c, l := range inj.cables {
		if l.A.Node == l.B.Node {
			continue
		}
		for _, e := range [2][2]fabric.NodeID{{l.A.Node, l.B.Node}, {l.B.Node, l.A.Node}} {
			inj.adjCab[fill[e[0]]] = int32(c)
			inj.adjPeer[fill[e[0]]] = e[1]
			fill[e[0]]++
		}
	}
	inj.label(cand{cable: -1, sw: fabric.NoNode}, &inj.base)
	inj.partners = inj.reach(&inj.base)
	return inj, nil
}

// shuffle orders the candidate pools.
func (inj *injector) shuffle(r *rand.Rand) {
	r.Shuffle(len(inj.linkPool), func(i, j int) { inj.linkPool[i], inj.linkPool[j] = inj.linkPool[j], inj.linkPool[i] })
	r.Shuffle(len(inj.switchPool), func(i, j int) { inj.switchPool[i], inj.switchPool[j] = inj.switchPool[j], inj.switchPool[i] })
}

// cableLive reports whether cable c and both its ends are still there.
func (inj *injector) cableLive(c int32) bool {
	l := inj.cables[c]
	return !inj.cableDead[c] && !inj.nodeDead[l.A.Node] && !inj.nodeDead[l.B.Node]
}

// usable reports whether the adjacency entry e (of a live node) leads over
// a live cable to a live node, with x failed on top.
func (inj *injector) usable(e int32, x cand) bool {
	c, v := inj.adjCab[e], inj.adjPeer[e]
	return c != x.cable && v != x.sw && !inj.cableDead[c] && !inj.nodeDead[v]
}

// evaluate judges candidate x against the current state: whether it is
// critical, the CAs it cuts off, and (when it had to compute them) every
// CA's reach after it. after is nil when x changes no CA's reach.
func (inj *injector) evaluate(x cand) (critical bool, lost *roaring.Bitmap, after []int32) {
	lost = roaring.New()
	if inj.harmless(x) {
		return false, lost, nil
	}
	inj.label(x, &inj.tmp)
	after = inj.reach(&inj.tmp)
	for i := range after {
		if after[i] < inj.partners[i] {
			critical = true
			break
		}
	}
	if !critical {
		return false, lost, after
	}
	// The part of the fabric x was in, and its largest piece after x.
	part := int32(-1)
	if x.sw >= 0 {
		part = inj.base.comp[x.sw]
	} else if l := inj.cables[x.cable]; inj.isSwitch[l.A.Node] {
		part = inj.base.comp[l.A.Node]
	} else if inj.isSwitch[l.B.Node] {
		part = inj.base.comp[l.B.Node]
	}
	main, best := int32(-1), int32(-1)
	for v, p := range inj.base.comp {
		if p < 0 || p != part {
			continue
		}
		if q := inj.tmp.comp[v]; q >= 0 && (inj.count[q] > best || inj.count[q] == best && q < main) {
			main, best = q, inj.count[q]
		}
	}
	for i := range after {
		if after[i] >= inj.partners[i] {
			continue
		}
		inMain := false
		for _, q := range inj.tmp.labels(i) {
			inMain = inMain || q == main
		}
		if !inMain {
			lost.Add(uint32(inj.cas[i]))
		}
	}
	return true, lost, after
}

// harmless is the quick test for the common case: x is a switch-to-switch
// cable whose ends stay connected without it, or a switch without CAs
// whose switch neighbours stay connected without it. Either way every part
// of the fabric stays in one piece and no CA loses a port.
func (inj *injector) harmless(x cand) bool {
	var from fabric.NodeID
	var want []fabric.NodeID
	if x.sw >= 0 {
		for e := inj.adjOff[x.sw]; e < inj.adjOff[x.sw+1]; e++ {
			if !inj.usable(e, cand{cable: -1, sw: fabric.NoNode}) {
				continue
			}
			v := inj.adjPeer[e]
			if inj.caIndex[v] >= 0 {
				return false
			}
			if inj.isSwitch[v] {
				want = append(want, v)
			}
		}
		if len(want) <= 1 {
			return true
		}
		from = want[0]
	} else {
		l := inj.cables[x.cable]
		if !inj.isSwitch[l.A.Node] || !inj.isSwitch[l.B.Node] {
			return false
		}
		from, want = l.A.Node, []fabric.NodeID{l.B.Node}
	}
	if inj.epoch >= 1<<32-3 { // about to wrap: start the marks afresh
		clear(inj.mark)
		inj.epoch = 0
	}
	wanted, seen := inj.epoch+1, inj.epoch+2
	inj.epoch += 2
	left := 0
	for _, v := range want {
		if inj.mark[v] != wanted { // parallel cables list a neighbour twice
			inj.mark[v] = wanted
			left++
		}
	}
	q := append(inj.queue[:0], from)
	if inj.mark[from] == wanted {
		left--
	}
	inj.mark[from] = seen
	for h := 0; h < len(q) && left > 0; h++ {
		u := q[h]
		for e := inj.adjOff[u]; e < inj.adjOff[u+1]; e++ {
			v := inj.adjPeer[e]
			if !inj.isSwitch[v] || inj.mark[v] == seen || !inj.usable(e, x) {
				continue
			}
			if inj.mark[v] == wanted {
				left--
			}
			inj.mark[v] = seen
			q = append(q, v)
		}
	}
	inj.queue = q
	return left == 0
}

// label computes the parts of the current state with x failed on top.
func (inj *injector) label(x cand, l *labeling) {
	n := len(inj.f.Nodes)
	if l.comp == nil {
		l.comp = make([]int32, n)
		l.caOff = make([]int32, len(inj.cas)+1)
	}
	for i := range l.comp {
		l.comp[i] = -1
	}
	l.parts = 0
	q := inj.queue[:0]
	for s := 0; s < n; s++ {
		if !inj.isSwitch[s] || inj.nodeDead[s] || fabric.NodeID(s) == x.sw || l.comp[s] >= 0 {
			continue
		}
		p := int32(l.parts)
		l.parts++
		l.comp[s] = p
		q = append(q[:0], fabric.NodeID(s))
		for h := 0; h < len(q); h++ {
			u := q[h]
			for e := inj.adjOff[u]; e < inj.adjOff[u+1]; e++ {
				v := inj.adjPeer[e]
				if inj.isSwitch[v] && l.comp[v] < 0 && inj.usable(e, x) {
					l.comp[v] = p
					q = append(q, v)
				}
			}
		}
	}
	inj.queue = q
	l.caLab = l.caLab[:0]
	for i, a := range inj.cas {
		start := len(l.caLab)
		for e := inj.adjOff[a]; e < inj.adjOff[a+1]; e++ {
			if !inj.usable(e, x) {
				continue
			}
			var lab int32
			switch v := inj.adjPeer[e]; {
			case inj.isSwitch[v]:
				lab = l.comp[v]
			case inj.caIndex[v] >= 0:
				lab = int32(l.parts) + inj.adjCab[e]
			default:
				continue // a router: no host connectivity
			}
			dup := false
			for _, o := range l.caLab[start:] {
				dup = dup || o == lab
			}
			if !dup {
				l.caLab = append(l.caLab, lab)
			}
		}
		l.caOff[i+1] = int32(len(l.caLab))
	}
}

// reach returns, per CA, how many other CAs share a part with it, and
// leaves the number of CAs per part in inj.count. CAs with ports in
// several parts take the union of those parts' members (as bitmaps).
func (inj *injector) reach(l *labeling) []int32 {
	nl := l.parts + len(inj.cables)
	if cap(inj.count) < nl {
		inj.count = make([]int32, nl)
	}
	inj.count = inj.count[:nl]
	clear(inj.count)
	multi := false
	for i := range inj.cas {
		labs := l.labels(i)
		multi = multi || len(labs) > 1
		for _, q := range labs {
			inj.count[q]++
		}
	}
	var members map[int32]*roaring.Bitmap
	if multi {
		members = map[int32]*roaring.Bitmap{}
		for i := range inj.cas {
			if labs := l.labels(i); len(labs) > 1 {
				for _, q := range labs {
					members[q] = roaring.New()
				}
			}
		}
		for i := range inj.cas {
			for _, q := range l.labels(i) {
				if m := members[q]; m != nil {
					m.Add(uint32(i))
				}
			}
		}
	}
	out := make([]int32, len(inj.cas))
	for i := range inj.cas {
		switch labs := l.labels(i); len(labs) {
		case 0:
		case 1:
			out[i] = inj.count[labs[0]] - 1
		default:
			u := roaring.New()
			for _, q := range labs {
				u.Or(members[q])
			}
			out[i] = int32(u.GetCardinality()) - 1
		}
	}
	return out
}

// apply makes x part of the current state.
func (inj *injector) apply(x cand, critical bool, after []int32) {
	if x.sw >= 0 {
		inj.nodeDead[x.sw] = true
		inj.doneSwitches++
	} else {
		inj.cableDead[x.cable] = true
		inj.doneLinks++
	}
	if critical {
		inj.partners = after
	}
	inj.label(cand{cable: -1, sw: fabric.NoNode}, &inj.base)
}

// fabric materialises the current state as a new, validated fabric.
func (inj *injector) fabric(note string) (*fabric.Fabric, error) {
	f := inj.f
	newID := make([]fabric.NodeID, len(f.Nodes))
	out := &fabric.Fabric{
		Chassis: append([]fabric.Chassis(nil), f.Chassis...),
		Header:  append(append([]string(nil), f.Header...), note),
	}
	for i := range f.Nodes {
		if inj.nodeDead[i] {
			newID[i] = fabric.NoNode
			continue
		}
		newID[i] = fabric.NodeID(len(out.Nodes))
		nd := f.Nodes[i]
		nd.Ports = append([]fabric.Port(nil), nd.Ports...)
		out.Nodes = append(out.Nodes, nd)
	}
	for i := range f.Nodes {
		if inj.nodeDead[i] {
			continue
		}
		ports := out.Nodes[newID[i]].Ports
		for p := range ports {
			peer := ports[p].Peer
			if peer.Node < 0 {
				continue
			}
			if c := inj.portCab[inj.portBase[i]+int32(p)]; c < 0 || !inj.cableLive(c) {
				ports[p].Peer = fabric.NoPeer
				continue
			}
			ports[p].Peer.Node = newID[peer.Node]
		}
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("topo: failures produced an invalid fabric (a bug): %w", err)
	}
	return out, nil
}
