package dfsssp

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
)

// dest is one destination LID: the switch it hangs on and the port there
// (0 for a switch's own LID).
type dest struct {
	lid  int32
	sw   int32
	port uint8
	lmc  uint8 // the destination port's LMC
	term int32 // terminal index, -1 for a switch LID
	job  int32 // SAR: the terminal's job, -1 for none
}

// plan is what both engines derive from the fabric before routing: the
// destination order, the switches' LID counts and the source order.
type plan struct {
	g     *fabric.Graph
	S     int
	dests []dest // in OpenSM's processing order
	// lids[s]: LIDs answered on switch s — its terminals' LIDs plus its own
	// (OpenSM's num_hca). P = Σ lids.
	lids []int64
	P    int64
	// srcRank[s]: position of switch s in the sorted switch list (most
	// LIDs first, ties in switch-table order); paths are listed source by source in this
	// order, as OpenSM's port_order_list does.
	srcRank []int32
	// vsw[1..S]: switches in OpenSM's switch-table order (a map keyed by
	// the node GUID in network byte order, so ascending byte-reversed
	// GUIDs); vsw[0] is unused. vid is the inverse.
	vsw, vid []int32
	// SAR (seed 001 §3): jobLids[j][s] are job j's terminal LIDs on
	// switch s; only destinations inside jobs add balancing load, and only
	// their own job's. nil without SAR.
	jobLids [][]int64
	// mult[s]: source LIDs a path from switch s stands for in the CDG
	// counts: its terminals' LIDs. A switch without terminals has 0 (its
	// paths are in no CDG, as in OpenSM) unless switch sources are asked
	// for, then 1 (its own LID).
	mult []int64
}

// newPlan orders destinations as OpenSM's dfsssp_do_dijkstra_routing:
// switches by LID count (descending; ties in switch-table order, as
// glibc's stable qsort leaves them), each switch's terminal
// ports in port order with their LMC ranges, then every switch LID in the
// same switch order. Terminals without a LID or not cabled to a switch are
// no destinations. O(S log S + terminals).
func newPlan(g *fabric.Graph, switchSources bool) (*plan, error) {
	S := g.NumSwitches()
	p := &plan{g: g, S: S, lids: make([]int64, S), srcRank: make([]int32, S), mult: make([]int64, S)}
	for s := int32(0); int(s) < S; s++ {
		sp := &g.F.Nodes[g.Switches[s]].Ports[0]
		var own int64
		for _, t := range g.TermsOf(s) {
			own += 1 << g.Terms[t].LMC
		}
		p.lids[s] = own + 1<<sp.LMC
		p.P += p.lids[s]
		p.mult[s] = own
		if switchSources {
			p.mult[s] = max(own, 1)
		}
	}
	p.vsw = make([]int32, S+1)
	p.vid = make([]int32, S)
	for i := range S {
		p.vsw[i+1] = int32(i)
	}
	netGUID := func(s int32) uint64 { return bits.ReverseBytes64(g.F.Nodes[g.Switches[s]].GUID) }
	slices.SortFunc(p.vsw[1:], func(a, b int32) int {
		if ga, gb := netGUID(a), netGUID(b); ga != gb {
			if ga < gb {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	for v := 1; v <= S; v++ {
		p.vid[p.vsw[v]] = int32(v)
	}
	sorted := append([]int32(nil), p.vsw[1:]...)
	slices.SortStableFunc(sorted, func(a, b int32) int {
		switch {
		case p.lids[a] > p.lids[b]:
			return -1
		case p.lids[a] < p.lids[b]:
			return 1
		}
		return 0
	})
	for i, s := range sorted {
		p.srcRank[s] = int32(i)
	}
	var ports []int32
	for _, s := range sorted {
		ports = append(ports[:0], g.TermsOf(s)...)
		slices.SortFunc(ports, func(a, b int32) int { return int(g.Terms[a].SwitchPort) - int(g.Terms[b].SwitchPort) })
		for _, t := range ports {
			tm := &g.Terms[t]
			if tm.LID == 0 {
				continue
			}
			for l := 0; l < 1<<tm.LMC; l++ {
				p.dests = append(p.dests, dest{lid: int32(tm.LID) + int32(l), sw: s, port: tm.SwitchPort, lmc: tm.LMC, term: t, job: -1})
			}
		}
	}
	for _, s := range sorted {
		sp := &g.F.Nodes[g.Switches[s]].Ports[0]
		if sp.LID == 0 {
			continue
		}
		for l := 0; l < 1<<sp.LMC; l++ {
			p.dests = append(p.dests, dest{lid: int32(sp.LID) + int32(l), sw: s, lmc: sp.LMC, term: -1, job: -1})
		}
	}
	for _, d := range p.dests {
		if int(d.lid) > g.MaxLID() {
			return nil, fmt.Errorf("dfsssp: LID %d beyond the fabric's highest LID %d", d.lid, g.MaxLID())
		}
	}
	return p, nil
}

// applyJobs makes the plan scheduling-aware: destinations inside jobs go
// first (in their previous order), the rest after them, and each job's
// terminal LIDs per switch are counted for its balancing load.
func (p *plan) applyJobs(jobs []routing.Job) {
	g := p.g
	of := routing.JobOf(jobs, len(g.Terms))
	p.jobLids = make([][]int64, len(jobs))
	for j := range p.jobLids {
		p.jobLids[j] = make([]int64, p.S)
	}
	for t, tm := range g.Terms {
		if j := of[t]; j >= 0 && tm.Switch >= 0 && tm.LID != 0 {
			p.jobLids[j][tm.Switch] += 1 << tm.LMC
		}
	}
	for i := range p.dests {
		if t := p.dests[i].term; t >= 0 {
			p.dests[i].job = of[t]
		}
	}
	slices.SortStableFunc(p.dests, func(a, b dest) int {
		ia, ib := a.job >= 0, b.job >= 0
		switch {
		case ia && !ib:
			return -1
		case !ia && ib:
			return 1
		}
		return 0
	})
}
