package fabric

import (
	"errors"
	"fmt"
)

// Graph is the dense, read-only view of a fabric that routing engines work
// on. Switches are numbered 0..NumSwitches()-1 in node GUID order (see
// SortedByGUID), not in the dump's order, so that one fabric dumped from
// any host gets the same numbering and the same tables. A channel is
// one direction of one switch-to-switch cable; the channels leaving switch s
// are the contiguous ids Off[s] .. Off[s+1]-1, in port order, so Head is the
// CSR adjacency of the switch graph. Parallel cables are distinct channels;
// loopback cables (both ends on one switch) are left out.
//
// Terminals are the LID-bearing ports of CAs and routers. A Graph is safe
// for concurrent use; its slices must not be modified.
type Graph struct {
	F *Fabric

	Switches []NodeID // switch index -> node id
	SwitchOf []int32  // node id -> switch index, -1 for CAs and routers

	Off     []int32 // CSR offsets, len NumSwitches()+1
	Head    []int32 // channel -> switch it enters
	Tail    []int32 // channel -> switch it leaves
	OutPort []uint8 // channel -> port number on Tail
	InPort  []uint8 // channel -> port number on Head
	Rev     []int32 // channel -> the opposite direction of the same cable

	Terms   []Terminal // CA and router ports that are cabled, by node kind, GUID and port
	TermOff []int32    // terminals on switch s: TermAt[TermOff[s]:TermOff[s+1]]
	TermAt  []int32    // terminal indices grouped by switch

	Loopbacks int // loopback cables left out of the channel set

	portOff  []int32 // per switch: offset into portChan (len NumSwitches()+1)
	portChan []int32 // (switch, port) -> channel leaving through it, or -1
	lidOwner []int32 // LID -> owner: <S switch index, >=S terminal index+S, -1 none
}

// Terminal is one CA or router port with its LIDs and its attachment.
type Terminal struct {
	Node       NodeID
	Port       uint8
	LID        uint16 // base LID (0 = unassigned)
	LMC        uint8
	Switch     int32 // switch the port is cabled to, -1 if cabled to a CA/router
	SwitchPort uint8 // port number on that switch
}

// ErrUnroutable marks a fabric that cannot be compiled.
var ErrUnroutable = errors.New("fabric cannot be compiled")

// Compile validates the fabric and builds its dense view. LIDs need not be
// assigned (Owner then does not know the unassigned ports).
func Compile(f *Fabric) (*Graph, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	g := &Graph{F: f, SwitchOf: make([]int32, len(f.Nodes))}
	order := f.SortedByGUID()
	for i := range g.SwitchOf {
		g.SwitchOf[i] = -1
	}
	for _, id := range order {
		if f.Nodes[id].Kind == Switch {
			g.SwitchOf[id] = int32(len(g.Switches))
			g.Switches = append(g.Switches, id)
		}
	}
	S := len(g.Switches)
	g.Off = make([]int32, S+1)
	g.portOff = make([]int32, S+1)
	for s, id := range g.Switches {
		n := &f.Nodes[id]
		g.portOff[s+1] = g.portOff[s] + int32(len(n.Ports))
		cnt := int32(0)
		for p := 1; p < len(n.Ports); p++ {
			peer := n.Ports[p].Peer
			if peer.Node < 0 || f.Nodes[peer.Node].Kind != Switch {
				continue
			}
			if peer.Node == id {
				if uint8(p) < peer.Port {
					g.Loopbacks++
				}
				continue
			}
			cnt++
		}
		g.Off[s+1] = g.Off[s] + cnt
	}
	C := int(g.Off[S])
	g.Head = make([]int32, C)
	g.Tail = make([]int32, C)
	g.OutPort = make([]uint8, C)
	g.InPort = make([]uint8, C)
	g.Rev = make([]int32, C)
	g.portChan = make([]int32, g.portOff[S])
	for i := range g.portChan {
		g.portChan[i] = -1
	}
	for s, id := range g.Switches {
		n := &f.Nodes[id]
		c := g.Off[s]
		for p := 1; p < len(n.Ports); p++ {
			peer := n.Ports[p].Peer
			if peer.Node < 0 || peer.Node == id || f.Nodes[peer.Node].Kind != Switch {
				continue
			}
			g.Tail[c] = int32(s)
			g.Head[c] = g.SwitchOf[peer.Node]
			g.OutPort[c] = uint8(p)
			g.InPort[c] = peer.Port
			g.portChan[g.portOff[s]+int32(p)] = c
			c++
		}
	}
	for c := range g.Rev {
		g.Rev[c] = g.ChannelAt(g.Head[c], g.InPort[c])
	}
	g.terminals(order)
	return g, nil
}

