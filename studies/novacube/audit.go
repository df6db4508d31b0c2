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

// Paper is §5.3's claim: two VCs per direction, a ring hop on VC1 once
// the packet has crossed that ring's wrap-around (dateline) link, every
// other hop on VC0. One puts every hop on VC0.
var (
	Paper = Scheme{"dateline", 2, "§5.3: VC1 after the ring's dateline, jumps on VC0", datelineVC}
	One   = Scheme{"one", 1, "every hop on VC0", func(hopState) int { return 0 }}
)

func datelineVC(s hopState) int { return b2i(s.dim >= 0 && s.crossed) }

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
	seen, err := walkDeps(c, v, sc.VCs, sc.vc)
	if err != nil {
		return nil, fmt.Errorf("%w (scheme %q)", err, sc.Name)
	}
	g, from, err := auditCDG(c, seen, sc.VCs)
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

// walkDeps walks every path variant v may take on c and marks the
// dependencies between labelled channels it sees: index ((in channel ·
// L + in label) · slots + out slot) · L + out label, the label of a hop
// being label(its hopState) in [0, L).
func walkDeps(c *Cube, v Variant, L int, label func(hopState) int) ([]bool, error) {
	if c.Nodes() > MaxAuditNodes {
		return nil, fmt.Errorf("%w: the audit walks every path state; %d nodes exceed %d", ErrParam, c.Nodes(), MaxAuditNodes)
	}
	N, sl := c.Nodes(), c.slots()
	seen := make([]bool, N*sl*L*sl*L)
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
				lb := label(hs)
				if lb < 0 || lb >= L {
					return nil, fmt.Errorf("novacube: label %d of %d", lb, L)
				}
				if st.in >= 0 {
					seen[((st.in*L+st.inVC)*sl+h.slot)*L+lb] = true
				}
				stack = append(stack, auditState{u: c.dest(st.u, h.slot), mode: h.mode, quad: h.quad, crossed: ncr, crossedAll: nca,
					jumped: st.jumped || hs.jumpHere, in: st.u*sl + h.slot, inVC: lb})
			}
		}
	}
	return seen, nil
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
	if dor := r.dorSlot(st.u, st.quad, r.quadrantDOR() && st.mode == modeQuad); dor >= 0 {
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
		crossedAll |= r.jumpWraps(st.u, st.quad, r.quadrantDOR())
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
// in the packet's direction of travel there (the quadrant's for the
// quadrant readings,
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
