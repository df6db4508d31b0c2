package enginetest

import (
	"sort"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// VChan is a virtual channel: a channel of fabric.Graph (one direction of
// a switch-to-switch cable) on one VL.
type VChan struct {
	Channel int32
	VL      uint8
}

// Dep is a dependency between virtual channels: some packet holding From
// next asks for To.
type Dep struct{ From, To VChan }

// Reason says whether and why a pair is not delivered: lft's list, the
// one cdg.Verify reports (the reference walks on its own, see follow).
type Reason = lft.Reason

// Outcomes of a walk.
const (
	Delivered = lft.Delivered
	Loop      = lft.Loop
	NoRoute   = lft.NoRoute
	BadPort   = lft.BadPort
	Uncabled  = lft.Uncabled
	WrongNode = lft.WrongNode
	WrongPort = lft.WrongPort
)

// Failure is one undelivered (source port, destination LID) pair.
type Failure struct {
	Src    int32          // source switch (index in fabric.Graph)
	Self   bool           // the source is the switch itself, not a terminal on it
	Port   fabric.PortRef // the source port (port 0 of the switch when Self)
	SLID   int            // base LID of the source port
	DLID   int
	Reason Reason
	// At holds the switch where the walk fails; for a loop, every switch
	// on the loop.
	At []int32
}

// RefOptions choose the sources, as cdg.Options does.
type RefOptions struct {
	SwitchSources  bool // switches send too, and their paths count in the CDG
	SwitchDelivery bool // switches send too, for delivery only
}

// RefReport is what Reference finds.
type RefReport struct {
	Pairs, Delivered, Unconnected int64
	Loops, DeadEnds               int64
	VLsUsed                       int // highest VL on any hop of a delivered path + 1
	Deps                          map[Dep]bool
	// Failures lists every undelivered pair in order of destination LID,
	// then source switch, then source (terminals in node and port order,
	// then the switch itself).
	Failures []Failure
}

// Reference walks every (source port, destination LID) pair of g through
// r hop by hop, without memoisation, and collects delivery outcomes and
// the dependencies between virtual channels of the delivered paths. A
// source is a CA or router port cabled to a switch (its packets enter the
// switch on that port with the SL r.SL.Of gives its LID and the VL
// r.SL2VL.InjectVL gives that SL) and, with opt, each switch itself
// (entering on port 0). A destination is every LID of a switch or of a
// cabled CA or router port; a port is no source of its own LIDs, nor a
// switch of its own. A pair counts as connected when the switch graph
// joins the source's switch and the destination's.
//
// It is slow (O(pairs · hops) map operations) and meant for fabrics of a
// few hundred LIDs.
func Reference(g *fabric.Graph, r *lft.Routing, opt RefOptions) *RefReport {
	S := g.NumSwitches()
	rep := &RefReport{Deps: map[Dep]bool{}}
	comp := switchComponents(g)
	ports, owner, dlids := refEndpoints(g)
	// Sources per switch: terminals in node/port order, then the switch.
	srcs := make([][]int, S)
	for i, q := range ports {
		if !q.swItself && q.sw >= 0 {
			srcs[q.sw] = append(srcs[q.sw], i)
		}
	}
	for i, q := range ports {
		if q.swItself && (opt.SwitchSources || opt.SwitchDelivery) {
			srcs[q.sw] = append(srcs[q.sw], i)
		}
	}

	maxVL := -1
	mark := func(vl uint8) { maxVL = max(maxVL, int(vl)) }
	for _, d := range dlids {
		dst := ports[owner[d]]
		dsw, dport := dst.sw, dst.swPort // dport 0 for a switch LID
		for u := int32(0); int(u) < S; u++ {
			for _, si := range srcs[u] {
				src := ports[si]
				if si == owner[d] {
					continue // a port is no source of its own LIDs
				}
				if dsw < 0 || comp[u] != comp[dsw] {
					rep.Unconnected++
					continue
				}
				rep.Pairs++
				hops, why, at := follow(g, r, u, d, dsw, dport)
				if why != Delivered {
					if why == Loop {
						rep.Loops++
					} else {
						rep.DeadEnds++
					}
					rep.Failures = append(rep.Failures, Failure{Src: u, Self: src.swItself, Port: fabric.PortRef{Node: src.node, Port: src.port}, SLID: src.lid, DLID: d, Reason: why, At: at})
					continue
				}
				rep.Delivered++
				if src.swItself {
					if opt.SwitchSources {
						sl := r.SL.Of(u, src.lid, d)
						rep.deps(g, r, hops, 0, sl, mark)
					}
					continue
				}
				for l := 0; l < 1<<src.lmc; l++ {
					sl := r.SL.Of(u, src.lid+l, d)
					mark(r.SL2VL.InjectVL(sl))
					rep.deps(g, r, hops, src.swPort, sl, mark)
				}
			}
		}
	}
	rep.VLsUsed = maxVL + 1
	return rep
}

// switchComponents labels each switch with the lowest switch index of its
// component of the switch graph, from the fabric's cables.
func switchComponents(g *fabric.Graph) []int {
	f := g.F
	S := g.NumSwitches()
	comp := make([]int, S)
	for i := range comp {
		comp[i] = -1
	}
	for s := 0; s < S; s++ {
		if comp[s] >= 0 {
			continue
		}
		comp[s] = s
		queue := []int32{int32(s)}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			n := &f.Nodes[g.Switches[x]]
			for p := 1; p < len(n.Ports); p++ {
				peer := n.Ports[p].Peer
				if peer.Node < 0 || f.Nodes[peer.Node].Kind != fabric.Switch {
					continue
				}
				if y := g.SwitchOf[peer.Node]; comp[y] < 0 {
					comp[y] = s
					queue = append(queue, y)
				}
			}
		}
	}
	return comp
}

