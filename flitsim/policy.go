package flitsim

import (
	"fmt"
	"math/rand/v2"
)

// Per-hop routing. A Policy replaces the LFT lookup: when a head flit
// arrives at a switch, the policy's Router picks the output channel from
// the packet's routing state (PacketState) and the switch's view of its
// output queues (Hop). A VCPolicy replaces SL2VL for switch hops. The
// interfaces are small and defined here, by their consumer: the LFT
// (LFTPolicy) and the group-adaptive rules (adaptive.go) are
// implementations in this package; the seed studies implement others from
// their own packages (LAR in studies/rsi, PORA in studies/novacube, the VC
// rules in studies/vcpolicy).

// Policy is a per-hop routing policy. A Policy is shared by concurrent
// runs and must be read-only; per-run scratch state belongs to its Router.
type Policy interface {
	// Name describes the policy, e.g. "lar(lar-own,th=0.6)".
	Name() string
	// Groups returns the switch group of every switch the policy routes
	// by (nil: one group). The run counts local and global hops by them
	// and the VC policy sees them.
	Groups() []int
	// NewRouter returns the router of one run; a run calls it from one
	// goroutine.
	NewRouter() Router
}

// Router picks the output channel of the packet at h.Switch().
type Router interface {
	// Next returns a fabric.Graph channel leaving h.Switch() (which is
	// not the destination's switch), or -1 to follow the LFT.
	Next(h *Hop) int32
}

// VCPolicy assigns the VL of every switch-to-switch hop and of the hop
// into the destination's switch from the packet's hop counters, instead
// of SL2VL. The injection and ejection hops use the traffic class's VL
// offset. A VCPolicy is shared by concurrent runs and must be read-only.
type VCPolicy interface {
	// Name describes the policy, e.g. "hops:7".
	Name() string
	// NumVCs is the number of VCs (VLs) the policy uses, 1..16.
	NumVCs() int
	// HopVC returns the VC of hop h in 0..NumVCs()-1 and whether the hop
	// asks for a VC the policy lacks (then it gets the top VC and the run
	// counts it in Result.VCOverflow).
	HopVC(h VCHop) (vc int, overflow bool)
}

// VCHop is what a VCPolicy sees of one hop: counters before the hop.
type VCHop struct {
	Global      bool // the channel joins two groups
	Hops        int  // hops taken before this one
	LocalHops   int
	GlobalHops  int
	HopsInGroup int
	Phase       int  // 1 once the packet has misrouted (this hop included)
	IntoDest    bool // the hop ends in the destination's group
}

// PacketState is the routing state a packet carries from hop to hop. The
// run updates the hop counters after every hop; a Router reads them and
// sets the rest.
type PacketState struct {
	// Switch-to-switch hops taken: all, inside groups, between groups, and
	// since entering the current group (saturating at 255).
	Hops, Local, Global, InGroup uint8
	// Phase is the misroute phase bit (VC policies read it).
	Phase uint8
	// Mode and Quad are free for the policy (PORA's mode and quadrant).
	Mode, Quad uint8
	// Target is the group + 1 the packet heads for first (Valiant's
	// intermediate group), 0 none; the run clears it on entering that
	// group.
	Target int32
}

// LFTPolicy is the static tables as a Policy: every hop follows the LFT.
// With switch groups and a VC policy it gives the VC policy the hop
// counters of LFT paths.
type LFTPolicy struct {
	// SwitchGroups gives per switch its group; nil: one group.
	SwitchGroups []int
}

// Name returns "lft".
func (LFTPolicy) Name() string { return "lft" }

// Groups returns the switch groups.
func (p LFTPolicy) Groups() []int { return p.SwitchGroups }

// NewRouter returns a router that always follows the LFT.
func (LFTPolicy) NewRouter() Router { return lftRouter{} }

type lftRouter struct{}

func (lftRouter) Next(*Hop) int32 { return -1 }

// policy is a Policy and a VCPolicy compiled against a Network.
type policy struct {
	p     Policy
	vc    VCPolicy
	name  string
	group []int32 // switch -> group
	ng    int32
}

// Name describes the routing, e.g. "lar(lar-own,th=0.6)+df-2vc".
func (pol *policy) Name() string { return pol.name }

