package routing

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// DOR is dimension-order routing for complete meshes and tori (Dally and
// Seitz, "Deadlock-Free Message Routing in Multiprocessor Interconnection
// Networks", IEEE ToC 36(5), 1987), with the dateline technique on tori
// (Dally and Towles, "Principles and Practices of Interconnection
// Networks", 2004, ch. 14) expressed, as in OpenSM's torus-2QoS, through
// one SL bit per dimension that says whether the path crosses that
// dimension's dateline and per-switch SL2VL tables that depend on the
// output port. Registered as "dor" (deadlock-free) and, with NoDateline,
// as "dor-nodateline".
//
// Recognition. Switch coordinates come from descriptions ending in
// "(x,y,…)" (what topo.Torus, for tori and meshes, and topo.Hypercube
// write); when some switch
// has none, Config.Dims ("dims=8x8x8") gives the shape and the switch order
// the coordinates (dimension 0 fastest, as the generators number them).
// "dims" also fixes the sizes when the descriptions have coordinates. The
// fabric is accepted only when the coordinates fill the grid exactly once,
// every cable joins switches that differ by ±1 in exactly one dimension
// (mod k where the dimension wraps), and every expected neighbour cable
// exists. A dimension of size >= 3 wraps when any wrap-around cable exists
// (a partial set is then reported as a missing link), or as Config.Torus
// ("torus=1x1x0") says; the wrap-around cables of a dimension declared not to
// wrap carry no traffic (the dimension is routed as a mesh). Parallel
// cables are allowed; the lowest port is used. Everything else is refused
// with ErrNotApplicable and the first offending switch or cable.
//
// Routing. Towards every destination switch, dimensions are corrected in
// order 0, 1, 2, …; in a wrapping dimension the packet goes the shorter way
// round. A tie (distance exactly k/2) goes "+" when the sum of the
// destination switch's coordinates is even and "−" when it is odd, which
// splits tied traffic evenly over both directions. Paths are minimal: hop
// counts equal the torus distance. The next hop depends on the current
// switch and the destination only, as a destination-based LFT needs.
//
// Dateline and SLs. Every wrapping dimension of size >= 4 gets one SL bit
// (in dimension order; rings of 3 need none since their minimal paths are
// single hops), so at most four such dimensions are supported. The bit is 1
// when the path from the source switch to the destination crosses that
// dimension's dateline, the wrap-around cable between x = k−1 and x = 0.
// SLs therefore depend on the source switch (SLTable.BySrc). A hop leaving
// switch x through the "+" port of dimension i uses VL1 when the SL bit of
// i is set and 2x < k, and a hop through the "−" port uses VL1 when the bit
// is set and 2x >= k; every other hop, and every CA port, uses VL0. The VL
// thus depends on (switch, output port, SL) only; the input port is not
// needed. Because paths are minimal, a crossing path's hops before the
// dateline leave switches on the far half of the ring and its hops after
// the dateline leave switches on the near half, so the rule puts a packet
// on VL0 until it crosses the dateline of the dimension it travels in
// (the wrap-around hop itself is on VL0) and on VL1 after it, and each new
// dimension starts on VL0 again. (torus-2QoS takes the VL of a hop from the
// SL bit of the output port's dimension alone; the switch position here
// is what makes the VL change at the dateline.)
//
// Why the CDG over virtual channels is acyclic. Dependencies between
// dimensions only go from a lower to a higher dimension, so a cycle would
// stay in one ring (one dimension, one direction, fixed other
// coordinates). Rank the "+" ring's virtual channels: (VL0, leaving x) as
// x and (VL1, leaving x) as k+x. A path continuing from the channel
// leaving x to the one leaving x+1 keeps its VL and raises the rank, except
// on the wrap-around channel (VL0, rank k−1), which only crossing paths
// use and whose successor (leaving 0, VL1) has rank k; VL1 hops leave only
// switches x <= ⌊k/2⌋ − 2, so they never reach the wrap-around channel, and
// a path's hop before the dateline never maps to VL1. Every
// dependency raises the rank: no cycle. The "−" ring is the mirror image.
// cdg.Verify confirms this on every torus of the tests.
//
// VLs: 2 when some dimension has a dateline, else 1; with opt.MaxVLs = 1 on
// such a torus DOR returns a *VLError (Needed 2).
//
// Without dateline. NoDateline ("dor-nodateline") routes the same paths on
// VL0 with SL 0. On tori with a ring of 4 or more this is deadlock-prone;
// the engine therefore does not claim deadlock freedom (DeadlockFree is
// false) and only the verifier accepts or rejects its tables. The "dor"
// engine itself refuses the parameter dateline=off and points there, so that
// an engine claiming deadlock freedom never returns a cyclic routing.
//
// Cost: O(S·(S·n + LIDs)) for S switches, n dimensions; the rows of the
// LFT are computed in parallel (ForEach over opt.Workers goroutines; the
// result does not depend on their number). Safe for concurrent use.
type DOR struct {
	NoDateline bool
	Config     DORConfig
}

