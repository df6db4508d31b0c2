package flitsim

import (
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/studies/novacube"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcpolicy"
)

// RoutingKind selects how a switch picks a packet's output port. Every
// kind decides once per packet and switch, when the head flit arrives,
// from the packet's state and the switch's view of its output queues.
type RoutingKind uint8

const (
	// RouteLFT forwards by the LFT (the default; today's behaviour).
	RouteLFT RoutingKind = iota
	// RouteMinimal (MIN-adaptive) takes the least occupied minimal port.
	RouteMinimal
	// RouteLAR is seed 000 Algorithm 1: the minimal port unless its
	// occupancy is at or above Threshold and the packet has not
	// misrouted; then a random port under Threshold toward the right
	// region, phase bit set, at most one misroute.
	RouteLAR
	// RouteValiant sends every inter-group packet minimally to a random
	// intermediate group first (seed 002 VAL), then minimally on.
	RouteValiant
	// RouteUGAL chooses per packet at the source switch between the
	// minimal port and a Valiant path through a random group by queue
	// length × hops (UGAL-L).
	RouteUGAL
	// RouteConditional is seed 002 §V-D: the minimal default next hop,
	// disabled while its output is paused (downstream buffer filled to
	// Threshold); then, at the source switch, the source's static Valiant
	// alternative (one of its own global ports, chosen per source node).
	RouteConditional
	// RoutePORA is seed 004 §5.1 on a NovaCube (Cube and Variant).
	RoutePORA
)

var routingNames = []string{"lft", "min", "lar", "val", "ugal", "conditional", "pora"}

// String returns the kind's name as ParseRoutingKind reads it.
func (k RoutingKind) String() string {
	if int(k) < len(routingNames) {
		return routingNames[k]
	}
	return fmt.Sprintf("RoutingKind(%d)", k)
}

// ParseRoutingKind reads lft, min, lar, val, ugal, conditional or pora.
func ParseRoutingKind(s string) (RoutingKind, error) {
	for i, n := range routingNames {
		if strings.EqualFold(s, n) {
			return RoutingKind(i), nil
		}
	}
	return 0, fmt.Errorf("flitsim: routing policy %q, expected one of %s: %w", s, strings.Join(routingNames, ", "), ErrConfig)
}

// RoutingPolicy is a per-hop routing policy and, optionally, a VC policy.
// The zero value is the LFT with SL2VL.
type RoutingPolicy struct {
	Kind RoutingKind
	// Groups gives per switch its group (topo.Topology.Group); needed by
	// LAR, VAL, UGAL and Conditional, and by VC rules that count global
	// hops. nil: one group.
	Groups []int
	// Tables, when set, is the minimal relation (RSI two-level tables,
	// seed 000 §IV-A); otherwise every port on a shortest path.
	Tables *rsi.Tables
	// Threshold is LAR's Th and Conditional's pause level, as a fraction
	// of one input buffer (default 0.6).
	Threshold float64
	// LARToward reads "ports to other super nodes" as any port toward
	// another super node (vcaudit lar-toward); default: the switch's own
	// global ports (lar-own).
	LARToward bool
	// UGALBias is added to the Valiant side of UGAL's comparison (flits).
	UGALBias float64
	// Cube and Variant drive RoutePORA; Cube's node i must be switch i.
	Cube    *novacube.Cube
	Variant novacube.Variant
	// VC assigns the VL of every hop when set (as many VLs as its VCs);
	// nil keeps SL2VL. Hops asking for a VC the policy lacks use its top
	// VC and are counted in Result.VCOverflow.
	VC *vcpolicy.Policy
}

// Name describes the policy, e.g. "lar(lar-own,th=0.6)+df-2vc".
func (p RoutingPolicy) Name() string {
	s := p.Kind.String()
	switch p.Kind {
	case RouteLAR:
		r := "lar-own"
		if p.LARToward {
			r = "lar-toward"
		}
		s += fmt.Sprintf("(%s,th=%g)", r, p.threshold())
	case RouteConditional:
		s += fmt.Sprintf("(th=%g)", p.threshold())
	case RoutePORA:
		s += "(" + string(p.Variant) + ")"
	}
	if p.VC != nil {
		s += "+" + p.VC.Name
	}
	return s
}

