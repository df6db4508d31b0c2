package nue

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// Refinement passes. Algorithm 4.1 balances greedily: each destination
// sees the load of the destinations routed before it and none of those
// after. A refinement pass routes every destination again, in the same
// order, against the final load of all the others: the weights start
// where the previous pass ended, a destination's own load of that pass
// leaves them before its search and its new paths' load joins them after
// it (best response in the congestion game the weights describe). Each
// pass is a complete Nue routing with its own layers and used turns, so
// deadlock freedom does not depend on the weights carried over; the pass
// whose heaviest channel is lightest is kept (the first on a tie).
//
// Where a greedy pass is far from balanced the passes close most of the
// gap: SAR's job-first balancing (seed 001 §3) weighs a few jobs' paths,
// whose greedy order leaves ties to chance (see sar's bench).

// RouteRefined computes a Nue routing as Route does, followed by passes−1
// refinement passes (passes ≤ 1: Route). It costs about passes routings;
// the result is deterministic and does not depend on opt.Workers.
func (e Engine) RouteRefined(ctx context.Context, g *fabric.Graph, opt routing.Options, passes int) (*lft.Routing, error) {
	r, _, err := e.routeTuned(ctx, g, opt, defaultTuning(), passes)
	return r, err
}

// history carries a pass's load into the next: per LID the weight
// increments of its last routing, and the weights at the end of the pass.
// A nil *history is a single pass: its methods do nothing.
type history struct {
	prev, cur [][]incEntry // by LID: last pass's and this pass's increments
	w         []int64      // weights at the end of the last pass, nil before
	heaviest  int64        // the heaviest channel of w
}

// refine runs once passes times (at least once) and keeps the routing of
// the pass with the lightest heaviest channel. opt is the Options once
// routes with: its Progress, if set, sees the passes as one run.
func refine(passes int, opt *routing.Options, maxLID int, once func(*history) (*lft.Routing, *Stats, error)) (*lft.Routing, *Stats, error) {
	if passes <= 1 {
		return once(nil)
	}
	pass := 0
	if p := opt.Progress; p != nil {
		opt.Progress = func(done, total int) { p(pass*total+done, passes*total) }
		defer func() { opt.Progress = p }()
	}
	h := &history{prev: make([][]incEntry, maxLID+1), cur: make([][]incEntry, maxLID+1)}
	var (
		best     *lft.Routing
		bestSt   *Stats
		lightest int64
	)
	for ; pass < passes; pass++ {
		r, st, err := once(h)
		if err != nil {
			return nil, nil, err
		}
		if best == nil || h.heaviest < lightest {
			best, bestSt, lightest = r, st, h.heaviest
		}
		h.prev, h.cur = h.cur, h.prev
	}
	return best, bestSt, nil
}

// start puts the previous pass's final weights into w.
func (h *history) start(w []int64) {
	if h != nil && h.w != nil {
		copy(w, h.w)
	}
}

// forget takes LID lid's load of the previous pass off w.
func (h *history) forget(lid int32, w []int64) {
	if h == nil || h.w == nil {
		return
	}
	for _, e := range h.prev[lid] {
		w[e.c] -= e.v
	}
}

// record keeps LID lid's increments of this pass.
func (h *history) record(lid int32, inc []incEntry) {
	if h != nil {
		h.cur[lid] = append(h.cur[lid][:0], inc...)
	}
}

// finish keeps the weights at the end of a pass.
func (h *history) finish(w []int64) {
	if h == nil {
		return
	}
	h.w = append(h.w[:0], w...)
	h.heaviest = 0
	for _, x := range w {
		h.heaviest = max(h.heaviest, x)
	}
}