func init() {
	Register("dor", func() Engine { return DOR{} })
	Register("dor-nodateline", func() Engine { return DOR{NoDateline: true} })
}

// Name returns "dor" or "dor-nodateline".
func (e DOR) Name() string {
	if e.NoDateline {
		return "dor-nodateline"
	}
	return "dor"
}

// DeadlockFree is true for "dor" and false for "dor-nodateline".
func (e DOR) DeadlockFree() bool { return !e.NoDateline }

// Route computes dimension-order routes; see DOR and DORConfig.
func (e DOR) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	name := e.Name()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := e.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	opt = opt.WithDefaults()
	dateline := !e.NoDateline
	t, err := recogniseTorus(g, name, e.Config)
	if err != nil {
		return nil, err
	}
	if !dateline {
		t.nbits = 0
		for i := range t.bit {
			t.bit[i] = -1
		}
	}
	if t.nbits > 4 {
		return nil, NotApplicable(name, "%d wrapping dimensions of size >= 4 need %d dateline SL bits, SLs have 4", t.nbits, t.nbits)
	}
	vls := 1
	if t.nbits > 0 {
		vls = 2
	}
	if vls > opt.MaxVLs {
		return nil, &VLError{Engine: name, Needed: vls, Limit: opt.MaxVLs}
	}
	r := lft.New(g, name)
	r.NumVLs = vls
	if t.nbits > 0 {
		r.SL.EnableBySrc(g.NumSwitches())
		t.sl2vl(g, r)
	}
	dl := lidsBySwitch(g)
	if err := t.fill(ctx, g, r, dl, opt); err != nil {
		return nil, err
	}
	return r, nil
}

// dir returns the direction from a to b (a != b) in dimension i towards a
// destination whose coordinate sum is par.
func (t *torusShape) dir(i int, a, b, par int32) int {
	k := t.k[i]
	if !t.wrap[i] {
		if b > a {
			return dirPlus
		}
		return dirMinus
	}
	f := b - a
	if f < 0 {
		f += k
	}
	switch {
	case 2*f < k:
		return dirPlus
	case 2*f > k:
		return dirMinus
	case par&1 == 0:
		return dirPlus
	}
	return dirMinus
}

// route returns the out port at switch u towards switch d (u != d) and the
// SL of the path from u to d.
func (t *torusShape) route(u, d int32) (port, sl uint8) {
	xu, xd := t.coord[int(u)*t.n:(int(u)+1)*t.n], t.coord[int(d)*t.n:(int(d)+1)*t.n]
	var par int32
	for _, v := range xd {
		par += v
	}
	for i := 0; i < t.n; i++ {
		a, b := xu[i], xd[i]
		if a == b {
			continue
		}
		dir := t.dir(i, a, b, par)
		if port == 0 {
			port = t.portOf(u, i, dir)
		}
		if t.bit[i] < 0 {
			continue
		}
		if (dir == dirPlus && b < a) || (dir == dirMinus && b > a) {
			sl |= 1 << t.bit[i]
		}
	}
	return port, sl
}

