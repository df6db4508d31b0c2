package novacube

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
)

// PORA per hop in the simulator: the same next-hop relation as
// ExpectedAPL (router.next), drawn at random by eq. 12's probabilities
// from the switch's stream. Registered as "pora-literal" and
// "pora-minimal" for fabrics made by topo's novacube generator.

func init() {
	for _, v := range []Variant{Literal, Minimal} {
		flitsim.RegisterPolicy("pora-"+string(v), func(env flitsim.PolicyEnv) (flitsim.Policy, error) {
			c, err := cubeOf(env)
			if err != nil {
				return nil, err
			}
			return NewPolicy(env.Graph, c, v)
		})
	}
}

// cubeOf returns the NovaCube a generated novacube fabric is.
func cubeOf(env flitsim.PolicyEnv) (*Cube, error) {
	if env.Kind != "novacube" || len(env.Coords) == 0 {
		return nil, fmt.Errorf("novacube: PORA needs a fabric made by the novacube generator: %w", flitsim.ErrConfig)
	}
	k := 0
	for _, c := range env.Coords {
		for _, x := range c {
			k = max(k, x+1)
		}
	}
	return NewCube(k, len(env.Coords[0]), true)
}

// maxPolicyNodes bounds the minimal reading, which keeps the BFS
// distances of every pair.
const maxPolicyNodes = 2048

// policy is PORA on a fabric whose switch i is node i of the cube.
type policy struct {
	c       *Cube
	v       Variant
	routers []router // per destination node
	slot    []int32  // node*slots+slot -> channel, -1 none
}

// NewPolicy returns PORA reading v (Literal or Minimal) on fabric g, whose
// switch i must be node i of c with every cable of c. Errors wrap
// flitsim.ErrConfig. Cost: O(N²) time and memory for Minimal (N nodes).
func NewPolicy(g *fabric.Graph, c *Cube, v Variant) (flitsim.Policy, error) {
	bad := func(format string, args ...any) (flitsim.Policy, error) {
		return nil, fmt.Errorf("novacube: PORA: %s: %w", fmt.Sprintf(format, args...), flitsim.ErrConfig)
	}
	if c == nil {
		return bad("no cube")
	}
	if v != Literal && v != Minimal {
		return bad("variant %q, expected %s or %s", v, Literal, Minimal)
	}
	N := c.Nodes()
	if N != g.NumSwitches() || !c.Nova || c.N > 6 {
		return bad("cube of %d nodes (%d dimensions) for %d switches", N, c.N, g.NumSwitches())
	}
	if v == Minimal && N > maxPolicyNodes {
		return bad("minimal PORA keeps all distances: %d nodes exceed %d", N, maxPolicyNodes)
	}
	p := &policy{c: c, v: v, routers: make([]router, N), slot: make([]int32, N*c.slots())}
	for d := range p.routers {
		p.routers[d] = *newRouter(c, d, v)
	}
	used := make([]bool, g.NumChannels())
	W := c.slots()
	for u := 0; u < N; u++ {
		for s := 0; s < W; s++ {
			p.slot[u*W+s] = -1
			w := c.dest(u, s)
			if w < 0 {
				continue
			}
			for ch := g.Off[u]; ch < g.Off[u+1]; ch++ {
				if int(g.Head[ch]) == w && !used[ch] {
					p.slot[u*W+s], used[ch] = ch, true
					break
				}
			}
			if p.slot[u*W+s] < 0 {
				return bad("the fabric has no cable from switch %d to %d (slot %d): not this cube", u, w, s)
			}
		}
	}
	return p, nil
}

// Name returns "pora(literal)" or "pora(minimal)".
func (p *policy) Name() string { return "pora(" + string(p.v) + ")" }

// Groups returns nil: a NovaCube has no groups.
func (p *policy) Groups() []int { return nil }

// NewRouter returns a router with its own hop scratch.
func (p *policy) NewRouter() flitsim.Router { return &simRouter{policy: p} }

type simRouter struct {
	*policy
	buf [16]hop
}

// Next draws the packet's hop at its switch; its mode and quadrant travel
// in PacketState.Mode and Quad.
func (r *simRouter) Next(h *flitsim.Hop) int32 {
	x, ps := h.Switch(), h.State()
	hs := r.routers[h.DestSwitch()].next(r.buf[:0], int(x), int(ps.Mode), int(ps.Quad))
	if len(hs) == 0 {
		return -1
	}
	c := hs[len(hs)-1]
	if len(hs) > 1 {
		rnd := h.Rand().Float64()
		for _, cand := range hs {
			if rnd -= cand.p; rnd < 0 {
				c = cand
				break
			}
		}
	}
	ps.Mode, ps.Quad = uint8(c.mode), uint8(c.quad)
	return r.slot[int(x)*r.c.slots()+c.slot]
}
