package routing

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Ftree is fat-tree routing ("ftree") after Zahavi, Johnson, Kerbyson and
// Lang, "Optimized InfiniBand fat-tree routing for shift all-to-all
// communication patterns", Concurrency Computat.: Pract. Exper. 22(2), 2010,
// §3–4, the algorithm behind OpenSM's ftree engine.
//
// Shape: see ftreeShape; a fabric that is not a fat tree is refused with an
// error wrapping ErrNotApplicable that names the offending switch or cable.
// Options.Root, when set, must name a switch of the top level (a check of
// the recognised shape; the levels come from the leaves).
//
// Indexing (§3): destinations are numbered leaf by leaf in sub-tree order
// (ftreeShape.orderLeaves), the LIDs of a leaf by switch port, then LID;
// switch LIDs follow in LID order.
//
// Routing, per destination in index order:
//
//  1. Main path (the paper's downward routes, assigned going up): from the
//     destination's switch climb to the top; at each switch take the up
//     channel whose parent has routed the fewest destinations down to this
//     switch so far (ties: lowest port), and record that channel's rank
//     among the switch's up channels, per level. These counters make the
//     main paths of consecutive destinations fan out over the parents, the
//     paper's "destination index mod k" spreading.
//  2. Every switch above the destination (one that reaches it descending)
//     routes down: main-path switches along the main path, the others
//     towards the main-path switch of the level below when they are
//     cabled to it, else along a shortest descent chosen by index.
//  3. Every other switch climbs on a shortest up*/down* route, preferring
//     the up channel of the same rank that the main path took at its
//     level (cycling on to the next rank when that one is missing or
//     longer).
//
// Switch pairs without an up*/down* route, such as two top switches, get
// no LFT entry (OpenSM's updn and ftree leave them out too): no CA traffic
// needs them. A leaf that cannot reach a CA that way makes the engine
// refuse the fabric. A leaf that cannot reach a switch LID that way (a
// failed cable between a leaf and a top switch of a two-level tree is
// enough) gets a detour: a shortest walk to a switch with a legal route,
// turning from down to up once. Detours are checked with cdg.Verify (CA
// sources, one VL); if they close a dependency cycle the engine refuses
// the fabric and names the cycle. On the damaged trees of the tests this
// happened for one Clos3 of five.
//
// On a full k-ary n-tree, XGFT with full bisection, Clos2 or Clos3 this is
// d-mod-k routing: the up channel every switch takes towards destination d
// depends on d's index digits only, which makes every shift permutation
// (i → i+s mod N, in index order) contention-free: no channel carries two
// of its flows (tested). Damaged trees stay up*/down*, so deadlock-free
// with one VL (DeadlockFree reports true); their balance degrades
// gracefully. LMC > 0 (which OpenSM's ftree refuses): the LIDs of a port
// are consecutive destinations, so their main paths fan out over
// different parents and top switches.
//
// Cost: main paths O(LIDs·levels·radix), sequential (they share the
// counters); then, in parallel over destination switches, one O(S+C)
// distance row each and O(S) per LID, plus a verification when there are
// detours. Results do not depend on Options.Workers; Options.Progress
// counts destination switches.
type Ftree struct{}

func init() {
	Register("ftree", func() Engine { return Ftree{} })
}

// Name returns "ftree".
func (Ftree) Name() string { return "ftree" }

// DeadlockFree returns true.
func (Ftree) DeadlockFree() bool { return true }

// CADeliveryOnly returns true: switch pairs without an up*/down* route get
// no entry (see Ftree), so only the packets of CA and router ports are
// promised delivery.
func (Ftree) CADeliveryOnly() bool { return true }

// noRank marks a level the main path did not climb from.
const noRank = 0xFF

