package flitsim

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// LinkKind tells what a simulated link connects.
type LinkKind uint8

const (
	// Channel is a directed switch-to-switch link: fabric channel id =
	// link id.
	Channel LinkKind = iota
	// Inject is the link from a node (CA port) to its switch.
	Inject
	// Eject is the link from a switch to a node.
	Eject
)

// String returns "channel", "inject" or "eject".
func (k LinkKind) String() string {
	switch k {
	case Inject:
		return "inject"
	case Eject:
		return "eject"
	}
	return "channel"
}

// Network is a fabric, a routing and a hardware model compiled into dense
// tables. It is read-only after NewNetwork and safe for concurrent use:
// a sweep builds one Network and calls Run from several goroutines.
//
// Nodes are the simulated endpoints: the CA and router ports of the
// fabric (fabric.Graph.Terms) that are cabled to a switch and have a LID,
// numbered 0..NumNodes()-1 in Terms order. Packets address a node's base
// LID (LMC paths beyond the base LID are not used). Links are numbered:
// fabric channels 0..C-1 (same ids as fabric.Graph), then the injection
// link of node i (C+i), then the ejection link of node i (C+N+i).
type Network struct {
	g   *fabric.Graph
	r   *lft.Routing
	cfg Config

	lanes  int   // data VLs of the routing simulated
	pool   int   // VCs per VL (Config.VCsPerVL)
	vls    int   // VCs simulated: lanes × pool; VL v is VCs v·pool..v·pool+pool−1
	vshift uint8 // log2 of the VC stride
	maxVL  int   // highest VL the routing may use (upper bound)

	nodeTerm []int32  // node -> index into g.Terms
	nodeSw   []int32  // node -> switch
	nodeLID  []uint16 // node -> base LID
	termNode []int32  // g.Terms index -> node or -1

	nChan, nLinks int32
	lkSrcSw       []int32 // link -> switch it leaves, -1 for injection links
	lkDstSw       []int32 // link -> switch it enters, -1 for ejection links
	lkSrcPort     []uint8 // port on the source switch (0 for injection)
	lkDstPort     []uint8 // port on the destination switch (0 for ejection)
	lkNode        []int32 // node of injection and ejection links, -1 for channels
	lkDelay       []int32 // cycles from sending a flit to it being usable downstream
	lkLat         []int32 // time of flight: of flits, and of credits back

	swInOff, swIn   []int32 // CSR: links entering switch s
	swOutOff, swOut []int32 // CSR: links leaving switch s
	inLocal         []int32 // link -> index among its destination switch's inputs
	outLocal        []int32 // link -> index among its source switch's outputs
	portOff         []int32 // per switch: offset into portLink
	portLink        []int32 // (switch, port) -> link leaving through it, -1 none
	maxIn           int     // most inputs of any switch

	pol *policy // per-hop routing policy, nil: the LFT and SL2VL
}

// NewNetwork compiles g, r and cfg (defaults applied). It checks that the
// routing delivers every ordered pair of nodes without loops and that the
// VLs it may use fit in the simulated ones; errors wrap ErrUnroutable or
// ErrConfig. g and r are not modified and must not be modified while the
// Network is in use. Cost: O(S·N) for the delivery check (S switches, N
// nodes) plus the size of the fabric.
func NewNetwork(g *fabric.Graph, r *lft.Routing, cfg Config) (*Network, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := r.CheckShape(g); err != nil {
		return nil, fmt.Errorf("flitsim: %w: %w", ErrUnroutable, err)
	}
	n := &Network{g: g, r: r, cfg: cfg}
	n.nodes()
	if len(n.nodeTerm) < 2 {
		return nil, fmt.Errorf("flitsim: fabric has %d nodes with a LID on a switch, need 2: %w", len(n.nodeTerm), ErrConfig)
	}
	if cl := cfg.ChannelLatency; cl != nil {
		if len(cl) != g.NumChannels() {
			return nil, fmt.Errorf("flitsim: %d channel latencies for %d channels: %w", len(cl), g.NumChannels(), ErrConfig)
		}
		for c, v := range cl {
			if v < 1 || v > 1<<16 {
				return nil, fmt.Errorf("flitsim: channel %d latency %d, expected 1..65536 cycles: %w", c, v, ErrConfig)
			}
		}
	}
	n.links()
	if err := n.checkRoutes(); err != nil {
		return nil, err
	}
	n.maxVL = r.MaxVL()
	lanes := cfg.VLs
	if lanes == 0 {
		lanes = max(r.NumVLs, n.maxVL+1)
	}
	if n.maxVL >= lanes {
		return nil, fmt.Errorf("flitsim: routing may use VL %d, only %d VLs simulated: %w", n.maxVL, lanes, ErrUnroutable)
	}
	if err := n.setLanes(lanes); err != nil {
		return nil, err
	}
	if a := cfg.VLArb; a != nil {
		for vl := 0; vl <= n.maxVL; vl++ {
			if !arbHas(a, uint8(vl)) {
				return nil, fmt.Errorf("flitsim: VL arbitration gives VL %d, which the routing uses, no weight: %w", vl, ErrConfig)
			}
		}
	}
	return n, nil
}

