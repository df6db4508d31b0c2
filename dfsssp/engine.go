package dfsssp

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

func init() {
	routing.Register("sssp", func() routing.Engine { return SSSP{} })
	routing.Register("dfsssp", func() routing.Engine { return DFSSSP{} })
}

// SSSP is the balanced shortest-path engine ("sssp"): DFSSSP's paths
// without the layering, so not deadlock-free. It takes no parameters.
// Safe for concurrent use.
type SSSP struct{}

// Name returns "sssp".
func (SSSP) Name() string { return "sssp" }

// DeadlockFree reports false: shortest paths may close CDG cycles.
func (SSSP) DeadlockFree() bool { return false }

// Route computes the SSSP routing; see RouteSSSP.
func (SSSP) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	return RouteSSSP(ctx, g, opt)
}

// DFSSSP is the deadlock-free engine ("dfsssp"), configured by Config
// ("dfsssp:vlcount=exact"; see Params). Safe for concurrent use.
type DFSSSP struct{ Config Config }

// Name returns "dfsssp".
func (DFSSSP) Name() string { return "dfsssp" }

// DeadlockFree reports true: every layer's CDG is acyclic, or the engine
// returns an error.
func (DFSSSP) DeadlockFree() bool { return true }

// Route computes the DFSSSP routing; see RouteStats.
func (e DFSSSP) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	r, _, err := e.RouteStats(ctx, g, opt)
	return r, err
}

// Stats describe a DFSSSP run.
type Stats struct {
	Destinations int   // destination LIDs routed
	Paths        int64 // (source switch, destination LID) paths of one hop or more
	// Needed is the number of VLs the layering needs. When it exceeds the
	// layers searched (MaxVLs, or 15 with vlcount=exact) it is that
	// number plus one and only a lower bound: Exact is false then.
	Needed int
	Exact  bool
	// CyclesBroken[L] counts the dependencies broken in layer L (moving
	// paths to L+1, or none when they had all left already).
	CyclesBroken []int
	MovedPaths   int64   // path moves between layers, in total
	LayerPairs   []int64 // per layer: (source LID, destination LID) pairs, as OpenSM counts them
	Split        []int   // per layer: VLs it is spread over (nil on failure)
	NumVLs       int     // VLs the routing uses
}

// RouteSSSP routes every destination LID along balanced shortest paths
// (Domke et al. 2011, as OpenSM implements it): SL 0 everywhere, one VL. Unreachable pairs keep
// lft.NoPort. O(D·(S + C)·log S) for D destination LIDs, S switches, C
// channels; O(S + C) memory besides the tables. The result does not
// depend on opt.Workers.
func RouteSSSP(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	p, err := newPlan(g, false)
	if err != nil {
		return nil, err
	}
	r := lft.New(g, "sssp")
	if err := shortestPaths(ctx, p, r, opt, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// RouteDFSSSP computes the DFSSSP routing with the default Config; see
// DFSSSP.RouteStats.
func RouteDFSSSP(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, *Stats, error) {
	return DFSSSP{}.RouteStats(ctx, g, opt)
}

// RouteStats computes SSSP paths and assigns them to virtual layers with
// acyclic CDGs (Domke et al. 2011; see the package comment for the
// heuristic, which is OpenSM's unless Config.FirstFit). It returns a *routing.VLError (Engine
// "dfsssp") with the statistics when more than opt.MaxVLs layers are
// needed, and never a routing with a CDG cycle. Cost: the SSSP part, plus
// 17 bytes per (switch, destination LID) path of state (22 MB for the
// 8×8×8 torus with 2,560 LIDs) and, per broken dependency, a walk of each
// path that moves; the cycle search is resumed, not restarted, after each
// break. The result does not depend on opt.Workers.
func (e DFSSSP) RouteStats(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, *Stats, error) {
	if err := opt.Validate(); err != nil {
		return nil, nil, err
	}
	opt = opt.WithDefaults()
	limit := opt.MaxVLs
	if e.Config.ExactVLCount {
		limit = max(limit, lft.MaxVLs)
	}
	spread := !e.Config.NoVLBalance
	p, err := newPlan(g, e.Config.SwitchSources)
	if err != nil {
		return nil, nil, err
	}
	if opt.SAR && len(opt.Jobs) > 0 {
		p.applyJobs(opt.Jobs)
	}
	b, err := newBuilder(p)
	if err != nil {
		return nil, nil, err
	}
	r := lft.New(g, "dfsssp")
	if err := shortestPaths(ctx, p, r, opt, b); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.finish()
	st := &Stats{Destinations: len(p.dests)}
	for _, c := range b.nh {
		if c >= 0 {
			st.Paths++
		}
	}
	layering := b.layering
	if e.Config.FirstFit {
		layering = b.layeringFirstFit
	}
	needed, err := layering(ctx, limit, st)
	if err != nil {
		return nil, nil, err
	}
	st.Needed, st.Exact = needed, needed <= limit
	st.LayerPairs = b.layerWeights(min(needed, limit))
	if needed > opt.MaxVLs {
		return nil, st, &routing.VLError{Engine: "dfsssp", Needed: needed, Limit: opt.MaxVLs}
	}
	st.Split = make([]int, needed)
	for i := range st.Split {
		st.Split[i] = 1
	}
	if spread {
		st.Split = splitLayers(st.LayerPairs, opt.MaxVLs)
	}
	st.NumVLs = b.assignSLs(r, st.Split)
	r.NumVLs = st.NumVLs
	return r, st, nil
}
