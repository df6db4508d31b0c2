package routing

import (
	"context"
	"errors"
	"fmt"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// ErrNoRepair means Repair could not keep the old routing's structure; a
// full routing is needed.
var ErrNoRepair = errors.New("no minimal repair")

// RepairStats says what Repair changed.
type RepairStats struct {
	Dests   int // destinations whose paths the fabric change broke
	Breaks  int // (switch, destination) entries that led into a failed cable or switch
	Changed int // LFT entries rewritten
	// Improved counts the entries of Changed moved onto cables that came
	// back (RepairOptions.Before), where they shorten paths.
	Improved int
	// Walked counts the destinations whose trees the repair walked: every
	// one, or with RepairOptions.State only those the change broke.
	Walked int
	// SLs counts (source switch, destination) SLs changed: with SLs
	// chosen per source, a repaired path may move to another VL.
	SLs int
}

// Repair returns old adapted to g, a fabric that differs from the one old
// was computed for by failed (or returned) cables and switches, changing
// as few entries as it can. An entry is a break point when it leads into
// a cable or switch that is gone; the switches whose paths run into a
// break point are re-attached to the intact part of the destination's
// tree, keeping their own entry wherever its path can be restored, and
// only where the new channel dependencies keep the CDG of every VL
// acyclic (see repairDest). Every other entry is kept, and so are the SLs
// and SL2VL maps, except that a repaired path may move to another VL the
// routing already uses (per source with per-source SLs, the whole
// destination with per-destination SLs), so the VLs stay within the limit
// old met.
//
// The CDG is the one cdg.Verify checks: the dependencies of the traffic
// CA and router ports send, on the VL of its SL. SLs may depend on the
// destination (Nue, SAR-Nue, MinHop, Up*/Down*) or on the source switch
// and the destination (DFSSSP, SAR-DFSSSP, LASH). Switches take the place
// of their GUIDs in old: a failed switch's table drops out, and a switch
// old has no table for (one that came back) gets one, as do the LIDs it
// answers. A returned cable carries traffic only with RepairWith and
// RepairOptions.Before; Repair(g, before) with the routing from before a
// failure returns it unchanged once the fabric is whole again.
//
// Repair fails with ErrNoRepair when old has per-pair SL exceptions or
// per-port SL2VL tables (the VL of a hop then depends on more than the
// SL), when old's CDG already has a cycle, or when some switch finds no
// path that keeps the CDG acyclic; a full routing is then needed. The
// entries of switches that a failure cut off from a destination stay as
// they are: they lead into the failed cable, and nothing can reach the
// destination from there. The result must still be verified
// (cdg.Verify).
//
// Cost: one pass over every (switch, LID) entry in blocks of LIDs, which
// walks each destination's tree once and collects the CDG (parallel over
// blocks); a topological sort per VL; then, per broken destination,
// O(switches) plus the Pearce–Kelly insertions of its new dependencies.
// With RepairOptions.State the pass over every entry becomes a comparison
// of the tables with the State's and walks of the broken destinations
// only. Deterministic: the same fabric and tables give the same result.
func Repair(ctx context.Context, g *fabric.Graph, old *lft.Routing) (*lft.Routing, RepairStats, error) {
	return RepairWith(ctx, g, old, RepairOptions{})
}

// RepairOptions refine RepairWith.
type RepairOptions struct {
	// Before is the fabric old was computed for. Given it, the cables of g
	// that Before lacks (repaired or added cables, and the cables of a
	// switch that came back) take over the traffic whose paths they
	// shorten, where the CDG allows (see improve); without it a returned
	// cable carries nothing until the next full routing.
	Before *fabric.Graph
	// State is the verifier's State of old (routing.VerifyState, the
	// daemon's last verification). When old's tables are the State's and g
	// its fabric less some cables and switches, the repair takes the CDG
	// of the destinations the change did not break from it and walks only
	// the broken ones (cdg.State.RepairBase): the same tables as without.
	State *cdg.State
}

// RepairWith is Repair with options.
func RepairWith(ctx context.Context, g *fabric.Graph, old *lft.Routing, opt RepairOptions) (*lft.Routing, RepairStats, error) {
	var st RepairStats
	if len(old.SL.Pair) > 0 || !old.SL2VL.Uniform() {
		return nil, st, fmt.Errorf("%w: per-pair SLs or per-port SL2VL tables", ErrNoRepair)
	}
	if len(old.SL.ByDest) != old.Stride || (old.SL.BySrc != nil && len(old.SL.BySrc) != len(old.Switches)*old.Stride) {
		return nil, st, fmt.Errorf("%w: SL tables of %d and %d entries for %d switches × %d LIDs",
			ErrNoRepair, len(old.SL.ByDest), len(old.SL.BySrc), len(old.Switches), old.Stride)
	}
	maxVL := old.MaxVL()
	if maxVL >= lft.MaxVLs {
		return nil, st, fmt.Errorf("%w: an SL in use maps to VL %d, beyond the data VLs", ErrNoRepair, maxVL)
	}
	r, fresh, err := adopt(g, old)
	if err != nil {
		return nil, st, err
	}
	st.Changed = deliverLocal(g, r)
	var rv []bool
	if opt.Before != nil {
		rv = revived(g, opt.Before)
	}
	rp := newRepairer(g, r, maxVL+1, fresh, rv)
	turns, dests, walked, err := rp.scanFrom(ctx, opt)
	if err != nil {
		return nil, st, err
	}
	st.Walked = walked
	var chans []int32
	if opt.Before != nil {
		chans = newChannels(g, opt.Before)
	}
	if len(dests) == 0 && len(chans) == 0 && st.Changed == 0 {
		return r, st, nil
	}
	ly, bad, err := newRepairLayers(ctx, rp.ts, turns)
	if err != nil {
		return nil, st, err
	}
	if bad >= 0 {
		return nil, st, fmt.Errorf("%w: the dependencies of VL %d already form a cycle", ErrNoRepair, bad)
	}
	rp.ly = ly
	for i := range dests {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, st, ctx.Err()
		}
		st.Dests++
		st.Breaks += dests[i].breaks
		n, err := rp.repairDest(&dests[i])
		st.Changed += n
		st.SLs = rp.slChanged
		if err != nil {
			return nil, st, err
		}
	}
	if len(chans) > 0 {
		n, err := rp.improve(ctx, chans)
		if err != nil {
			return nil, st, err
		}
		st.Improved = n
		st.Changed += n
	}
	return r, st, nil
}

