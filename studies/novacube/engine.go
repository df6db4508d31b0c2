package novacube

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// PORA builds deterministic, LMC-free forwarding tables for NovaCube
// fabrics from the probabilistic oblivious routing of Wang et al. (seed
// 004, §5.1), registered as "pora". Only NovaCubes are accepted (switch
// descriptions ending in "(x,y,…)" as topo.NovaCube writes them, every
// torus and jump-over cable present); anything else is refused with
// routing.ErrNotApplicable. It takes no parameters.
//
// Tables. A destination-based table has one next hop per (switch,
// destination), so PORA's random choices collapse to their most probable
// outcome: at every switch the jump-over link is taken when its far end
// is strictly closer (Lee distance in the torus, the paper's Δ) to the
// destination than the dimension-order hop (§5.1.2's condition), else the
// dimension-order hop is (lowest differing dimension, shorter way round;
// a tie at k/2 goes "+" when the destination's coordinate sum is even, as
// in DOR). At the source this is eq. 12's likeliest neighbour (least Δ),
// ties to DOR. Every hop lowers the Lee distance, so tables are loop-free;
// for even k a jump is only ever the first hop and paths are shortest
// NovaCube paths.
//
// VLs (§5.3). The engine tries four VL schemes in order and keeps the
// first whose channel dependency graph is acyclic: one VL; the paper's
// two dateline VLs (one SL bit per dimension says whether the path
// crosses that dimension's dateline; as in DOR a hop leaving x through
// the "+" port uses the upper VL when the bit is set and 2x < k, "−":
// 2x >= k; jump-over hops use the lower VL); two VLs, one per layer, where
// the paths that take a jump after their first hop (odd k: the jump links
// only span the (k−1)-ary sub-cube) get an SL bit and a VL of their own;
// and both (four VLs). It proves each candidate with cdg.Verify, so the
// deadlock-freedom claim holds by construction; with fewer VLs than the
// chosen scheme uses it returns a *routing.VLError whose Needed is exact; when no
// scheme fits the 4 SL bits or none is acyclic it refuses the fabric with
// routing.ErrNotApplicable. Found: 4×4 needs 1 VL, even k >= 6 and 4×4×4 need 2,
// odd k >= 5 in 2D and 3D need 4 (the paper's "two VCs suffice" fails
// there for these tables).
//
// Cost: O(S²·h) time for S switches and paths of h hops, plus one
// cdg.Verify per scheme tried; two bytes per switch pair. Deterministic;
// safe for concurrent use.
type PORA struct{}

func init() {
	routing.Register("pora", func() routing.Engine { return PORA{} })
}

// Name returns "pora".
func (PORA) Name() string { return "pora" }

// DeadlockFree is true: the engine verifies its CDG before returning.
func (PORA) DeadlockFree() bool { return true }

// Route computes the PORA tables; see PORA.
func (e PORA) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	const name = "pora"
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	t, err := recogniseNova(g, name)
	if err != nil {
		return nil, err
	}
	pl := t.plan(g)
	var r *lft.Routing
	tooMany := false
	for _, sc := range poraSchemes {
		if (sc.dateline && t.k < 4) || (sc.layered && !pl.midJump) {
			continue
		}
		if sc.slBits(t.n) > 4 {
			tooMany = true
			continue
		}
		var err error
		if r, err = t.tables(ctx, g, pl, sc, opt); err != nil {
			return nil, err
		}
		rep, verr := cdg.Verify(g, r, cdg.Options{Workers: opt.Workers})
		if rep == nil {
			return nil, fmt.Errorf("%s: %w", name, verr)
		}
		if rep.Delivered != rep.Pairs {
			return nil, fmt.Errorf("%s: BUG: tables undelivered: %w", name, verr)
		}
		if rep.Cycle == nil {
			break
		}
		r = nil
	}
	switch {
	case r == nil && tooMany:
		return nil, routing.NotApplicable(name, "%d dimensions: the VL schemes that fit in 4 SL bits leave the CDG cyclic", t.n)
	case r == nil:
		return nil, routing.NotApplicable(name, "no VL scheme of the engine makes the CDG acyclic on this NovaCube")
	}
	if r.NumVLs > opt.MaxVLs {
		return nil, &routing.VLError{Engine: name, Needed: r.NumVLs, Limit: opt.MaxVLs}
	}
	return r, nil
}

// poraPlan holds the next hop of every (switch, destination switch) and
// the SL facts of every path: two bytes per pair.
type poraPlan struct {
	S        int
	nextPort []uint8 // u*S+d -> port (0 at d itself)
	facts    []uint8 // s*S+d -> bit i < 7: the path crosses dimension i's dateline; factLate
	midJump  bool    // some path has a late jump
}

// factLate marks a path that takes a jump after its first hop.
const factLate = 1 << 7

// next returns the switch after u towards d.
func (pl *poraPlan) next(g *fabric.Graph, u, d int32) int32 {
	return g.Head[g.ChannelAt(u, pl.nextPort[int(u)*pl.S+int(d)])]
}

// poraScheme is one VL assignment the engine tries: dateline VL pairs per
// dimension, and a separate layer for the paths with a late jump.
type poraScheme struct{ dateline, layered bool }

// poraSchemes are tried in this order (1, 2, 2, 4 VLs); the first whose CDG
// is acyclic wins.
var poraSchemes = []poraScheme{{false, false}, {true, false}, {false, true}, {true, true}}

func (sc poraScheme) slBits(n int) int {
	b := 0
	if sc.dateline {
		b = n
	}
	if sc.layered {
		b++
	}
	return b
}

func (sc poraScheme) vls() int {
	v := 1
	if sc.dateline {
		v = 2
	}
	if sc.layered {
		v *= 2
	}
	return v
}