// Route computes the fat-tree routing of g. It takes no parameters.
func (Ftree) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	sh, err := detectFatTree(g)
	if err != nil {
		return nil, err
	}
	if opt.Root != "" {
		s, err := ResolveSwitch(g, opt.Root)
		if err != nil {
			return nil, fmt.Errorf("ftree: root: %w", err)
		}
		if sh.level[s] != sh.top {
			return nil, NotApplicable("ftree", "root %q is at level %d, the top level is %d", g.SwitchName(s), sh.level[s], sh.top)
		}
	}
	ft := &ftreeRun{g: g, sh: sh, L: int(sh.top) + 1}
	ft.index(Destinations(g))
	if err := ft.mainPaths(ctx); err != nil {
		return nil, err
	}
	r := lft.New(g, "ftree")
	detours, err := ft.columns(ctx, r, opt)
	if err != nil {
		return nil, err
	}
	if detours > 0 {
		// Detours turn from down to up: make sure they close no cycle.
		rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 1, Workers: opt.Workers})
		if rep == nil || rep.Delivered != rep.Pairs {
			return nil, fmt.Errorf("ftree: BUG: tables with %d detours fail verification: %w", detours, err)
		}
		if rep.Cycle != nil {
			return nil, NotApplicable("ftree", "routes to switch LIDs around failed links (%d switch pairs) close a dependency cycle (%v); updn routes this fabric",
				detours, rep.Cycle)
		}
	}
	return r, nil
}

// Order returns the terminals (indices into g.Terms) in ftree's index
// order, the CA order in which every shift permutation is contention-free
// on a full tree (OpenSM writes the same order to
// opensm-ftree-ca-order.dump). It fails as Route does on other shapes.
// The slice belongs to the caller.
func (Ftree) Order(g *fabric.Graph) ([]int32, error) {
	sh, err := detectFatTree(g)
	if err != nil {
		return nil, err
	}
	ft := &ftreeRun{g: g, sh: sh, L: int(sh.top) + 1}
	ft.index(Destinations(g))
	var out []int32
	for _, d := range ft.dests {
		if d.Term >= 0 && d.LID == d.Base {
			out = append(out, d.Term)
		}
	}
	return out, nil
}

// ftreeRun is the state of one Route call.
type ftreeRun struct {
	g     *fabric.Graph
	sh    *ftreeShape
	L     int     // levels
	dests []Dest  // in index order
	runs  []int32 // dests[runs[j]:runs[j+1]] share a destination switch
	rank  []uint8 // dest i, level l: rank of the main path's up channel at l (noRank: none)
	down  []int32 // dest i, level l: main path's channel from level l down to l-1 (-1: none)
}

// index orders the destinations (see Ftree) and groups them by switch.
func (ft *ftreeRun) index(ds []Dest) {
	sh := ft.sh
	ft.dests = make([]Dest, 0, len(ds))
	for _, d := range ds {
		if d.Term >= 0 {
			ft.dests = append(ft.dests, d)
		}
	}
	slices.SortFunc(ft.dests, func(a, b Dest) int {
		if c := cmp.Compare(sh.leafAt[a.Switch], sh.leafAt[b.Switch]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Port, b.Port); c != 0 {
			return c
		}
		return cmp.Compare(a.LID, b.LID)
	})
	for _, d := range ds {
		if d.Term < 0 {
			ft.dests = append(ft.dests, d)
		}
	}
	for i := range ft.dests {
		if i == 0 || ft.dests[i].Switch != ft.dests[i-1].Switch {
			ft.runs = append(ft.runs, int32(i))
		}
	}
	ft.runs = append(ft.runs, int32(len(ft.dests)))
}

// mainPaths runs step 1 for every destination in index order.
func (ft *ftreeRun) mainPaths(ctx context.Context) error {
	g, sh, L := ft.g, ft.sh, ft.L
	n := len(ft.dests)
	ft.rank = make([]uint8, n*L)
	ft.down = make([]int32, n*L)
	for i := range ft.rank {
		ft.rank[i] = noRank
		ft.down[i] = -1
	}
	load := make([]int32, g.NumChannels()) // per down channel: main paths through it
	for i, d := range ft.dests {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		u := d.Switch
		for lvl := sh.level[u]; sh.upOff[u+1] > sh.upOff[u]; lvl++ {
			ups := sh.upCh[sh.upOff[u]:sh.upOff[u+1]]
			best := 0
			for k := 1; k < len(ups); k++ {
				if load[g.Rev[ups[k]]] < load[g.Rev[ups[best]]] {
					best = k
				}
			}
			c := ups[best]
			ft.rank[i*L+int(lvl)] = uint8(best)
			ft.down[i*L+int(lvl)+1] = g.Rev[c]
			load[g.Rev[c]]++
			u = g.Head[c]
		}
	}
	return nil
}