func (n *Network) nodes() {
	g := n.g
	n.termNode = make([]int32, len(g.Terms))
	for i, t := range g.Terms {
		n.termNode[i] = -1
		if t.Switch < 0 || t.LID == 0 {
			continue
		}
		n.termNode[i] = int32(len(n.nodeTerm))
		n.nodeTerm = append(n.nodeTerm, int32(i))
		n.nodeSw = append(n.nodeSw, t.Switch)
		n.nodeLID = append(n.nodeLID, t.LID)
	}
}

func (n *Network) links() {
	g := n.g
	S := g.NumSwitches()
	N := int32(len(n.nodeTerm))
	C := int32(g.NumChannels())
	n.nChan, n.nLinks = C, C+2*N
	L := n.nLinks
	n.lkSrcSw, n.lkDstSw = make([]int32, L), make([]int32, L)
	n.lkSrcPort, n.lkDstPort = make([]uint8, L), make([]uint8, L)
	n.lkNode, n.lkDelay, n.lkLat = make([]int32, L), make([]int32, L), make([]int32, L)
	lat, ilat, pipe := int32(n.cfg.LinkLatency), int32(n.cfg.InjectLatency), int32(n.cfg.PipelineDelay)
	for c := int32(0); c < C; c++ {
		n.lkSrcSw[c], n.lkDstSw[c] = g.Tail[c], g.Head[c]
		n.lkSrcPort[c], n.lkDstPort[c] = g.OutPort[c], g.InPort[c]
		n.lkLat[c] = lat
		if n.cfg.ChannelLatency != nil {
			n.lkLat[c] = n.cfg.ChannelLatency[c]
		}
		n.lkNode[c], n.lkDelay[c] = -1, n.lkLat[c]+pipe
	}
	for i := int32(0); i < N; i++ {
		t := &g.Terms[n.nodeTerm[i]]
		in, out := C+i, C+N+i
		n.lkSrcSw[in], n.lkDstSw[in], n.lkDstPort[in], n.lkNode[in], n.lkDelay[in] = -1, t.Switch, t.SwitchPort, i, ilat+pipe
		n.lkSrcSw[out], n.lkDstSw[out], n.lkSrcPort[out], n.lkNode[out], n.lkDelay[out] = t.Switch, -1, t.SwitchPort, i, ilat
		n.lkLat[in], n.lkLat[out] = ilat, ilat
	}
	// CSR of inputs and outputs per switch, in link order.
	n.swInOff, n.swOutOff = make([]int32, S+1), make([]int32, S+1)
	for l := int32(0); l < L; l++ {
		if s := n.lkDstSw[l]; s >= 0 {
			n.swInOff[s+1]++
		}
		if s := n.lkSrcSw[l]; s >= 0 {
			n.swOutOff[s+1]++
		}
	}
	for s := 0; s < S; s++ {
		n.swInOff[s+1] += n.swInOff[s]
		n.swOutOff[s+1] += n.swOutOff[s]
		n.maxIn = max(n.maxIn, int(n.swInOff[s+1]-n.swInOff[s]))
	}
	n.swIn, n.swOut = make([]int32, n.swInOff[S]), make([]int32, n.swOutOff[S])
	n.inLocal, n.outLocal = make([]int32, L), make([]int32, L)
	fillIn, fillOut := append([]int32(nil), n.swInOff[:S]...), append([]int32(nil), n.swOutOff[:S]...)
	for l := int32(0); l < L; l++ {
		if s := n.lkDstSw[l]; s >= 0 {
			n.inLocal[l] = fillIn[s] - n.swInOff[s]
			n.swIn[fillIn[s]] = l
			fillIn[s]++
		}
		if s := n.lkSrcSw[l]; s >= 0 {
			n.outLocal[l] = fillOut[s] - n.swOutOff[s]
			n.swOut[fillOut[s]] = l
			fillOut[s]++
		}
	}
	n.portOff = make([]int32, S+1)
	for s, id := range g.Switches {
		n.portOff[s+1] = n.portOff[s] + int32(len(g.F.Nodes[id].Ports))
	}
	n.portLink = make([]int32, n.portOff[S])
	for i := range n.portLink {
		n.portLink[i] = -1
	}
	for l := int32(0); l < L; l++ {
		if s := n.lkSrcSw[l]; s >= 0 {
			n.portLink[n.portOff[s]+int32(n.lkSrcPort[l])] = l
		}
	}
}

// outLink returns the link switch s forwards LID lid on, or -1.
func (n *Network) outLink(s int32, lid uint16) (int32, uint8) {
	p := n.r.Port(s, int(lid))
	if p == lft.NoPort || int32(p) >= n.portOff[s+1]-n.portOff[s] {
		return -1, p
	}
	return n.portLink[n.portOff[s]+int32(p)], p
}