// WithRouting returns a copy of n that routes by p (nil: the LFT) and
// assigns switch-hop VLs by vc (nil: SL2VL); n is unchanged and both stay
// safe for concurrent use. Errors wrap ErrConfig.
func (n *Network) WithRouting(p Policy, vc VCPolicy) (*Network, error) {
	if p == nil {
		p = LFTPolicy{}
	}
	bad := func(format string, args ...any) (*Network, error) {
		return nil, fmt.Errorf("flitsim: routing %s: %s: %w", p.Name(), fmt.Sprintf(format, args...), ErrConfig)
	}
	group, ng, err := compileGroups(p.Groups(), n.g.NumSwitches())
	if err != nil {
		return bad("%v", err)
	}
	c := *n
	pol := &policy{p: p, vc: vc, name: p.Name(), group: group, ng: ng}
	if vc != nil {
		pol.name += "+" + vc.Name()
		vcs := vc.NumVCs()
		if vcs < 1 || vcs > 16 {
			return bad("VC policy %s has %d VCs, expected 1..16", vc.Name(), vcs)
		}
		c.maxVL = vcs - 1
		if err := c.setLanes(max(vcs, n.cfg.VLs)); err != nil {
			return nil, err
		}
		if a := n.cfg.VLArb; a != nil {
			for vl := 0; vl < vcs; vl++ {
				if !arbHas(a, uint8(vl)) {
					return bad("VL arbitration gives VL %d, which the VC policy uses, no weight", vl)
				}
			}
		}
	}
	c.pol = pol
	return &c, nil
}

// compileGroups checks one group per switch (nil: all in group 0) and
// returns them with the number of groups.
func compileGroups(groups []int, S int) ([]int32, int32, error) {
	if groups != nil && len(groups) != S {
		return nil, 0, fmt.Errorf("%d group entries for %d switches", len(groups), S)
	}
	group := make([]int32, S)
	var ng int32 = 1
	for x, v := range groups {
		if v < 0 || v >= 1<<24 {
			return nil, 0, fmt.Errorf("switch %d in group %d", x, v)
		}
		group[x] = int32(v)
		ng = max(ng, int32(v)+1)
	}
	return group, ng, nil
}

// PolicyName returns the name of the per-hop routing ("" for the LFT of
// a network without WithRouting).
func (n *Network) PolicyName() string {
	if n.pol == nil {
		return ""
	}
	return n.pol.name
}

// Hop is a routing decision in progress: a packet's head at a switch. It
// is valid during one Router.Next call.
type Hop struct {
	s  *sim
	pk *packet
	x  int32
}

// Switch returns the switch deciding.
func (h *Hop) Switch() int32 { return h.x }

// DestSwitch returns the switch of the packet's destination.
func (h *Hop) DestSwitch() int32 { return h.s.n.nodeSw[h.pk.dst] }

// Source returns the packet's source node.
func (h *Hop) Source() int32 { return h.pk.src }

// State returns the packet's routing state, which the router may change.
func (h *Hop) State() *PacketState { return &h.pk.ps }

// Group returns the group of switch x (the policy's Groups).
func (h *Hop) Group(x int32) int32 { return h.s.n.pol.group[x] }

// NumGroups returns the number of groups.
func (h *Hop) NumGroups() int32 { return h.s.n.pol.ng }

// BufferFlits returns the depth of one input VL buffer.
func (h *Hop) BufferFlits() int32 { return int32(h.s.cfg.BufferFlits) }

// Rand returns the switch's random stream (one PCG stream per switch and
// run, so runs repeat for a seed).
func (h *Hop) Rand() *rand.Rand { return h.s.swRng[h.x] }

// Misroute counts the packet as misrouted (when it is measured).
func (h *Hop) Misroute() {
	if h.pk.measured {
		h.s.misrouted++
	}
}

// Fill returns the flits in the downstream buffer behind channel c on the
// VC the packet would take there with phase ph (from credits).
func (h *Hop) Fill(c int32, ph uint8) int32 {
	s := h.s
	vl := s.hopVC(h.x, 0, c, h.pk, ph)
	return int32(s.cfg.BufferFlits) - s.ov[c<<s.vs|int32(vl)].credits
}

// Queue returns the flits waiting at the switch for channel c plus
// Fill(c, ph).
func (h *Hop) Queue(c int32, ph uint8) int32 { return h.s.outPend[c] + h.Fill(c, ph) }

// LeastOccupied returns the candidate with the shortest Queue (phase ph),
// ties broken from a random start; -1 for none.
func (h *Hop) LeastOccupied(cs []int32, ph uint8) int32 {
	switch len(cs) {
	case 0:
		return -1
	case 1:
		return cs[0]
	}
	k := h.Rand().IntN(len(cs))
	best, bq := int32(-1), int32(0)
	for i := range cs {
		c := cs[(k+i)%len(cs)]
		if q := h.Queue(c, ph); best < 0 || q < bq {
			best, bq = c, q
		}
	}
	return best
}

// Minimal appends the packet's minimal choices under relation m: toward
// its target group while it has one, else toward its destination.
func (h *Hop) Minimal(m Minimal, buf []int32) []int32 {
	if t := h.pk.ps.Target; t > 0 && h.Group(h.x) != t-1 {
		return m.AppendToward(buf, h.x, t-1)
	}
	return m.AppendNext(buf, h.x, h.DestSwitch())
}