// sl2vl writes the dateline SL2VL tables (see DOR): VL0 everywhere except
// the hops after a dateline.
func (t *torusShape) sl2vl(g *fabric.Graph, r *lft.Routing) {
	var zero [lft.NumSLs]uint8
	r.SL2VL.Default = zero
	S := g.NumSwitches()
	r.SL2VL.Switch = make([]*lft.PortSL2VL, S)
	for s := int32(0); int(s) < S; s++ {
		np := g.F.Nodes[g.Switches[s]].NumPorts()
		tab := lft.NewPortSL2VL(np, zero)
		for i := 0; i < t.n; i++ {
			if t.bit[i] < 0 {
				continue
			}
			x, k := t.x(s, i), t.k[i]
			for dir := dirPlus; dir <= dirMinus; dir++ {
				p := t.portOf(s, i, dir)
				after := (dir == dirPlus && 2*x < k) || (dir == dirMinus && 2*x >= k)
				if p == 0 || !after {
					continue
				}
				for sl := 0; sl < lft.NumSLs; sl++ {
					if sl>>t.bit[i]&1 == 0 {
						continue
					}
					for in := 0; in <= np; in++ {
						tab.Set(uint8(in), p, uint8(sl), 1)
					}
				}
			}
		}
		r.SL2VL.Switch[s] = tab
	}
}

// destLIDs lists, per destination switch, the LIDs it delivers and the
// port each leaves on there (0 for the switch's own LIDs), in CSR form.
type destLIDs struct {
	off  []int32 // switch s: lid[off[s]:off[s+1]]
	lid  []int32
	port []uint8
}

// lidsBySwitch groups every LID with an owner attached to a switch by that
// switch, in increasing LID order.
func lidsBySwitch(g *fabric.Graph) destLIDs {
	S := g.NumSwitches()
	dl := destLIDs{off: make([]int32, S+1)}
	owner := func(lid int) (int32, uint8) {
		sw, term := g.Owner(lid)
		if term >= 0 {
			return g.Terms[term].Switch, g.Terms[term].SwitchPort
		}
		return sw, 0
	}
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if d, _ := owner(lid); d >= 0 {
			dl.off[d+1]++
		}
	}
	for s := 0; s < S; s++ {
		dl.off[s+1] += dl.off[s]
	}
	dl.lid = make([]int32, dl.off[S])
	dl.port = make([]uint8, dl.off[S])
	fill := append([]int32(nil), dl.off[:S]...)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if d, p := owner(lid); d >= 0 {
			dl.lid[fill[d]], dl.port[fill[d]] = int32(lid), p
			fill[d]++
		}
	}
	return dl
}

// fill computes the LFT row (and SL row) of every switch; rows are
// independent, so they are spread over workers with ForEach.
func (t *torusShape) fill(ctx context.Context, g *fabric.Graph, r *lft.Routing, dl destLIDs, opt Options) error {
	S := g.NumSwitches()
	return parallel.ForProgress(ctx, S, opt.Workers, opt.Progress, func(_, i int) error {
		u := int32(i)
		row := r.Row(u)
		var slRow []uint8
		if r.SL.BySrc != nil {
			slRow = r.SL.SrcRow(u)
		}
		for d := int32(0); int(d) < S; d++ {
			lo, hi := dl.off[d], dl.off[d+1]
			if d == u {
				for j := lo; j < hi; j++ {
					row[dl.lid[j]] = dl.port[j]
				}
				continue
			}
			port, sl := t.route(u, d)
			for j := lo; j < hi; j++ {
				row[dl.lid[j]] = port
			}
			if slRow != nil {
				for j := lo; j < hi; j++ {
					slRow[dl.lid[j]] = sl
				}
			}
		}
		return nil
	})
}
