package plan

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Empty returns the routing a fabric has before any tables are written:
// every entry NoPort, SL 0, identity SL2VL. Initial plans start from it.
func Empty(g *fabric.Graph) *lft.Routing { return lft.New(g, "none") }

// Initial returns the plan of a first publication. Nothing was routed
// before, so no packet is in flight: SL2VL tables and SLs are written
// first (every packet still dies at its first switch), a barrier lets the
// packets sent with the old SLs go, then every LFT entry is written at
// once in any order: a packet meets either no route or a prefix of its
// new path on its new VLs, so no state loops or creates a dependency the
// new tables lack. Verify it against Empty(g).
func Initial(g *fabric.Graph, new *lft.Routing) (*Plan, error) {
	d, err := lft.Diff(g, Empty(g), new)
	if err != nil {
		return nil, fmt.Errorf("plan: initial: %w", err)
	}
	one := OneShot(d)
	p := &Plan{AllowReorder: true, MaxVLs: new.NumVLs} // no pair had packets before: nothing to reorder
	if len(one.Steps) == 0 {
		return p, nil
	}
	s := one.Steps[0]
	if len(s.SL)+len(s.SL2VL) > 0 {
		p.Steps = append(p.Steps,
			Step{Kind: Write, Note: "initial SL2VL tables and path SLs (no routes yet)", SL: s.SL, SL2VL: s.SL2VL, NewDefault: s.NewDefault},
			Step{Kind: Barrier, Note: "packets sent with the default SLs drain"})
	}
	if len(s.LFT) > 0 {
		p.Steps = append(p.Steps, Step{Kind: Write, Note: "initial tables: every LFT entry at once", LFT: s.LFT})
	}
	return p, nil
}

// FullDrain returns the safe fallback of any reroute between two safe
// routings, the two-phase drain: pause every pair towards a changed
// destination (every pair when SL2VL tables change), wait until their
// packets have left the fabric, write everything, resume. It costs a
// traffic stop for those pairs but needs no VLs and no ordering.
func FullDrain(g *fabric.Graph, d *lft.Delta) *Plan {
	w := OneShot(d)
	if len(w.Steps) == 0 {
		return w
	}
	w.Steps[0].Note = "drain phase: every write at once while the affected pairs are paused"
	dests := map[int]bool{}
	for _, lid := range d.ChangedDests() {
		dests[lid] = true
	}
	for _, c := range d.SL {
		dests[c.DLID] = true
	}
	all := len(d.SL2VL) > 0
	var srcs []int32
	nsrc := make([]int64, g.NumSwitches())
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if nsrc[s] = int64(g.TermOff[s+1] - g.TermOff[s]); nsrc[s] > 0 {
			srcs = append(srcs, s)
		}
	}
	var paused []Paused
	var total int64
	for _, lid := range destLIDs(g) {
		if !all && !dests[lid] {
			continue
		}
		pa := Paused{DLID: int32(lid), Sources: srcs}
		for _, s := range srcs {
			pa.Pairs += nsrc[s]
		}
		if _, term := g.Owner(lid); term >= 0 {
			pa.Pairs-- // the destination does not send to itself
		}
		total += pa.Pairs
		paused = append(paused, pa)
	}
	p := &Plan{AllowReorder: false, MaxVLs: max(d.OldVLs, d.NewVLs), ChangedPairs: total}
	p.Steps = []Step{
		{Kind: Pause, Note: fmt.Sprintf("drain phase: stop %d pairs, wait until their packets left the fabric", total), Paused: paused},
		w.Steps[0],
		{Kind: Resume, Note: "drain phase ends", Paused: paused},
	}
	return p
}
