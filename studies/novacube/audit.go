package novacube

import (
	"fmt"

	"github.com/nuesm/nuesm/cdg"
)

// Scheme is a virtual-channel assignment: the VC of each hop from the
// packet's history (datelines crossed per dimension, whether it jumped)
// and its routing state.
type Scheme struct {
	Name string
	VCs  int
	Doc  string
	vc   func(st hopState) int
}

// hopState is what a scheme may look at for one hop.
type hopState struct {
	dim      int  // dimension of a ring hop, -1 for a jump
	crossed  bool // the packet already crossed dim's dateline
	jumped   bool // the packet took a jump before this hop
	step1    bool // the hop is a step-1 hop of §5.1.1 (source choice)
	jumpHere bool // this hop is a jump
	// crossedAll is the packet's crossed mask counting jumps that pass a
	// dateline in the direction of travel; dorDim is the dimension DOR
	// would correct next (for a jump hop: the ring it cuts short).
	crossedAll int
	dorDim     int
	dorMinus   bool // DOR travels dorDim in direction −1
}

// Schemes are the VC assignments the audit tries. "dateline" is §5.3's
// claim: two VCs per direction, a ring hop on VC1 once the packet has
// crossed that ring's wrap-around (dateline) link, jump hops on VC0.
var Schemes = []Scheme{
	{"one", 1, "every hop on VC0", func(hopState) int { return 0 }},
	{"dateline", 2, "§5.3: VC1 after the ring's dateline, jumps on VC0", datelineVC},
	{"jump-phase", 2, "VC1 from the first jump on", func(s hopState) int { return b2i(s.jumped || s.jumpHere) }},
	{"dateline+jump-vc", 3, "dateline, jump hops on a VC2 of their own", func(s hopState) int {
		if s.jumpHere {
			return 2
		}
		return datelineVC(s)
	}},
	{"dateline×jump-phase", 4, "a dateline pair before the first jump, another from it on", func(s hopState) int {
		return 2*b2i(s.jumped || s.jumpHere) + datelineVC(s)
	}},
	{"dateline×step", 4, "a dateline pair for step-1 hops, another for the quadrant", func(s hopState) int {
		return 2*b2i(!s.step1) + datelineVC(s)
	}},
	{"dateline*", 2, "dateline where a jump that passes a dateline counts as crossing it, and a jump takes the VC of the ring DOR is in", jumpDatelineVC},
	{"dateline*×step", 4, "dateline* pairs, one for step-1 hops and one for the quadrant", func(s hopState) int {
		return 2*b2i(!s.step1) + jumpDatelineVC(s)
	}},
	{"dateline*×step±", 6, "dateline*×step, quadrant jumps on a dateline pair per direction of travel (VC2-3 +, VC4-5 −)", func(s hopState) int {
		if s.jumpHere && !s.step1 {
			return 2 + 2*b2i(s.dorMinus) + jumpDatelineVC(s)
		}
		return 2*b2i(!s.step1) + jumpDatelineVC(s)
	}},
}

func datelineVC(s hopState) int { return b2i(s.dim >= 0 && s.crossed) }