// refPort is a source or destination of Reference: a switch itself or a
// cabled CA or router port.
type refPort struct {
	node     fabric.NodeID
	port     uint8
	lid      int
	lmc      uint8
	sw       int32 // attached switch, -1 if none
	swPort   uint8
	swItself bool
}

// refEndpoints lists the switches and cabled CA and router ports by node
// kind and GUID (the order fabric.Compile numbers them in, whatever order
// the dump lists them in), the owner (index in that list) of each LID, and the
// LIDs sorted.
func refEndpoints(g *fabric.Graph) ([]refPort, map[int]int, []int) {
	f := g.F
	ids := make([]fabric.NodeID, len(f.Nodes))
	for i := range ids {
		ids[i] = fabric.NodeID(i)
	}
	sort.SliceStable(ids, func(a, b int) bool {
		na, nb := &f.Nodes[ids[a]], &f.Nodes[ids[b]]
		return na.Kind < nb.Kind || na.Kind == nb.Kind && na.GUID < nb.GUID
	})
	var ports []refPort
	for _, i := range ids {
		n := &f.Nodes[i]
		if n.Kind == fabric.Switch {
			s := g.SwitchOf[i]
			ports = append(ports, refPort{node: i, lid: int(n.Ports[0].LID), lmc: n.Ports[0].LMC, sw: s, swItself: true})
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			pt := &n.Ports[p]
			if !pt.Cabled() {
				continue
			}
			q := refPort{node: i, port: uint8(p), lid: int(pt.LID), lmc: pt.LMC, sw: -1}
			if f.Nodes[pt.Peer.Node].Kind == fabric.Switch {
				q.sw, q.swPort = g.SwitchOf[pt.Peer.Node], pt.Peer.Port
			}
			ports = append(ports, q)
		}
	}
	owner := map[int]int{} // LID -> index in ports
	for i, q := range ports {
		for l := q.lid; q.lid != 0 && l < q.lid+1<<q.lmc; l++ {
			owner[l] = i
		}
	}
	dlids := make([]int, 0, len(owner))
	for l := range owner {
		dlids = append(dlids, l)
	}
	sort.Ints(dlids)
	return ports, owner, dlids
}

// hop is one switch on a path and the port it forwards on.
type hop struct {
	sw  int32
	out uint8
}