// repairer is the state of one Repair call.
type repairer struct {
	g     *fabric.Graph
	r     *lft.Routing
	ts    *turnSpace
	vls   int     // VLs the routing's SLs map to (highest + 1)
	comp  []int32 // switch -> component of the switch graph
	fresh []bool  // switch -> its table is new
	// revived marks the LIDs the fabric before did not answer (nil:
	// unknown).
	revived []bool
	ly      *repairLayers
	// Scratch of the per-destination repair.
	tree  *destTree
	col   []uint8
	dist  []int32
	heap  []uint64
	slack int32 // hops a switch's own entry may add over other candidates
	queue []int32
	cands []uint64
	from  []int32 // per switch: the channel a detour search reached it by
	keep  bool    // only break points change (settleMode.keep)
	via   int32   // with keep: the break point's channel (-1: any)
	vias  []uint64
	// bfs holds the fabric's hops to the destination at hand (keepBreaks);
	// seen marks the switches near reaches (stamp: this search).
	bfs   []int32
	seen  []uint32
	stamp uint32
	// Per-source SLs: the destination's column being repaired (nil for
	// per-destination SLs), its buffer, and an SL for each VL.
	src, srcBuf []uint8
	slOf        [lft.NumSLs]uint8
	slChanged   int
}

// noSL marks a VL no SL maps to.
const noSL = 0xFF