// checkRoutes follows the LFTs from every switch with nodes to every node
// and fails on the first pair that is not delivered. O(S·N): lft.Walker
// settles every switch once per destination.
func (n *Network) checkRoutes() error {
	sources := make([]bool, n.g.NumSwitches())
	for _, s := range n.nodeSw {
		sources[s] = true
	}
	w := lft.NewWalker(n.g, n.r)
	for d := range n.nodeTerm {
		dlid := n.nodeLID[d]
		w.Dest(int(dlid))
		for s := int32(0); int(s) < len(sources); s++ {
			if !sources[s] {
				continue
			}
			if why, at := w.Resolve(s); why != lft.Delivered {
				return fmt.Errorf("flitsim: switch %q to %s (LID %d): %s at switch %q: %w",
					n.g.SwitchName(s), n.NodeName(int32(d)), dlid, why, n.g.SwitchName(at), ErrUnroutable)
			}
		}
	}
	return nil
}

// Config returns the hardware model with defaults applied.
func (n *Network) Config() Config { return n.cfg }

// Graph returns the compiled fabric.
func (n *Network) Graph() *fabric.Graph { return n.g }

// Routing returns the routing being replayed.
func (n *Network) Routing() *lft.Routing { return n.r }

// NumNodes returns the number of simulated nodes.
func (n *Network) NumNodes() int { return len(n.nodeTerm) }

// NumLinks returns the number of simulated links (channels, injection and
// ejection links).
func (n *Network) NumLinks() int { return int(n.nLinks) }

// NumVLs returns the number of data VLs simulated.
func (n *Network) NumVLs() int { return n.vls }

// NodeSwitch returns the switch node i is cabled to.
func (n *Network) NodeSwitch(i int32) int32 { return n.nodeSw[i] }

// NodeTerm returns the fabric.Graph.Terms index of node i.
func (n *Network) NodeTerm(i int32) int32 { return n.nodeTerm[i] }

// NodeOfTerm returns the node of a fabric.Graph.Terms index, or -1 when
// that terminal is not simulated.
func (n *Network) NodeOfTerm(t int32) int32 { return n.termNode[t] }

// NodeName returns "name[port]" of node i.
func (n *Network) NodeName(i int32) string {
	t := &n.g.Terms[n.nodeTerm[i]]
	return n.g.F.PortName(fabric.PortRef{Node: t.Node, Port: t.Port})
}

// LinkKind returns what link l connects.
func (n *Network) LinkKind(l int32) LinkKind {
	switch {
	case l < n.nChan:
		return Channel
	case l < n.nChan+int32(len(n.nodeTerm)):
		return Inject
	}
	return Eject
}

// LinkName describes link l: `"sw-a"[p] -> "sw-b"[q]`, with node names
// for injection and ejection links.
func (n *Network) LinkName(l int32) string {
	end := func(sw int32, port uint8) string {
		if sw < 0 {
			return n.NodeName(n.lkNode[l])
		}
		return fmt.Sprintf("%q[%d]", n.g.SwitchName(sw), port)
	}
	return end(n.lkSrcSw[l], n.lkSrcPort[l]) + " -> " + end(n.lkDstSw[l], n.lkDstPort[l])
}

// Path returns the links a packet from node src to node dst crosses: its
// injection link, the channels, its ejection link. The routing was checked
// by NewNetwork, so every path exists.
func (n *Network) Path(src, dst int32) []int32 {
	N := int32(len(n.nodeTerm))
	path := []int32{n.nChan + src}
	x := n.nodeSw[src]
	for {
		l, _ := n.outLink(x, n.nodeLID[dst])
		path = append(path, l)
		if l >= n.nChan {
			return path
		}
		x = n.lkDstSw[l]
		if len(path) > int(n.nLinks)+2 { // cannot happen after checkRoutes
			return append(path, n.nChan+N+dst)
		}
	}
}

// hopVL returns the VC (the first of its VL's pool) a packet with SL sl
// uses leaving switch s through port out after entering through port in,
// its VL shifted by off.
func (n *Network) hopVL(s int32, in, out, sl uint8, off uint8) uint8 {
	return (n.r.SL2VL.VL(s, in, out, sl) + off) * uint8(n.pool)
}

// setLanes sets the simulated VLs and the VC layout.
func (n *Network) setLanes(lanes int) error {
	n.lanes, n.pool = lanes, n.cfg.VCsPerVL
	n.vls = lanes * n.pool
	if n.vls > 32 {
		return fmt.Errorf("flitsim: %d VLs × %d VCs per VL exceed 32 VCs: %w", lanes, n.pool, ErrConfig)
	}
	for n.vshift = 0; 1<<n.vshift < n.vls; n.vshift++ {
	}
	return nil
}