// follow walks the LFTs from switch u towards LID d, owned by port dport
// of switch dsw (0: the switch itself). It returns the hops, the last one
// being the destination switch, or the reason and place of failure.
func follow(g *fabric.Graph, r *lft.Routing, u int32, d int, dsw int32, dport uint8) ([]hop, Reason, []int32) {
	f := g.F
	seen := map[int32]int{}
	var hops []hop
	x := u
	for {
		if i, ok := seen[x]; ok {
			var loop []int32
			for _, h := range hops[i:] {
				loop = append(loop, h.sw)
			}
			return nil, Loop, loop
		}
		seen[x] = len(hops)
		p := r.Port(x, d)
		if x == dsw {
			switch p {
			case dport:
				return append(hops, hop{x, p}), Delivered, nil
			case lft.NoPort:
				return nil, NoRoute, []int32{x}
			}
			return nil, WrongPort, []int32{x}
		}
		n := &f.Nodes[g.Switches[x]]
		switch {
		case p == lft.NoPort:
			return nil, NoRoute, []int32{x}
		case p == 0:
			return nil, WrongNode, []int32{x}
		case int(p) > n.NumPorts():
			return nil, BadPort, []int32{x}
		case !n.Ports[p].Cabled():
			return nil, Uncabled, []int32{x}
		case f.Nodes[n.Ports[p].Peer.Node].Kind != fabric.Switch:
			return nil, WrongNode, []int32{x}
		}
		hops = append(hops, hop{x, p})
		x = g.SwitchOf[n.Ports[p].Peer.Node]
	}
}

// deps adds the dependencies of one delivered path entered on port in with
// SL sl, and marks the VL of every hop (the last one into the destination
// CA included).
func (rep *RefReport) deps(g *fabric.Graph, r *lft.Routing, hops []hop, in uint8, sl uint8, mark func(uint8)) {
	f := g.F
	var prev VChan
	for i, h := range hops {
		vl := r.SL2VL.VL(h.sw, in, h.out, sl)
		if i == len(hops)-1 {
			if h.out != 0 {
				mark(vl) // the hop to the destination CA
			}
			return
		}
		mark(vl)
		cur := VChan{Channel: g.ChannelAt(h.sw, h.out), VL: vl}
		if i > 0 {
			rep.Deps[Dep{prev, cur}] = true
		}
		prev = cur
		in = f.Nodes[g.Switches[h.sw]].Ports[h.out].Peer.Port
	}
}

// EdgesPerVL counts the dependencies that stay on one VL, per VL, and
// those that change VL.
func (rep *RefReport) EdgesPerVL() (per map[uint8]int, cross int) {
	per = map[uint8]int{}
	for d := range rep.Deps {
		if d.From.VL == d.To.VL {
			per[d.From.VL]++
		} else {
			cross++
		}
	}
	return per, cross
}

// Cyclic reports whether the dependencies close a cycle, by gonum's
// Tarjan SCC search: some component has two or more virtual channels (a
// dependency of a virtual channel on itself cannot arise, since a channel
// leads to a different switch than it leaves, but counts as a cycle too).
func (rep *RefReport) Cyclic() bool {
	id := map[VChan]int64{}
	dg := simple.NewDirectedGraph()
	node := func(v VChan) simple.Node {
		if n, ok := id[v]; ok {
			return simple.Node(n)
		}
		id[v] = int64(len(id))
		dg.AddNode(simple.Node(id[v]))
		return simple.Node(id[v])
	}
	for d := range rep.Deps {
		if d.From == d.To {
			return true
		}
		dg.SetEdge(dg.NewEdge(node(d.From), node(d.To)))
	}
	for _, scc := range topo.TarjanSCC(dg) {
		if len(scc) > 1 {
			return true
		}
	}
	return false
}

// IsCycle reports whether vs (in order, the last depending on the first)
// is a closed walk of dependencies the reference found.
func (rep *RefReport) IsCycle(vs []VChan) bool {
	if len(vs) == 0 {
		return false
	}
	for i, v := range vs {
		if !rep.Deps[Dep{v, vs[(i+1)%len(vs)]}] {
			return false
		}
	}
	return true
}