func newRepairer(g *fabric.Graph, r *lft.Routing, vls int, fresh, revived []bool) *repairer {
	S := g.NumSwitches()
	rp := &repairer{g: g, r: r, ts: newTurnSpace(g), vls: vls, comp: g.SwitchComponents(), fresh: fresh, revived: revived,
		col: make([]uint8, S), dist: make([]int32, S), from: make([]int32, S), srcBuf: make([]uint8, S)}
	rp.tree = rp.newDestTree()
	for vl := range rp.slOf {
		rp.slOf[vl] = noSL
	}
	for sl := lft.NumSLs - 1; sl >= 0; sl-- {
		rp.slOf[r.SL2VL.Default[sl]&0xF] = uint8(sl)
	}
	return rp
}

// adopt returns a copy of old laid out for g: the table of each of g's
// switches is old's table of the switch with the same GUID. fresh marks
// the switches old has no table for (every entry NoPort, to be routed);
// when they are more than half, old is for another fabric (ErrNoRepair).
func adopt(g *fabric.Graph, old *lft.Routing) (*lft.Routing, []bool, error) {
	S := g.NumSwitches()
	fresh := make([]bool, S)
	if old.CheckShape(g) == nil {
		return old.Clone(), fresh, nil
	}
	if old.NumVLs < 1 || old.NumVLs > lft.MaxVLs {
		return nil, nil, fmt.Errorf("%w: %d VLs", ErrNoRepair, old.NumVLs)
	}
	at := make(map[uint64]int32, len(old.Switches))
	for i, guid := range old.Switches {
		at[guid] = int32(i)
	}
	r := lft.New(g, old.Engine)
	r.NumVLs = old.NumVLs
	r.SL2VL.Default = old.SL2VL.Default
	copy(r.SL.ByDest, old.SL.ByDest)
	if old.SL.BySrc != nil {
		r.SL.EnableBySrc(S)
	}
	n, nfresh := min(r.Stride, old.Stride), 0
	for s := int32(0); int(s) < S; s++ {
		o, ok := at[r.Switches[s]]
		if !ok {
			fresh[s] = true
			nfresh++
			continue
		}
		copy(r.Row(s)[:n], old.Row(o)[:n])
		if old.SL.BySrc != nil {
			copy(r.SL.SrcRow(s)[:n], old.SL.SrcRow(o)[:n])
		}
	}
	if 2*nfresh > S { // another fabric: route it afresh
		return nil, nil, fmt.Errorf("%w: the old routing has tables for %d of the fabric's %d switches", ErrNoRepair, S-nfresh, S)
	}
	return r, fresh, nil
}

// revived marks the LIDs g answers and before did not.
func revived(g, before *fabric.Graph) []bool {
	out := make([]bool, g.MaxLID()+1)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		sw, term := g.Owner(lid)
		if sw < 0 && term < 0 {
			continue
		}
		sw0, term0 := before.Owner(lid)
		out[lid] = sw0 < 0 && term0 < 0
	}
	return out
}

// deliverLocal points every switch's entries for its own LIDs at port 0
// and those for its terminals' LIDs at their ports (a switch or CA that
// came back) and returns the entries it changed.
func deliverLocal(g *fabric.Graph, r *lft.Routing) int {
	n := 0
	set := func(s int32, lid int, p uint8) {
		if lid <= r.MaxLID() && r.Port(s, lid) != p {
			r.SetPort(s, lid, p)
			n++
		}
	}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		p0 := &g.F.Nodes[g.Switches[s]].Ports[0]
		for l := int(p0.LID); p0.LID != 0 && l < int(p0.LID)+1<<p0.LMC; l++ {
			set(s, l, 0)
		}
		for _, ti := range g.TermsOf(s) {
			t := &g.Terms[ti]
			for l := int(t.LID); t.LID != 0 && l < int(t.LID)+1<<t.LMC; l++ {
				set(s, l, t.SwitchPort)
			}
		}
	}
	return n
}
