package fabric

import (
	"fmt"
	"sort"
)

// NodeID indexes Fabric.Nodes.
type NodeID int32

// NoNode marks an unconnected port's peer.
const NoNode NodeID = -1

// MaxPorts is the largest port number InfiniBand allows on a node.
const MaxPorts = 254

// MaxUnicastLID is the top of the unicast LID range (0x0001–0xBFFF).
const MaxUnicastLID = 0xBFFF

// PortRef names one port of one node.
type PortRef struct {
	Node NodeID
	Port uint8
}

// Valid reports whether the reference names a node (it may still be out of
// range for a particular fabric).
func (r PortRef) Valid() bool { return r.Node >= 0 }

// NoPeer is the Peer of an uncabled port.
var NoPeer = PortRef{Node: NoNode}

// Port is one physical port. Switch ports share the LID of port 0; CA and
// router ports each have their own base LID and LMC.
type Port struct {
	GUID  uint64  // port GUID; 0 when unknown (switch ports other than 0)
	LID   uint16  // base LID: switch port 0 and CA/router ports; 0 = unassigned
	LMC   uint8   // LID mask control: the port answers 2^LMC LIDs from LID
	Width Width   // active width as reported by this end
	Speed Speed   // active speed as reported by this end
	Ext   int     // external (front panel) port number from "[ext N]"; 0 = none
	Peer  PortRef // the other end of the cable, NoPeer if uncabled
	Info  string  // extra text after width/speed ("s=4 w=2 v=4", "slot 3"), kept verbatim
}

// Cabled reports whether a cable is plugged into the port.
func (p *Port) Cabled() bool { return p.Peer.Node >= 0 }

// Node is a switch, CA or router. Ports is indexed by port number and has
// NumPorts()+1 entries; Ports[0] is the switch management port (its LID is
// the switch's LID) and is unused on CAs and routers.
type Node struct {
	Kind         NodeKind
	GUID         uint64 // node GUID
	SysImageGUID uint64 // 0 = not reported
	VendorID     uint32
	DeviceID     uint32
	Desc         string // node description
	Enhanced     bool   // switch: enhanced port 0 (else base port 0)
	Ports        []Port
	Annot        Annot // ibnetdiscover grouping/chassis data, kept for round trips
}

// NumPorts returns the node's declared number of ports.
func (n *Node) NumPorts() int { return len(n.Ports) - 1 }

// LID returns a switch's LID (port 0) or the base LID of a CA's first
// cabled port; 0 if none.
func (n *Node) LID() uint16 {
	if n.Kind == Switch {
		return n.Ports[0].LID
	}
	for i := 1; i < len(n.Ports); i++ {
		if n.Ports[i].Cabled() {
			return n.Ports[i].LID
		}
	}
	return 0
}

// Annot keeps what ibnetdiscover prints in grouping mode (-g) and other
// details that routing does not need, so that a dump read and written back
// describes the same fabric. The zero value means "none".
type Annot struct {
	Group       string // section the node was listed under, e.g. "Spine Nodes"
	ChassisNum  int    // "# Chassis N" after sysimgguid
	ChassisName string // "(name)" after the chassis number
	ChassisSlot string // text after "switchguid=…(…)\t# " (chassis type and slot)
	SCP         bool   // " (scp)" after a CA header (Xsigo)
	XsigoSlot   int    // " slot N" ending the "# Chassis N (name)" comment (Xsigo TCA); 0 = none
}

// Chassis is one "Chassis N (guid 0x…)" heading of a grouped dump.
type Chassis struct {
	Num      int
	GUID     uint64
	Hostname string // "Hostname: …" line (Xsigo), if any
}

// Fabric is a whole fabric. Nodes are addressed by NodeID (index into Nodes).
type Fabric struct {
	Nodes   []Node
	Chassis []Chassis // grouped-dump chassis headings, in file order
	Header  []string  // leading comment lines (without "#"), kept for round trips

	byGUID  map[uint64]NodeID
	indexed int // len(Nodes) when byGUID was last built
}

// Node returns the node with the given id.
func (f *Fabric) Node(id NodeID) *Node { return &f.Nodes[id] }

// Port returns the port named by r.
func (f *Fabric) Port(r PortRef) *Port { return &f.Nodes[r.Node].Ports[r.Port] }

