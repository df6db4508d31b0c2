package flitsim

import (
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// Minimal is a relation of minimal next hops, the candidates the adaptive
// policies choose among: every shortest path (Shortest), or a study's
// tables (the RSI two-level tables of seed 000 §IV-A). It is read-only and
// safe for concurrent use.
type Minimal interface {
	// AppendNext appends to buf the channels at switch x on minimal paths
	// to switch d (x != d).
	AppendNext(buf []int32, x, d int32) []int32
	// AppendToward appends the channels at x on minimal paths into group
	// t (x outside t).
	AppendToward(buf []int32, x, t int32) []int32
}

// Shortest is the Minimal relation of every shortest path between
// switches and into groups, with the hop distances UGAL weighs by.
type Shortest struct {
	g     *fabric.Graph
	S     int32
	ng    int32
	dist  []int16 // dist[d*S+x]: hops from switch x to switch d
	gdist []int16 // gdist[t*S+x]: hops from x into group t
}

// NewShortest computes the distances of g between switches and into the
// groups (one value per switch, nil: one group) by BFS. Errors wrap
// ErrConfig. Cost: O(S·(S+C)) time, 2·S·(S+G) bytes.
func NewShortest(g *fabric.Graph, groups []int) (*Shortest, error) {
	S := g.NumSwitches()
	group, ng, err := compileGroups(groups, S)
	if err != nil {
		return nil, fmt.Errorf("flitsim: %v: %w", err, ErrConfig)
	}
	if S*S > 1<<24 || int(ng)*S > 1<<24 {
		return nil, fmt.Errorf("flitsim: %d switches are too many for the distance tables: %w", S, ErrConfig)
	}
	sp := &Shortest{g: g, S: int32(S), ng: ng, dist: make([]int16, S*S), gdist: make([]int16, int(ng)*S)}
	q := make([]int32, 0, S)
	bfs := func(d []int16, src func(x int32) bool) {
		q = q[:0]
		for x := int32(0); x < sp.S; x++ {
			d[x] = -1
			if src(x) {
				d[x] = 0
				q = append(q, x)
			}
		}
		for h := 0; h < len(q); h++ {
			v := q[h]
			for c := g.Off[v]; c < g.Off[v+1]; c++ {
				if w := g.Head[c]; d[w] < 0 {
					d[w] = d[v] + 1
					q = append(q, w)
				}
			}
		}
	}
	for d := int32(0); d < sp.S; d++ {
		bfs(sp.dist[d*sp.S:(d+1)*sp.S], func(x int32) bool { return x == d })
	}
	for t := int32(0); t < ng; t++ {
		bfs(sp.gdist[t*sp.S:(t+1)*sp.S], func(x int32) bool { return group[x] == t })
	}
	return sp, nil
}

// Dist returns the hops from switch x to switch d (-1 unreachable).
func (sp *Shortest) Dist(x, d int32) int16 { return sp.dist[d*sp.S+x] }

// GroupDist returns the hops from switch x into group t (-1 unreachable).
func (sp *Shortest) GroupDist(x, t int32) int16 { return sp.gdist[t*sp.S+x] }

// AppendNext appends the channels at x on shortest paths to switch d.
func (sp *Shortest) AppendNext(buf []int32, x, d int32) []int32 {
	return sp.appendDown(buf, x, sp.dist[d*sp.S:(d+1)*sp.S])
}

// AppendToward appends the channels at x on shortest paths into group t.
func (sp *Shortest) AppendToward(buf []int32, x, t int32) []int32 {
	return sp.appendDown(buf, x, sp.gdist[t*sp.S:(t+1)*sp.S])
}

func (sp *Shortest) appendDown(buf []int32, x int32, row []int16) []int32 {
	g := sp.g
	dx := row[x]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if row[g.Head[c]] == dx-1 {
			buf = append(buf, c)
		}
	}
	return buf
}

// MaxDegree returns the most channels leaving any switch of g (the size
// routers give their candidate scratch).
func MaxDegree(g *fabric.Graph) int {
	deg := int32(0)
	for x := 0; x < g.NumSwitches(); x++ {
		deg = max(deg, g.Off[x+1]-g.Off[x])
	}
	return int(deg)
}

