package routing

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// MinHop is OpenSM's default routing engine ("minhop"), as described in
// OpenSM's doc/current-routing.txt ("Min Hop Algorithm" and "the basic
// routing algorithm"): every switch forwards each destination LID along a
// shortest path of the switch graph, and among the ports on shortest paths
// takes the one with the fewest LIDs already assigned at that switch (ties:
// the lowest port), visiting destinations in LID order. Switch LIDs are
// routed the same way.
//
// LMC > 0: the 2^LMC LIDs of one port are routed one after the other, and
// each switch first prefers, among its shortest-path ports, one towards a
// neighbour switch that no earlier LID of the same port took (then the
// fewest LIDs, then the lowest port). Where the fabric has path diversity
// the LIDs of a port therefore leave every switch on different links, a
// per-switch version of OpenSM's "prefer another system/node" rule.
//
// MinHop is not deadlock-free (DeadlockFree reports false): on a ring or
// torus its shortest paths close channel dependency cycles. It uses one VL
// and SL 0. Every connected pair is delivered on a shortest path.
//
// Cost: one BFS per destination switch, O(S·(S+C)), plus O(LIDs·C) for the
// port choices; the choices run in parallel over switches (see balancer),
// with results independent of Options.Workers. Memory: the LFTs plus
// distance rows for one block of destinations (at most 16 MiB).
type MinHop struct{}

func init() {
	Register("minhop", func() Engine { return MinHop{} })
}

// Name returns "minhop".
func (MinHop) Name() string { return "minhop" }

// DeadlockFree returns false: shortest paths may close dependency cycles.
func (MinHop) DeadlockFree() bool { return false }

// Route computes the MinHop routing of g. It takes no parameters.
func (MinHop) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	r := lft.New(g, "minhop")
	fill := func(dst int32, row []uint16, queue []int32) { hopRow(g, dst, row, queue) }
	if err := routeBalanced(ctx, g, r, nil, fill, opt); err != nil {
		return nil, err
	}
	return r, nil
}