func (p RoutingPolicy) threshold() float64 {
	if p.Threshold == 0 {
		return 0.6
	}
	return p.Threshold
}

// policy is a RoutingPolicy compiled against a Network.
type policy struct {
	RoutingPolicy
	th    float64
	group []int32 // switch -> group
	ng    int32
	dist  []int16 // dist[d*S+x]: hops from switch x to switch d
	gdist []int16 // gdist[t*S+x]: hops from x into group t
	pora  *poraTables
}

// WithRouting returns a copy of n that routes by p (n is unchanged and
// both stay safe for concurrent use). Errors wrap ErrConfig. Cost:
// O(S·(S+C)) for the distance tables.
func (n *Network) WithRouting(p RoutingPolicy) (*Network, error) {
	bad := func(format string, args ...any) (*Network, error) {
		return nil, fmt.Errorf("flitsim: routing %s: %s: %w", p.Kind, fmt.Sprintf(format, args...), ErrConfig)
	}
	S := n.g.NumSwitches()
	if p.Kind > RoutePORA {
		return bad("unknown kind")
	}
	if th := p.threshold(); !(th > 0 && th <= 4) {
		return bad("threshold %g, expected (0, 4]", th)
	}
	if p.Groups != nil && len(p.Groups) != S {
		return bad("%d group entries for %d switches", len(p.Groups), S)
	}
	if p.Tables != nil && p.Tables.G != n.g {
		return bad("RSI tables of another fabric")
	}
	c := *n
	pol := &policy{RoutingPolicy: p, th: p.threshold(), group: make([]int32, S)}
	for x := range pol.group {
		if p.Groups != nil {
			if p.Groups[x] < 0 {
				return bad("negative group")
			}
			pol.group[x] = int32(p.Groups[x])
		} else if p.Tables != nil {
			pol.group[x] = int32(p.Tables.Group[x])
		}
		pol.ng = max(pol.ng, pol.group[x]+1)
	}
	needGroups := p.Kind == RouteValiant || p.Kind == RouteUGAL || p.Kind == RouteConditional || p.Kind == RouteLAR
	if needGroups && pol.ng < 2 {
		return bad("needs Groups with at least 2 groups")
	}
	if S*S > 1<<24 || int(pol.ng)*S > 1<<24 {
		return bad("%d switches are too many for the distance tables", S)
	}
	if p.Kind != RouteLFT && p.Kind != RoutePORA {
		pol.distances(n)
	}
	if p.Kind == RoutePORA {
		pt, err := newPoraTables(n, p.Cube, p.Variant)
		if err != nil {
			return bad("%v", err)
		}
		pol.pora = pt
	}
	if v := p.VC; v != nil {
		if err := v.Validate(); err != nil {
			return bad("%v", err)
		}
		c.vls, c.maxVL = max(v.VCs, n.cfg.VLs), v.VCs-1
		for c.vshift = 0; 1<<c.vshift < c.vls; c.vshift++ {
		}
		if a := n.cfg.VLArb; a != nil {
			for vl := 0; vl < v.VCs; vl++ {
				if !arbHas(a, uint8(vl)) {
					return bad("VL arbitration gives VL %d, which the VC policy uses, no weight", vl)
				}
			}
		}
	}
	c.pol = pol
	return &c, nil
}

// Policy returns the routing policy (the zero value for the LFT).
func (n *Network) Policy() RoutingPolicy {
	if n.pol == nil {
		return RoutingPolicy{}
	}
	return n.pol.RoutingPolicy
}

// distances fills dist and gdist by BFS over the switch graph.
func (pol *policy) distances(n *Network) {
	g := n.g
	S := int32(g.NumSwitches())
	pol.dist = make([]int16, int(S)*int(S))
	pol.gdist = make([]int16, int(pol.ng)*int(S))
	q := make([]int32, 0, S)
	bfs := func(d []int16, src func(x int32) bool) {
		q = q[:0]
		for x := int32(0); x < S; x++ {
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
	for d := int32(0); d < S; d++ {
		bfs(pol.dist[d*S:(d+1)*S], func(x int32) bool { return x == d })
	}
	for t := int32(0); t < pol.ng; t++ {
		bfs(pol.gdist[t*S:(t+1)*S], func(x int32) bool { return pol.group[x] == t })
	}
}