// terminals lists the CA and router ports in SortedByGUID's order, so
// that terminal indices and each switch's TermsOf follow GUIDs, not the
// dump.
func (g *Graph) terminals(order []NodeID) {
	f := g.F
	S := len(g.Switches)
	g.TermOff = make([]int32, S+1)
	for _, i := range order {
		n := &f.Nodes[i]
		if n.Kind == Switch {
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			pt := &n.Ports[p]
			if !pt.Cabled() {
				continue
			}
			t := Terminal{Node: NodeID(i), Port: uint8(p), LID: pt.LID, LMC: pt.LMC, Switch: g.SwitchOf[pt.Peer.Node]}
			if t.Switch >= 0 {
				t.SwitchPort = pt.Peer.Port
				g.TermOff[t.Switch+1]++
			}
			g.Terms = append(g.Terms, t)
		}
	}
	for s := 0; s < S; s++ {
		g.TermOff[s+1] += g.TermOff[s]
	}
	g.TermAt = make([]int32, g.TermOff[S])
	fill := append([]int32(nil), g.TermOff[:S]...)
	for ti, t := range g.Terms {
		if t.Switch >= 0 {
			g.TermAt[fill[t.Switch]] = int32(ti)
			fill[t.Switch]++
		}
	}
	g.lidOwner = make([]int32, f.MaxLID()+1)
	for i := range g.lidOwner {
		g.lidOwner[i] = -1
	}
	for s, id := range g.Switches {
		p := &f.Nodes[id].Ports[0]
		for l := int(p.LID); p.LID != 0 && l < int(p.LID)+(1<<p.LMC); l++ {
			g.lidOwner[l] = int32(s)
		}
	}
	for ti, t := range g.Terms {
		for l := int(t.LID); t.LID != 0 && l < int(t.LID)+(1<<t.LMC); l++ {
			g.lidOwner[l] = int32(S + ti)
		}
	}
}

// NumSwitches returns the number of switches.
func (g *Graph) NumSwitches() int { return len(g.Switches) }

// NumChannels returns the number of channels (twice the inter-switch cables).
func (g *Graph) NumChannels() int { return len(g.Head) }

// Degree returns the number of channels leaving switch s.
func (g *Graph) Degree(s int32) int { return int(g.Off[s+1] - g.Off[s]) }

// ChannelAt returns the channel leaving switch s through port p, or -1 when
// that port is not cabled to another switch.
func (g *Graph) ChannelAt(s int32, p uint8) int32 {
	i := g.portOff[s] + int32(p)
	if i >= g.portOff[s+1] {
		return -1
	}
	return g.portChan[i]
}

// PortChannels returns the channels leaving switch s by port number (-1:
// the port is not cabled to another switch), as ChannelAt answers for
// every port; the caller must not modify it.
func (g *Graph) PortChannels(s int32) []int32 { return g.portChan[g.portOff[s]:g.portOff[s+1]] }

// TermsOf returns the terminal indices attached to switch s, ascending
// (in Terms' order: by node kind, GUID and port; not by switch port).
func (g *Graph) TermsOf(s int32) []int32 { return g.TermAt[g.TermOff[s]:g.TermOff[s+1]] }

// SwitchLID returns the LID of switch s (0 when unassigned).
func (g *Graph) SwitchLID(s int32) uint16 { return g.F.Nodes[g.Switches[s]].Ports[0].LID }

// MaxLID returns the highest LID any endpoint answers.
func (g *Graph) MaxLID() int { return len(g.lidOwner) - 1 }

// Owner tells who answers a LID: a switch (sw >= 0, term = -1), a terminal
// (term >= 0, sw = its attached switch or -1), or nobody (both -1).
func (g *Graph) Owner(lid int) (sw, term int32) {
	if lid <= 0 || lid >= len(g.lidOwner) || g.lidOwner[lid] < 0 {
		return -1, -1
	}
	o := g.lidOwner[lid]
	if int(o) < len(g.Switches) {
		return o, -1
	}
	t := o - int32(len(g.Switches))
	return g.Terms[t].Switch, t
}

// SwitchName returns the readable name of switch s.
func (g *Graph) SwitchName(s int32) string { return g.F.Name(g.Switches[s]) }

// ChannelName describes channel c as `"sw-a"[p] -> "sw-b"[q]`.
func (g *Graph) ChannelName(c int32) string {
	return fmt.Sprintf("%q[%d] -> %q[%d]", g.SwitchName(g.Tail[c]), g.OutPort[c], g.SwitchName(g.Head[c]), g.InPort[c])
}