// NodeByGUID finds a node by node GUID (the first one, should the GUID be
// used twice). The index behind it is built lazily and rebuilt when the
// node count changes or a hit turns out stale; after changing GUIDs in
// place without adding or removing nodes, a GUID newly given to a node may
// still be missed. Because it may rebuild the index, NodeByGUID is a
// mutation for the purpose of concurrent use.
func (f *Fabric) NodeByGUID(guid uint64) (NodeID, bool) {
	if f.byGUID == nil || f.indexed != len(f.Nodes) {
		f.reindex()
	}
	id, ok := f.byGUID[guid]
	if ok && (int(id) >= len(f.Nodes) || f.Nodes[id].GUID != guid) {
		f.reindex()
		id, ok = f.byGUID[guid]
	}
	return id, ok
}

func (f *Fabric) reindex() {
	f.byGUID = make(map[uint64]NodeID, len(f.Nodes))
	f.indexed = len(f.Nodes)
	for i := range f.Nodes {
		if _, dup := f.byGUID[f.Nodes[i].GUID]; !dup {
			f.byGUID[f.Nodes[i].GUID] = NodeID(i)
		}
	}
}

// Count returns the number of nodes of a kind.
func (f *Fabric) Count(k NodeKind) int {
	n := 0
	for i := range f.Nodes {
		if f.Nodes[i].Kind == k {
			n++
		}
	}
	return n
}

// Link is one cable, named by its two ends with A < B (node, then port).
type Link struct {
	A, B PortRef
}

// Links lists every cable once, in order of the lower end (node id, port).
// A loopback cable (both ends on one node) is listed once.
func (f *Fabric) Links() []Link {
	var ls []Link
	for i := range f.Nodes {
		n := &f.Nodes[i]
		for p := 1; p < len(n.Ports); p++ {
			peer := n.Ports[p].Peer
			if peer.Node < 0 {
				continue
			}
			me := PortRef{NodeID(i), uint8(p)}
			if less(me, peer) {
				ls = append(ls, Link{A: me, B: peer})
			}
		}
	}
	return ls
}

func less(a, b PortRef) bool {
	if a.Node != b.Node {
		return a.Node < b.Node
	}
	return a.Port < b.Port
}

// Name returns a short readable name of a node: its description when it
// has one, else its ibnetdiscover id ("S-0002c90000000001").
func (f *Fabric) Name(id NodeID) string {
	n := &f.Nodes[id]
	if n.Desc != "" {
		return n.Desc
	}
	return NodeIDString(n.Kind, n.GUID)
}

// PortName returns "name[port]" for messages.
func (f *Fabric) PortName(r PortRef) string {
	return fmt.Sprintf("%q[%d]", f.Name(r.Node), r.Port)
}

// NodeIDString formats the ibnetdiscover node id: "S-" + 16 hex digits.
func NodeIDString(k NodeKind, guid uint64) string {
	return fmt.Sprintf("%c-%016x", k.Prefix(), guid)
}

// Clone returns a deep copy.
func (f *Fabric) Clone() *Fabric {
	g := &Fabric{
		Nodes:   make([]Node, len(f.Nodes)),
		Chassis: append([]Chassis(nil), f.Chassis...),
		Header:  append([]string(nil), f.Header...),
	}
	for i := range f.Nodes {
		g.Nodes[i] = f.Nodes[i]
		g.Nodes[i].Ports = append([]Port(nil), f.Nodes[i].Ports...)
	}
	return g
}

// SortedByGUID returns the node ids ordered by (kind, node GUID): an order
// independent of insertion. Compile numbers switches and terminals in it,
// as ibnetdiscover lists nodes in the order its discovery from one host
// meets them and a fabric must route the same whatever host dumped it.
func (f *Fabric) SortedByGUID() []NodeID {
	ids := make([]NodeID, len(f.Nodes))
	for i := range ids {
		ids[i] = NodeID(i)
	}
	sort.Slice(ids, func(a, b int) bool {
		na, nb := &f.Nodes[ids[a]], &f.Nodes[ids[b]]
		if na.Kind != nb.Kind {
			return na.Kind < nb.Kind
		}
		if na.GUID != nb.GUID {
			return na.GUID < nb.GUID
		}
		return ids[a] < ids[b] // only with duplicate GUIDs (invalid)
	})
	return ids
}