func jumpDatelineVC(s hopState) int {
	d := s.dim
	if d < 0 {
		d = s.dorDim
	}
	return b2i(d >= 0 && s.crossedAll>>d&1 == 1)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MaxAuditNodes bounds the cubes Audit accepts.
const MaxAuditNodes = 512

// AuditResult is the verdict on one (variant, scheme).
type AuditResult struct {
	Variant  Variant
	Scheme   Scheme
	Edges    int   // dependencies between virtual channels
	Acyclic  bool  // no cycle: deadlock-free
	CycleLen int   // length of the cycle found, 0 when acyclic
	Cycle    []int // the cycle's channels as "node:slot·VCs+vc" ids (first few)
}

// Audit builds the channel dependency graph over (channel, VC) of every
// path variant v may take on c, under scheme sc, and checks it with
// cdg.FindCycle. Paths start at every node towards every other node; the
// walk visits each (node, routing state, history, incoming channel and
// VC) once per destination.
func Audit(c *Cube, v Variant, sc Scheme) (*AuditResult, error) {
	if sc.vc == nil {
		return nil, fmt.Errorf("%w: scheme %q has no VC rule", ErrParam, sc.Name)
	}
	if c.Nodes() > MaxAuditNodes {
		return nil, fmt.Errorf("%w: the audit walks every path state; %d nodes exceed %d", ErrParam, c.Nodes(), MaxAuditNodes)
	}
	N, sl, V := c.Nodes(), c.slots(), sc.VCs
	C := N * sl
	seen := make([]bool, C*V*sl*V) // (in channel, in VC, out slot, out VC)
	visited := map[auditState]bool{}
	var stack []auditState
	for d := 0; d < N; d++ {
		r := newRouter(c, d, v)
		clear(visited)
		for s := 0; s < N; s++ {
			if s != d {
				stack = append(stack, auditState{u: s, mode: modeSrc, in: -1})
			}
		}
		for len(stack) > 0 {
			st := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if st.u == d || visited[st] {
				continue
			}
			visited[st] = true
			for _, h := range r.next(nil, st.u, st.mode, st.quad) {
				if h.p <= 0 {
					continue
				}
				hs, ncr, nca := r.hopState(st, h)
				vc := sc.vc(hs)
				if vc < 0 || vc >= V {
					return nil, fmt.Errorf("novacube: scheme %q gave VC %d of %d", sc.Name, vc, V)
				}
				if st.in >= 0 {
					seen[((st.in*V+st.inVC)*sl+h.slot)*V+vc] = true
				}
				stack = append(stack, auditState{u: c.dest(st.u, h.slot), mode: h.mode, quad: h.quad, crossed: ncr, crossedAll: nca,
					jumped: st.jumped || hs.jumpHere, in: st.u*sl + h.slot, inVC: vc})
			}
		}
	}
	g, from, err := auditCDG(c, seen, V)
	if err != nil {
		return nil, err
	}
	res := &AuditResult{Variant: v, Scheme: sc, Edges: len(from)}
	cyc := cdg.FindCycle(g)
	res.Acyclic = cyc == nil
	res.CycleLen = len(cyc)
	for i, x := range cyc {
		if i == 8 {
			break
		}
		res.Cycle = append(res.Cycle, int(x))
	}
	return res, nil
}

// auditState is where the audit's walk stands: the node, the routing
// state, the datelines crossed (per dimension, on ring hops and on every
// hop), whether the path jumped, and the channel and VC it came in on.
type auditState struct {
	u, mode, quad int
	crossed       int
	crossedAll    int
	jumped        bool
	in, inVC      int // in channel (-1 at the source) and its VC
}

// hopState describes hop h from st for the VC rules and returns the
// dateline sets after it.
func (r *router) hopState(st auditState, h hop) (hs hopState, crossed, crossedAll int) {
	c := r.c
	hs = hopState{dim: -1, jumped: st.jumped, step1: st.mode != modeQuad, jumpHere: h.slot == 2*c.N,
		crossedAll: st.crossedAll, dorDim: -1}
	crossed, crossedAll = st.crossed, st.crossedAll
	if dor := r.dorSlot(st.u, st.quad, r.v == Literal && st.mode == modeQuad); dor >= 0 {
		hs.dorDim, hs.dorMinus = dor/2, dor%2 == 1
	}
	if !hs.jumpHere {
		hs.dim = h.slot / 2
		hs.crossed = st.crossed>>hs.dim&1 == 1
		x, dir := c.coord(st.u, hs.dim), 1-2*(h.slot%2)
		if (dir == 1 && x == c.K-1) || (dir == -1 && x == 0) {
			crossed |= 1 << hs.dim
			crossedAll |= 1 << hs.dim
		}
	} else if st.mode == modeQuad {
		crossedAll |= r.jumpWraps(st.u, st.quad, r.v == Literal)
	}
	return hs, crossed, crossedAll
}

// auditCDG turns the seen (in channel, in VC, out slot, out VC)
// dependencies into the CDG over (channel, VC) vertices; from lists the
// tail of every edge.
func auditCDG(c *Cube, seen []bool, V int) (*cdg.CSR, []int32, error) {
	sl := c.slots()
	var from, to []int32
	for i, ok := range seen {
		if !ok {
			continue
		}
		vcOut := i % V
		slotOut := i / V % sl
		vcIn := i / (V * sl) % V
		in := i / (V * sl * V)
		head := c.dest(in/sl, in%sl)
		from = append(from, int32(in*V+vcIn))
		to = append(to, int32((head*sl+slotOut)*V+vcOut))
	}
	g, err := cdg.NewCSR(c.Nodes()*sl*V, from, to)
	return g, from, err
}

// jumpWraps returns the dimensions whose dateline u's jump passes, each
// in the packet's direction of travel there (the quadrant's for Literal,
// else the shorter way to d).
func (r *router) jumpWraps(u, quad int, useQuad bool) int {
	c := r.c
	j := c.Jump(u)
	m := 0
	for i := 0; i < c.N; i++ {
		a, b, t := c.coord(u, i), c.coord(j, i), c.coord(r.d, i)
		dir := 1
		switch {
		case useQuad:
			dir = 1 - 2*(quad>>i&1)
		case a != t:
			dir = minDir(a, t, c.K, r.par)
		}
		if (dir == 1 && b < a) || (dir == -1 && b > a) {
			m |= 1 << i
		}
	}
	return m
}

// MinVCs returns, for variant v on c, the audit of every scheme and the
// fewest VCs of an acyclic one (0 when none is).
func MinVCs(c *Cube, v Variant) ([]*AuditResult, int, error) {
	var out []*AuditResult
	best := 0
	for _, sc := range Schemes {
		r, err := Audit(c, v, sc)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
		if r.Acyclic && (best == 0 || sc.VCs < best) {
			best = sc.VCs
		}
	}
	return out, best, nil
}

// ChannelName renders a vertex of the audit CDG: "(x,y)->jump/VC1" or
// "(x,y)->+d0/VC0".
func (c *Cube) ChannelName(vertex, vcs int) string {
	sl := c.slots()
	ch, vc := vertex/vcs, vertex%vcs
	u, s := ch/sl, ch%sl
	x := c.coords(u, make([]int, c.N))
	lbl := "("
	for i, v := range x {
		if i > 0 {
			lbl += ","
		}
		lbl += fmt.Sprint(v)
	}
	lbl += ")"
	if s == 2*c.N {
		return fmt.Sprintf("%s->jump/VC%d", lbl, vc)
	}
	return fmt.Sprintf("%s->%c%d/VC%d", lbl, "+-"[s%2], s/2, vc)
}