// AdaptiveKind selects one of the group-adaptive policies of this package.
type AdaptiveKind uint8

const (
	// MinAdaptive takes the least occupied minimal port.
	MinAdaptive AdaptiveKind = iota
	// Valiant sends every inter-group packet minimally to a random
	// intermediate group first (seed 002 VAL), then minimally on.
	Valiant
	// UGAL chooses per packet at the source switch between the minimal
	// port and a Valiant path through a random group by queue length ×
	// hops (UGAL-L).
	UGAL
	// Conditional is seed 002 §V-D: the minimal default next hop,
	// disabled while its output is paused (downstream buffer filled to
	// Threshold); then, at the source switch, the source's static Valiant
	// alternative (one of its own global ports, chosen per source node).
	Conditional
)

var adaptiveNames = []string{"min", "val", "ugal", "conditional"}

// String returns the kind's name as ParseAdaptiveKind reads it.
func (k AdaptiveKind) String() string {
	if int(k) < len(adaptiveNames) {
		return adaptiveNames[k]
	}
	return fmt.Sprintf("AdaptiveKind(%d)", k)
}

// ParseAdaptiveKind reads min, val, ugal or conditional.
func ParseAdaptiveKind(s string) (AdaptiveKind, error) {
	for i, n := range adaptiveNames {
		if strings.EqualFold(s, n) {
			return AdaptiveKind(i), nil
		}
	}
	return 0, fmt.Errorf("flitsim: adaptive policy %q, expected one of %s: %w", s, strings.Join(adaptiveNames, ", "), ErrConfig)
}

// Adaptive configures a group-adaptive policy. These policies need
// nothing but the fabric and its switch groups (Dragonfly groups, RSI
// super nodes).
type Adaptive struct {
	Kind AdaptiveKind
	// SwitchGroups gives per switch its group; Valiant, UGAL and
	// Conditional need at least 2 groups.
	SwitchGroups []int
	// Minimal is the relation of minimal ports; nil: every shortest path.
	Minimal Minimal
	// Threshold is Conditional's pause level, as a fraction of one input
	// buffer, in (0, 4] (default 0.6).
	Threshold float64
	// UGALBias is added to the Valiant side of UGAL's comparison (flits).
	UGALBias float64
}

// DefaultThreshold is the default LAR and Conditional threshold.
const DefaultThreshold = 0.6

// CheckThreshold returns th with its default applied, or an error wrapping
// ErrConfig when it is outside (0, 4].
func CheckThreshold(th float64) (float64, error) {
	if th == 0 {
		th = DefaultThreshold
	}
	if !(th > 0 && th <= 4) {
		return 0, fmt.Errorf("flitsim: threshold %g, expected (0, 4]: %w", th, ErrConfig)
	}
	return th, nil
}

// adaptive is an Adaptive compiled against a fabric.
type adaptive struct {
	Adaptive
	th    float64
	sp    *Shortest
	min   Minimal
	group []int32
	ng    int32
	deg   int
}

// NewAdaptive compiles a onto fabric g. Errors wrap ErrConfig. Cost: that
// of NewShortest.
func NewAdaptive(g *fabric.Graph, a Adaptive) (Policy, error) {
	if a.Kind > Conditional {
		return nil, fmt.Errorf("flitsim: adaptive policy kind %d: %w", a.Kind, ErrConfig)
	}
	th, err := CheckThreshold(a.Threshold)
	if err != nil {
		return nil, err
	}
	p := &adaptive{Adaptive: a, th: th, deg: MaxDegree(g)}
	if p.group, p.ng, err = compileGroups(a.SwitchGroups, g.NumSwitches()); err != nil {
		return nil, fmt.Errorf("flitsim: %s: %v: %w", a.Kind, err, ErrConfig)
	}
	if a.Kind != MinAdaptive && p.ng < 2 {
		return nil, fmt.Errorf("flitsim: %s needs switch groups, at least 2: %w", a.Kind, ErrConfig)
	}
	if p.sp, err = NewShortest(g, a.SwitchGroups); err != nil {
		return nil, err
	}
	p.min = a.Minimal
	if p.min == nil {
		p.min = p.sp
	}
	return p, nil
}

