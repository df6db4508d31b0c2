package placement

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// DescribeCAs appends every CA's role to its node description, in the
// form "node0001 HCA-1 role=io", "… role=compute io=(3,1)" or "… role=failed",
// so that a fabric dump carries the placement. The fabric's switches, in
// node GUID order (the order fabric.Compile numbers them in), must be the
// torus nodes in index order (as topo.Torus builds them); the CAs take the
// role of the switch they are cabled to. f is modified in place.
func DescribeCAs(f *fabric.Fabric, a *Assignment) error {
	t := a.P.Torus
	sw := make(map[fabric.NodeID]int)
	for _, id := range f.SortedByGUID() {
		if f.Nodes[id].Kind == fabric.Switch {
			sw[id] = len(sw)
		}
	}
	if len(sw) != t.N() {
		return fmt.Errorf("%w: fabric has %d switches, the %s torus %d nodes", ErrBadParam, len(sw), t, t.N())
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.Kind != fabric.CA {
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			s, ok := sw[n.Ports[p].Peer.Node]
			if !n.Ports[p].Cabled() || !ok {
				continue
			}
			switch role := a.Role(s); role {
			case "compute":
				n.Desc += fmt.Sprintf(" role=compute io=%s", t.Label(a.Of[s]))
			default:
				n.Desc += " role=" + role
			}
			break
		}
	}
	return nil
}
