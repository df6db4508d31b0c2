package addressing

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// LFTBlock is the number of LIDs per LFT block (InfiniBand
// LinearForwardingTable attribute: 64 entries per block).
const LFTBlock = 64

// LIDPlan is the InfiniBand analogue of a Shape's addressing: one LID per
// host port and per switch (LMC 0), flat (consecutive from 1) or
// hierarchical (every group starts on its own LFT block, so a group's
// routes occupy blocks of their own).
type LIDPlan struct {
	Endpoints  int // LIDs needed: hosts + switches
	GroupLIDs  int // LIDs of one group (its hosts and switches)
	Groups     int // groups with hosts, plus one for transit switches if any
	FlatMaxLID int
	HierMaxLID int
	// LFT blocks every switch holds (blocks up to the highest LID).
	FlatBlocks, HierBlocks int
	FitsFlat, FitsHier     bool // within the 0xBFFF (48K) unicast limit
	// Subnets is the fewest subnets of at most 48K LIDs the hosts and
	// switches need (1 when it fits), joined by IB routers.
	Subnets int
}

// LIDs plans the LIDs of s. switchesPerGroup counts the group's switches
// (access and transit inside the group); transit switches outside groups
// (Clos cores) form one more group.
func (s Shape) LIDs() LIDPlan {
	perGroup := s.S // switches per group
	if s.Kind == "clos3" {
		perGroup = s.Radix // P/2 access + P/2 aggregation per pod
	}
	return planLIDs(s.G, s.S*s.T+perGroup, s.Switches-s.G*perGroup, s.Hosts+s.Switches)
}

// PlanLIDs is LIDs for a network given directly: groups of groupLIDs
// endpoints each, and extra endpoints outside the groups.
func PlanLIDs(groups, groupLIDs, extra int) LIDPlan {
	return planLIDs(groups, groupLIDs, extra, groups*groupLIDs+extra)
}

func planLIDs(groups, groupLIDs, extra, endpoints int) LIDPlan {
	p := LIDPlan{Endpoints: endpoints, GroupLIDs: groupLIDs, Groups: groups, FlatMaxLID: endpoints}
	blocks := func(n int) int { return (n + LFTBlock - 1) / LFTBlock }
	// As AssignHierarchicalLIDs: LID 0 is reserved, every group after the
	// first starts on a fresh block; the transit switches come last.
	align := func(lid int) int { return blocks(lid) * LFTBlock }
	lid := 1 + groupLIDs
	if groups > 1 {
		lid = align(lid) + (groups-2)*align(groupLIDs) + groupLIDs
	}
	if extra > 0 {
		p.Groups++
		lid = align(lid) + extra
	}
	p.HierMaxLID = lid - 1
	p.FlatBlocks, p.HierBlocks = blocks(p.FlatMaxLID+1), blocks(p.HierMaxLID+1)
	p.FitsFlat = p.FlatMaxLID <= fabric.MaxUnicastLID
	p.FitsHier = p.HierMaxLID <= fabric.MaxUnicastLID
	p.Subnets = (endpoints + fabric.MaxUnicastLID - 1) / fabric.MaxUnicastLID
	return p
}

// LIDRange is the LIDs of one group.
type LIDRange struct{ First, Last int }

// AssignHierarchicalLIDs gives every switch (port 0) and every cabled CA
// or router port of f a LID, group by group (a CA belongs to the group of
// the switch it is cabled to; group indexes switches in fabric switch
// order): the group's switches, then its host ports, and the next group
// starts on a fresh LFT block. LMC becomes 0. Returns each group's LIDs.
// On error f is unchanged.
func AssignHierarchicalLIDs(f *fabric.Fabric, group []int) ([]LIDRange, error) {
	g, err := fabric.Compile(f)
	if err != nil {
		return nil, err
	}
	if len(group) != g.NumSwitches() {
		return nil, fmt.Errorf("addressing: %d group values for %d switches", len(group), g.NumSwitches())
	}
	ng := 0
	for _, v := range group {
		if v < 0 {
			return nil, fmt.Errorf("addressing: negative group %d", v)
		}
		ng = max(ng, v+1)
	}
	type ep struct {
		node fabric.NodeID
		port uint8
	}
	members := make([][]ep, ng)
	for s, id := range g.Switches {
		members[group[s]] = append(members[group[s]], ep{id, 0})
	}
	for _, t := range g.Terms {
		if t.Switch < 0 {
			return nil, fmt.Errorf("addressing: %s is not cabled to a switch", f.PortName(fabric.PortRef{Node: t.Node, Port: t.Port}))
		}
		gr := group[t.Switch]
		members[gr] = append(members[gr], ep{t.Node, t.Port})
	}
	plan := make([]LIDRange, ng)
	lid := 1
	for gr, m := range members {
		if gr > 0 && lid%LFTBlock != 0 {
			lid += LFTBlock - lid%LFTBlock
		}
		plan[gr] = LIDRange{First: lid, Last: lid + len(m) - 1}
		lid += len(m)
	}
	if last := lid - 1; last > fabric.MaxUnicastLID {
		return nil, fmt.Errorf("addressing: hierarchical LIDs reach %d, above the unicast limit %d", last, fabric.MaxUnicastLID)
	}
	for gr, m := range members {
		for i, e := range m {
			p := &f.Nodes[e.node].Ports[e.port]
			p.LID, p.LMC = uint16(plan[gr].First+i), 0
		}
	}
	return plan, nil
}

// BlockStats describes the LFT blocks of a routing: how many hold LIDs of
// one group only (a reroute inside another group leaves them alone) and
// how many send every routed LID through one port (the LFT counterpart of
// a compacted rule).
type BlockStats struct {
	Switches     int
	Blocks       int     // blocks with a routed LID, over all switches
	GroupPure    int     // of them, holding LIDs of a single group
	Uniform      int     // of them, one output port for all routed LIDs
	BlocksPerGrp float64 // mean blocks holding some LID of a group, per switch
}

// Blocks measures r on g with group per switch.
func Blocks(g *fabric.Graph, r *lft.Routing, group []int) (BlockStats, error) {
	if len(group) != g.NumSwitches() {
		return BlockStats{}, fmt.Errorf("addressing: %d group values for %d switches", len(group), g.NumSwitches())
	}
	ng := 0
	for _, v := range group {
		if v < 0 {
			return BlockStats{}, fmt.Errorf("addressing: negative group %d", v)
		}
		ng = max(ng, v+1)
	}
	st := BlockStats{Switches: g.NumSwitches()}
	maxLID := min(r.MaxLID(), g.MaxLID())
	touched := 0
	seen := make([]bool, ng)
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for b := 0; b*LFTBlock <= maxLID; b++ {
			grp, port, routed, pure, uniform := -1, uint8(0), false, true, true
			clear(seen)
			for lid := max(b*LFTBlock, 1); lid < (b+1)*LFTBlock && lid <= maxLID; lid++ {
				sw, _ := g.Owner(lid)
				p := r.Port(s, lid)
				if sw < 0 || p == lft.NoPort {
					continue
				}
				gr := group[sw]
				if !seen[gr] {
					seen[gr] = true
					touched++
				}
				if !routed {
					grp, port, routed = gr, p, true
					continue
				}
				pure = pure && gr == grp
				uniform = uniform && p == port
			}
			if !routed {
				continue
			}
			st.Blocks++
			if pure {
				st.GroupPure++
			}
			if uniform {
				st.Uniform++
			}
		}
	}
	if ng > 0 && st.Switches > 0 {
		st.BlocksPerGrp = float64(touched) / float64(ng*st.Switches)
	}
	return st, nil
}