// Name returns e.g. "ugal" or "conditional(th=0.6)".
func (p *adaptive) Name() string {
	if p.Kind == Conditional {
		return fmt.Sprintf("%s(th=%g)", p.Kind, p.th)
	}
	return p.Kind.String()
}

// Groups returns the switch groups.
func (p *adaptive) Groups() []int { return p.SwitchGroups }

// NewRouter returns a router with its own candidate scratch.
func (p *adaptive) NewRouter() Router {
	return &adaptiveRouter{adaptive: p, cand: make([]int32, 0, p.deg), alt: make([]int32, 0, p.deg)}
}

type adaptiveRouter struct {
	*adaptive
	cand, alt []int32
}

// Next picks the hop by the policy's kind.
func (r *adaptiveRouter) Next(h *Hop) int32 {
	switch r.Kind {
	case Valiant, UGAL:
		return r.valiant(h)
	case Conditional:
		return r.conditional(h)
	}
	return h.LeastOccupied(h.Minimal(r.min, r.cand[:0]), h.State().Phase)
}

// valiant routes VAL and UGAL: at the source switch an inter-group packet
// draws a random intermediate group (neither its own nor the
// destination's); VAL always aims at it, UGAL only when the minimal
// port's queue × hops exceeds the Valiant port's queue × hops plus
// UGALBias. Then minimally (to the intermediate group first).
func (r *adaptiveRouter) valiant(h *Hop) int32 {
	x, d, ps := h.Switch(), h.DestSwitch(), h.State()
	xg, dg := r.group[x], r.group[d]
	if ps.Hops == 0 && xg != dg && r.ng > 2 {
		t := otherGroup(h.Rand().Int32N(r.ng-2), xg, dg)
		aim := r.Kind == Valiant
		if !aim {
			pm := h.LeastOccupied(h.Minimal(r.min, r.cand[:0]), 0)
			ps.Target = t + 1
			pv := h.LeastOccupied(h.Minimal(r.min, r.cand[:0]), 1)
			ps.Target = 0
			hm := float64(r.sp.Dist(x, d))
			hv := float64(r.sp.GroupDist(x, t) + r.sp.GroupDist(d, t))
			aim = pm < 0 || pv >= 0 && float64(h.Queue(pm, 0))*hm > float64(h.Queue(pv, 1))*hv+r.UGALBias
		}
		if aim {
			ps.Target, ps.Phase = t+1, 1
			h.Misroute()
		}
	}
	return h.LeastOccupied(h.Minimal(r.min, r.cand[:0]), ps.Phase)
}

// otherGroup maps r in 0..ng−3 to the r-th group other than a and b.
func otherGroup(r, a, b int32) int32 {
	lo, hi := min(a, b), max(a, b)
	if r >= lo {
		r++
	}
	if r >= hi {
		r++
	}
	return r
}

// paused reports whether the downstream buffer behind c is filled to the
// threshold (Ethernet PAUSE, seed 002 §V-D).
func (r *adaptiveRouter) paused(h *Hop, c int32, ph uint8) bool {
	return float64(h.Fill(c, ph)) >= r.th*float64(h.BufferFlits())
}

// conditional is seed 002 §V-D: minimal rules toward remote groups are
// defaults, disabled while their output is paused; then a packet at its
// source switch takes its source's static alternative: the switch's own
// global ports to groups other than the destination's, tried from a
// position fixed by the source node, the first not paused (the paper has
// one unconditional alternative per host; skipping a paused one keeps
// UN throughput near MIN), else the default.
func (r *adaptiveRouter) conditional(h *Hop) int32 {
	x, ps, g := h.Switch(), h.State(), r.sp.g
	pa := h.LeastOccupied(h.Minimal(r.min, r.cand[:0]), ps.Phase)
	xg, dg := r.group[x], r.group[h.DestSwitch()]
	if pa < 0 || ps.Hops != 0 || xg == dg || !r.paused(h, pa, 0) {
		return pa
	}
	alt := r.alt[:0]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if hg := r.group[g.Head[c]]; hg != xg && hg != dg {
			alt = append(alt, c)
		}
	}
	r.alt = alt
	for i := range alt {
		if c := alt[(int(h.Source())+i)%len(alt)]; !r.paused(h, c, 1) {
			ps.Phase = 1
			h.Misroute()
			return c
		}
	}
	return pa
}
