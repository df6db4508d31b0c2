package lft

import (
	"math/bits"
	"sort"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
)

// This file holds what the OpenSM-format readers and writers share: the
// fabric's ports as OpenSM names them (type string, port GUID, LID range)
// and OpenSM's output order.

// lidPort is the port that answers a LID range, as the dumps name it.
type lidPort struct {
	kind fabric.NodeKind
	guid uint64 // port GUID (switch: port 0)
	lid  uint16 // base LID
	lmc  uint8
	desc string
}

// portIndex knows every LID-bearing port of a graph: switch port 0 and
// cabled CA/router ports.
type portIndex struct {
	g      *fabric.Graph
	byGUID map[uint64]lidPort
	swByID map[uint64]int32 // switch node GUID -> switch index
}

func newPortIndex(g *fabric.Graph) *portIndex {
	x := &portIndex{
		g:      g,
		byGUID: make(map[uint64]lidPort, g.NumSwitches()+len(g.Terms)),
		swByID: make(map[uint64]int32, g.NumSwitches()),
	}
	for s, id := range g.Switches {
		x.swByID[g.F.Nodes[id].GUID] = int32(s)
	}
	for _, p := range lidPorts(g) {
		if p.guid != 0 {
			x.byGUID[p.guid] = p
		}
	}
	return x
}

// lidPorts lists the LID-bearing ports of g: port 0 of every switch (in
// switch order), then every cabled CA and router port (in g.Terms order).
func lidPorts(g *fabric.Graph) []lidPort {
	ps := make([]lidPort, 0, g.NumSwitches()+len(g.Terms))
	for _, id := range g.Switches {
		n := &g.F.Nodes[id]
		p := &n.Ports[0]
		ps = append(ps, lidPort{kind: fabric.Switch, guid: p.GUID, lid: p.LID, lmc: p.LMC, desc: n.Desc})
	}
	for _, t := range g.Terms {
		n := &g.F.Nodes[t.Node]
		ps = append(ps, lidPort{kind: n.Kind, guid: n.Ports[t.Port].GUID, lid: t.LID, lmc: t.LMC, desc: n.Desc})
	}
	return ps
}

// owner returns the port answering lid, if any.
func (x *portIndex) owner(lid int) (lidPort, bool) {
	sw, term := x.g.Owner(lid)
	switch {
	case term >= 0:
		t := x.g.Terms[term]
		n := &x.g.F.Nodes[t.Node]
		return lidPort{kind: n.Kind, guid: n.Ports[t.Port].GUID, lid: t.LID, lmc: t.LMC, desc: n.Desc}, true
	case sw >= 0:
		n := &x.g.F.Nodes[x.g.Switches[sw]]
		p := &n.Ports[0]
		return lidPort{kind: fabric.Switch, guid: p.GUID, lid: p.LID, lmc: p.LMC, desc: n.Desc}, true
	}
	return lidPort{}, false
}

// remap moves lid into the LID range of the port with GUID guid, the way
// OpenSM's file engine does when LIDs changed since a dump was taken: a
// LID inside the port's range stays, another one becomes base + (lid mod
// 2^LMC). GUID 0, unknown GUIDs and ports without a LID keep the LID.
func (x *portIndex) remap(lid int, guid uint64) int {
	p, ok := x.byGUID[guid]
	if guid == 0 || !ok || p.lid == 0 {
		return lid
	}
	lo, n := int(p.lid), 1<<p.lmc
	if lid >= lo && lid < lo+n {
		return lid
	}
	return lo + lid&(n-1)
}

// nodeTypeString is OpenSM's ib_get_node_type_str.
func nodeTypeString(k fabric.NodeKind) string {
	switch k {
	case fabric.Switch:
		return "Switch"
	case fabric.CA:
		return "Channel Adapter"
	case fabric.Router:
		return "Router"
	}
	return "UNKNOWN"
}

// cleanDesc replaces control characters, which would break the
// line-oriented formats, with spaces.
func cleanDesc(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] < 0x20 || b[j] == 0x7f {
					b[j] = ' '
				}
			}
			return string(b)
		}
	}
	return s
}

// osmOrder sorts items the way OpenSM walks its GUID tables: cl_qmap keyed
// by the GUID in network byte order, compared as a host (little-endian)
// integer, i.e. by the byte-reversed GUID. Writing in this order makes our
// dumps byte-identical to OpenSM's for the same tables.
func osmOrder[T any](items []T, guid func(T) uint64) {
	sort.SliceStable(items, func(i, j int) bool {
		return bits.ReverseBytes64(guid(items[i])) < bits.ReverseBytes64(guid(items[j]))
	})
}

// appendHexPad appends v in lower-case hex, zero-padded to width digits.
func appendHexPad(b []byte, v uint64, width int) []byte {
	var tmp [16]byte
	d := strconv.AppendUint(tmp[:0], v, 16)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// appendDecPad appends v in decimal, zero-padded to width digits.
func appendDecPad(b []byte, v int, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], int64(v), 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}
