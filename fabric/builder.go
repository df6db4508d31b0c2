package fabric

import "fmt"

// Builder assembles a Fabric node by node and cable by cable, rejecting
// duplicate node GUIDs, out-of-range ports and ports cabled twice as they
// happen. Parsers and generators use it; Validate checks the rest.
type Builder struct {
	f *Fabric
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder {
	return &Builder{f: &Fabric{byGUID: map[uint64]NodeID{}}}
}

// AddNode adds a node with nports ports (1..MaxPorts). Switch port 0 gets
// the node GUID as its port GUID; set Ports[0].GUID afterwards if the
// fabric reports another.
func (b *Builder) AddNode(kind NodeKind, guid uint64, nports int, desc string) (NodeID, error) {
	if kind != Switch && kind != CA && kind != Router {
		return NoNode, fmt.Errorf("fabric: node 0x%016x: unknown kind %d: %w", guid, kind, ErrKind)
	}
	if nports < 1 || nports > MaxPorts {
		return NoNode, fmt.Errorf("fabric: node 0x%016x: %d ports, expected 1..%d: %w", guid, nports, MaxPorts, ErrPortRange)
	}
	if guid == 0 {
		return NoNode, fmt.Errorf("fabric: node %q: GUID 0 is not a valid node GUID: %w", desc, ErrGUID)
	}
	if old, dup := b.f.byGUID[guid]; dup {
		return NoNode, fmt.Errorf("fabric: node GUID 0x%016x used twice (%s and %s): %w",
			guid, NodeIDString(b.f.Nodes[old].Kind, guid), NodeIDString(kind, guid), ErrDuplicateGUID)
	}
	id := NodeID(len(b.f.Nodes))
	ports := make([]Port, nports+1)
	for i := range ports {
		ports[i].Peer = NoPeer
	}
	if kind == Switch {
		ports[0].GUID = guid
	}
	b.f.Nodes = append(b.f.Nodes, Node{Kind: kind, GUID: guid, Desc: desc, Ports: ports})
	b.f.byGUID[guid] = id
	b.f.indexed = len(b.f.Nodes)
	return id, nil
}

// Node gives access to a node added earlier (to set LIDs, GUIDs, widths…).
func (b *Builder) Node(id NodeID) *Node { return &b.f.Nodes[id] }

// Lookup finds a node added earlier by GUID.
func (b *Builder) Lookup(guid uint64) (NodeID, bool) {
	id, ok := b.f.byGUID[guid]
	return id, ok
}

// Len returns the number of nodes added so far.
func (b *Builder) Len() int { return len(b.f.Nodes) }

// Connect cables port a to port c. Both must exist, be non-zero, and be
// free, unless they are already cabled to each other (then it is a no-op,
// so a dump that lists each cable from both ends can call it twice).
func (b *Builder) Connect(a, c PortRef) error {
	for _, r := range [2]PortRef{a, c} {
		if r.Node < 0 || int(r.Node) >= len(b.f.Nodes) {
			return fmt.Errorf("fabric: connect: no node %d: %w", r.Node, ErrPortRange)
		}
		n := &b.f.Nodes[r.Node]
		if r.Port == 0 || int(r.Port) > n.NumPorts() {
			return fmt.Errorf("fabric: %s: port %d, expected 1..%d: %w", b.f.PortName(r), r.Port, n.NumPorts(), ErrPortRange)
		}
	}
	pa, pc := b.f.Port(a), b.f.Port(c)
	if pa.Peer == c && pc.Peer == a {
		return nil
	}
	if a == c {
		return fmt.Errorf("fabric: %s cabled to itself: %w", b.f.PortName(a), ErrCabledTwice)
	}
	for _, x := range [2]struct {
		r, want PortRef
		p       *Port
	}{{a, c, pa}, {c, a, pc}} {
		if x.p.Peer.Node >= 0 && x.p.Peer != x.want {
			return fmt.Errorf("fabric: %s cabled twice: to %s and to %s: %w",
				b.f.PortName(x.r), b.f.PortName(x.p.Peer), b.f.PortName(x.want), ErrCabledTwice)
		}
	}
	pa.Peer, pc.Peer = c, a
	return nil
}

// Fabric returns the fabric built so far. The builder must not be used
// afterwards.
func (b *Builder) Fabric() *Fabric {
	f := b.f
	b.f = nil
	return f
}
