package rsi

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
)

// The simulator side of RSI: the two-level tables as flitsim's minimal
// relation and LAR (seed 000 Algorithm 1) as a flitsim.Policy, registered
// as "two-level", "lar" and "lar-toward".

func init() {
	flitsim.RegisterMinimal("two-level", func(g *fabric.Graph, groups []int) (flitsim.Minimal, error) {
		t, err := Build(g, groups)
		if err != nil {
			return nil, err
		}
		return t, nil
	})
	for _, toward := range []bool{false, true} {
		name := "lar"
		if toward {
			name = "lar-toward"
		}
		flitsim.RegisterPolicy(name, func(env flitsim.PolicyEnv) (flitsim.Policy, error) {
			m, err := env.Minimal()
			if err != nil {
				return nil, err
			}
			return NewLAR(env.Graph, LAR{SwitchGroups: env.Groups, Minimal: m, Threshold: env.Threshold, Toward: toward})
		})
	}
}

// AppendNext appends the entry of x toward switch d (flitsim.Minimal).
func (t *Tables) AppendNext(buf []int32, x, d int32) []int32 {
	return append(buf, t.Lookup(x, d)...)
}

// AppendToward appends x's T2 entry toward super node sn (flitsim.Minimal).
func (t *Tables) AppendToward(buf []int32, x, sn int32) []int32 {
	return append(buf, t.T2(x, int(sn))...)
}

// LAR configures seed 000 Algorithm 1 (local adaptive routing): the
// least occupied minimal port P_A unless its queue is at or above the
// threshold and the packet has not misrouted; then a random port under
// the threshold toward the right region, phase bit set, at most one
// misroute.
type LAR struct {
	// SwitchGroups gives per switch its super node (at least 2); nil:
	// those of Minimal when it is Tables.
	SwitchGroups []int
	// Minimal is the relation of minimal ports, normally the Tables of
	// the same groups; nil: every shortest path.
	Minimal flitsim.Minimal
	// Threshold is Th as a fraction of one input buffer, in (0, 4]
	// (default 0.6).
	Threshold float64
	// Toward reads "ports to other super nodes" as any port toward
	// another super node (vcaudit's lar-toward); false: the switch's own
	// global ports (lar-own).
	Toward bool
}

type lar struct {
	LAR
	th    float64
	g     *fabric.Graph
	group []int32
	ng    int32
	deg   int
}

// NewLAR compiles l onto fabric g. Errors wrap flitsim.ErrConfig.
func NewLAR(g *fabric.Graph, l LAR) (flitsim.Policy, error) {
	th, err := flitsim.CheckThreshold(l.Threshold)
	if err != nil {
		return nil, err
	}
	S := g.NumSwitches()
	if t, ok := l.Minimal.(*Tables); ok && l.SwitchGroups == nil {
		l.SwitchGroups = t.Group
	}
	if len(l.SwitchGroups) != S {
		return nil, fmt.Errorf("rsi: LAR: %d group entries for %d switches: %w", len(l.SwitchGroups), S, flitsim.ErrConfig)
	}
	p := &lar{LAR: l, th: th, g: g, group: make([]int32, S), deg: flitsim.MaxDegree(g)}
	for x, v := range l.SwitchGroups {
		if v < 0 {
			return nil, fmt.Errorf("rsi: LAR: switch %d in group %d: %w", x, v, flitsim.ErrConfig)
		}
		p.group[x] = int32(v)
		p.ng = max(p.ng, int32(v)+1)
	}
	if p.ng < 2 {
		return nil, fmt.Errorf("rsi: LAR needs at least 2 super nodes: %w", flitsim.ErrConfig)
	}
	if t, ok := l.Minimal.(*Tables); ok && t.G != g {
		return nil, fmt.Errorf("rsi: LAR: two-level tables of another fabric: %w", flitsim.ErrConfig)
	}
	if p.Minimal == nil {
		if p.Minimal, err = flitsim.NewShortest(g, l.SwitchGroups); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Name returns "lar(lar-own,th=0.6)" or "lar(lar-toward,…)".
func (p *lar) Name() string {
	r := "lar-own"
	if p.Toward {
		r = "lar-toward"
	}
	return fmt.Sprintf("lar(%s,th=%g)", r, p.th)
}

// Groups returns the super nodes.
func (p *lar) Groups() []int { return p.SwitchGroups }

// NewRouter returns a router with its own candidate scratch: a switch's
// ports, once per target super node.
func (p *lar) NewRouter() flitsim.Router {
	n := p.deg * int(p.ng+1)
	return &larRouter{lar: p, cand: make([]int32, 0, p.deg), alt: make([]int32, 0, n), tgt: make([]int32, 0, n)}
}

type larRouter struct {
	*lar
	cand, alt, tgt []int32
}

// over reports whether channel c's queue is at or above the threshold.
func (r *larRouter) over(h *flitsim.Hop, c int32, ph uint8) bool {
	return float64(h.Queue(c, ph)) >= r.th*float64(h.BufferFlits())
}

// Next is Algorithm 1. P_A is the least occupied minimal port. Misroute
// candidates are the ports other than P_A under Th: inside the
// destination's super node, its local ports; elsewhere the switch's own
// global ports, plus with Toward the local ports toward another super
// node's gateway (the packet then aims at that super node), as vcaudit's
// lar-own and lar-toward.
func (r *larRouter) Next(h *flitsim.Hop) int32 {
	x, ps, g := h.Switch(), h.State(), r.g
	pa := h.LeastOccupied(h.Minimal(r.Minimal, r.cand[:0]), ps.Phase)
	if pa < 0 || ps.Phase != 0 || !r.over(h, pa, 0) {
		return pa
	}
	alt, tgt := r.alt[:0], r.tgt[:0]
	xg, dg := r.group[x], r.group[h.DestSwitch()]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		hg := r.group[g.Head[c]]
		if c != pa && (xg == dg) == (hg == xg) && !r.over(h, c, 1) {
			alt, tgt = append(alt, c), append(tgt, 0)
		}
	}
	if r.Toward && xg != dg {
		for t := int32(0); t < r.ng; t++ {
			if t == xg || t == dg {
				continue
			}
			for _, c := range r.Minimal.AppendToward(r.cand[:0], x, t) {
				if c != pa && r.group[g.Head[c]] == xg && !r.over(h, c, 1) {
					alt, tgt = append(alt, c), append(tgt, t+1)
				}
			}
		}
	}
	r.alt, r.tgt = alt, tgt
	if len(alt) == 0 {
		return pa
	}
	i := h.Rand().IntN(len(alt))
	ps.Phase, ps.Target = 1, tgt[i]
	h.Misroute()
	return alt[i]
}