// step returns the output port from u towards d (u != d): the Tables
// reading of the one PORA relation (router.tableSlot).
func (t *novaShape) step(u, d int32) uint8 {
	r := router{c: t.cube, v: Tables, d: int(t.node[d]), par: t.cube.coordSum(int(t.node[d]))}
	sl := r.tableSlot(int(t.node[u]))
	if sl == 2*t.n {
		return t.jump[u]
	}
	return t.portOf(u, sl/2, sl%2)
}

// plan computes every next hop and walks every switch pair's path.
func (t *novaShape) plan(g *fabric.Graph) *poraPlan {
	S := g.NumSwitches()
	pl := &poraPlan{S: S, nextPort: make([]uint8, S*S), facts: make([]uint8, S*S)}
	for u := int32(0); int(u) < S; u++ {
		for d := int32(0); int(d) < S; d++ {
			if u != d {
				pl.nextPort[int(u)*S+int(d)] = t.step(u, d)
			}
		}
	}
	for s := int32(0); int(s) < S; s++ {
		for d := int32(0); int(d) < S; d++ {
			var f uint8
			for u, h := s, 0; u != d; h++ {
				v := pl.next(g, u, d)
				if dim, dir, ok := t.neighbour(u, v); ok {
					xu := t.x(u, dim)
					if dim < 7 && ((dir == dirPlus && xu == int32(t.k-1)) || (dir == dirMinus && xu == 0)) {
						f |= 1 << dim
					}
				} else if h > 0 {
					f |= factLate
				}
				u = v
			}
			pl.facts[int(s)*S+int(d)] = f
			pl.midJump = pl.midJump || f&factLate != 0
		}
	}
	return pl
}

// tables writes the LFTs, the SLs (per source switch) and the SL2VL
// tables of a plan under a VL scheme.
func (t *novaShape) tables(ctx context.Context, g *fabric.Graph, pl *poraPlan, sc poraScheme, opt routing.Options) (*lft.Routing, error) {
	S := g.NumSwitches()
	r := lft.New(g, "pora")
	r.NumVLs = sc.vls()
	nbits := sc.slBits(t.n)
	if sc.layered {
		nbits--
	}
	slOf := func(s, d int32) uint8 {
		var sl uint8
		f := pl.facts[int(s)*S+int(d)]
		if sc.dateline {
			sl = f &^ factLate
		}
		if sc.layered && f&factLate != 0 {
			sl |= 1 << nbits
		}
		return sl
	}
	if r.NumVLs > 1 {
		r.SL.EnableBySrc(S)
		t.sl2vl(g, r, sc, nbits)
	}
	owner := lidOwners(g)
	err := parallel.ForProgress(ctx, S, opt.Workers, opt.Progress, func(_, i int) error {
		u := int32(i)
		row := r.Row(u)
		var slRow []uint8
		if r.SL.BySrc != nil {
			slRow = r.SL.SrcRow(u)
		}
		for lid, o := range owner {
			d := o.sw
			switch {
			case d < 0:
				continue
			case d == u:
				row[lid] = o.port
			default:
				row[lid] = pl.nextPort[int(u)*S+int(d)]
			}
			if slRow != nil {
				slRow[lid] = slOf(u, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// sl2vl writes per-switch SL2VL tables: layer·vpl plus the dateline VL on
// torus ports (see PORA), layer·vpl on jump-over ports; nbits is the
// number of dateline SL bits (the layer bit follows them).
func (t *novaShape) sl2vl(g *fabric.Graph, r *lft.Routing, sc poraScheme, nbits int) {
	vpl := 1
	if sc.dateline {
		vpl = 2
	}
	var zero [lft.NumSLs]uint8
	r.SL2VL.Default = zero
	S := g.NumSwitches()
	r.SL2VL.Switch = make([]*lft.PortSL2VL, S)
	k := int32(t.k)
	for s := int32(0); int(s) < S; s++ {
		np := g.F.Nodes[g.Switches[s]].NumPorts()
		tab := lft.NewPortSL2VL(np, zero)
		set := func(p uint8, vl func(sl int) int) {
			for sl := 0; sl < lft.NumSLs; sl++ {
				for in := 0; in <= np; in++ {
					tab.Set(uint8(in), p, uint8(sl), uint8(vl(sl)))
				}
			}
		}
		base := func(sl int) int {
			if sc.layered && sl>>nbits&1 == 1 {
				return vpl
			}
			return 0
		}
		for i := 0; i < t.n; i++ {
			x := t.x(s, i)
			for dir := dirPlus; dir <= dirMinus; dir++ {
				after := (dir == dirPlus && 2*x < k) || (dir == dirMinus && 2*x >= k)
				set(t.portOf(s, i, dir), func(sl int) int {
					if sc.dateline && after && sl>>i&1 == 1 {
						return base(sl) + 1
					}
					return base(sl)
				})
			}
		}
		if t.jump[s] != 0 {
			set(t.jump[s], base)
		}
		r.SL2VL.Switch[s] = tab
	}
}

// lidOwner is the switch a LID leads to and the port it leaves on there
// (0 for the switch's own LID); sw -1 for a LID without an owner.
type lidOwner struct {
	sw   int32
	port uint8
}

// lidOwners lists the owner of every LID up to g.MaxLID().
func lidOwners(g *fabric.Graph) []lidOwner {
	out := make([]lidOwner, g.MaxLID()+1)
	out[0].sw = -1
	for lid := 1; lid < len(out); lid++ {
		sw, term := g.Owner(lid)
		out[lid] = lidOwner{sw: sw}
		if term >= 0 {
			out[lid] = lidOwner{sw: g.Terms[term].Switch, port: g.Terms[term].SwitchPort}
		}
	}
	return out
}
