package flitsim

import (
	"fmt"
	"strings"
)

// Pattern chooses the destinations of the traffic.
type Pattern uint8

const (
	// Uniform sends every message to a node drawn uniformly among the
	// others: a node never sends to itself (BookSim2's uniform includes
	// the source, so at N nodes its network carries (N−1)/N of the
	// offered load; bench/flitsim/booksim.md accounts for it).
	Uniform Pattern = iota
	// Shift is the finite all-to-all shift exchange of the thesis: node i
	// sends one message to (i+s) mod N for s = 1..N-1, one phase after
	// the other (see Traffic.ShiftSync); the run ends when every message
	// is delivered and reports the completion time.
	Shift
	// Permutation sends node i to perm(i), a random cyclic permutation
	// (one cycle through all nodes, drawn from the run's seed).
	Permutation
	// BitReversal sends node i to the node whose index is i's bits
	// reversed; needs a power-of-two number of nodes.
	BitReversal
	// Transpose sees the nodes as an m×m matrix (N = m², row-major) and
	// sends (r, c) to (c, r); needs a square number of nodes.
	Transpose
	// HotSpot sends a fraction HotFraction of the messages to HotNode
	// (class 1, "hot") and the rest uniformly (class 0).
	HotSpot
	// Neighbor sends to nodes on the nearest other switches: uniformly
	// among the nodes of the switches at the smallest switch-hop distance
	// >= 1 that have nodes.
	Neighbor
	// NextGroup is the Dragonfly adversarial pattern (ADV+offset): a node
	// of group g sends to a node drawn uniformly in group (g+GroupOffset)
	// mod G.
	NextGroup
	// GroupHotSpot is the RSI super-node-to-super-node hot spot: the nodes
	// of group SrcGroup send to nodes drawn uniformly in group DstGroup;
	// the other nodes are idle.
	GroupHotSpot
	// IO is two-class compute/I-O traffic: a node with an I/O node
	// (IONode[i] >= 0) sends a fraction IORatio of its messages to it
	// (class 1, "io") and the rest uniformly to the other compute nodes
	// (class 0, "compute"); I/O nodes are idle.
	IO
	// GroupLocal keeps traffic inside the groups (RSI super-node-local
	// traffic): a node sends to a node drawn uniformly among the other
	// nodes of its switch's group; nodes alone in their group are idle.
	GroupLocal
)

var patternNames = [...]string{"uniform", "shift", "permutation", "bitreverse", "transpose", "hotspot", "neighbor", "nextgroup", "grouphotspot", "io", "grouplocal"}

// String returns the pattern's name as ParsePattern reads it.
func (p Pattern) String() string {
	if int(p) < len(patternNames) {
		return patternNames[p]
	}
	return fmt.Sprintf("pattern(%d)", p)
}

// ParsePattern parses a pattern name (see Patterns).
func ParsePattern(s string) (Pattern, error) {
	for i, n := range patternNames {
		if strings.EqualFold(s, n) {
			return Pattern(i), nil
		}
	}
	switch strings.ToLower(s) {
	case "alltoall", "all-to-all", "a2a":
		return Shift, nil
	case "bitrev", "bit-reversal":
		return BitReversal, nil
	case "neighbour", "nn":
		return Neighbor, nil
	case "adversarial", "adv", "adv+1":
		return NextGroup, nil
	case "local", "snlocal", "group-local", "supernode-local":
		return GroupLocal, nil
	}
	return 0, fmt.Errorf("flitsim: unknown traffic pattern %q, expected one of %s: %w", s, strings.Join(Patterns(), ", "), ErrConfig)
}

// Patterns lists the pattern names.
func Patterns() []string { return append([]string(nil), patternNames[:]...) }

// Arrival is the inter-arrival process of messages at a source.
type Arrival uint8

const (
	// Bernoulli: in every cycle a message arrives with a fixed probability.
	Bernoulli Arrival = iota
	// Exponential inter-arrival times (a Poisson process).
	Exponential
	// Weibull inter-arrival times with shape Traffic.WeibullShape (bursty
	// for shapes below 1).
	Weibull
)

var arrivalNames = [...]string{"bernoulli", "exponential", "weibull"}

// String returns the process's name.
func (a Arrival) String() string {
	if int(a) < len(arrivalNames) {
		return arrivalNames[a]
	}
	return fmt.Sprintf("arrival(%d)", a)
}

// ParseArrival parses "bernoulli", "exponential" (or "poisson") and
// "weibull".
func ParseArrival(s string) (Arrival, error) {
	for i, n := range arrivalNames {
		if strings.EqualFold(s, n) {
			return Arrival(i), nil
		}
	}
	if strings.EqualFold(s, "poisson") || strings.EqualFold(s, "exp") {
		return Exponential, nil
	}
	return 0, fmt.Errorf("flitsim: unknown arrival process %q, expected bernoulli, exponential or weibull: %w", s, ErrConfig)
}

// Class is a traffic class: statistics are kept per class, and its
// messages may use their own size and VLs.
type Class struct {
	Name string
	// MessagePackets is the number of packets per message (>= 1).
	MessagePackets int
	// VLOffset is added to the VL of every hop (and of injection), so that
	// classes use disjoint VL sets while the routing's own VL choice (a
	// dateline, a layer) still applies inside each set.
	VLOffset int
}

// Traffic describes a workload. Nodes are Network nodes (0..N-1).
type Traffic struct {
	Pattern Pattern
	// Load is the offered load of every active source, as a fraction of
	// the link bandwidth, in (0, 1]. Shift ignores it: its sources send as
	// fast as flow control lets them.
	Load float64
	// Arrival is the inter-arrival process (default Bernoulli).
	Arrival Arrival
	// WeibullShape is the shape k of Weibull inter-arrival times (default
	// 1, which is exponential); the scale follows from Load.
	WeibullShape float64
	// MessagePackets is the number of packets per message of every class
	// without its own (default 1).
	MessagePackets int
	// Messages per source makes an open-loop pattern finite: each source
	// sends this many messages at the offered load and the run ends when
	// all are delivered (0 = open loop, measured in a window).
	Messages int
	// ShiftSync makes Shift a pairwise exchange: node i starts phase s+1
	// only when its phase-s message has left it and the phase-s message
	// from node (i-s) mod N has arrived. Without it, a node starts the
	// next phase as soon as its message has left.
	ShiftSync bool

	HotNode     int32   // HotSpot: destination node
	HotFraction float64 // HotSpot: fraction of messages to HotNode, [0, 1]

	// Groups gives per switch its group (topo.Topology.Group: Dragonfly
	// group, RSI super node); a node belongs to its switch's group.
	// Needed by NextGroup, GroupHotSpot and GroupLocal.
	Groups      []int
	GroupOffset int // NextGroup: target group offset (default 1)
	SrcGroup    int // GroupHotSpot: sending group
	DstGroup    int // GroupHotSpot: receiving group (default SrcGroup+1 when both are 0)

	// IONode gives per node its assigned I/O node, -1 for I/O nodes
	// themselves (IO pattern; the caller's role map).
	IONode []int32
	// IORatio is the fraction of messages that are I/O messages, [0, 1].
	IORatio float64

	// Classes overrides the pattern's classes (names, message sizes, VL
	// offsets). Patterns use class 0, and class 1 for HotSpot's hot
	// messages and IO's I/O messages; missing classes get defaults.
	Classes []Class
}

// classes returns the pattern's classes with defaults filled in.
func (t *Traffic) classes() []Class {
	names := []string{"all"}
	switch t.Pattern {
	case HotSpot:
		names = []string{"background", "hot"}
	case IO:
		names = []string{"compute", "io"}
	}
	out := make([]Class, len(names))
	for i := range out {
		out[i] = Class{Name: names[i], MessagePackets: t.MessagePackets}
		if i < len(t.Classes) {
			c := t.Classes[i]
			if c.Name != "" {
				out[i].Name = c.Name
			}
			if c.MessagePackets != 0 {
				out[i].MessagePackets = c.MessagePackets
			}
			out[i].VLOffset = c.VLOffset
		}
	}
	return out
}

// withDefaults fills zero fields.
func (t Traffic) withDefaults() Traffic {
	if t.MessagePackets == 0 {
		t.MessagePackets = 1
	}
	if t.WeibullShape == 0 {
		t.WeibullShape = 1
	}
	if t.GroupOffset == 0 {
		t.GroupOffset = 1
	}
	if t.Pattern == GroupHotSpot && t.SrcGroup == 0 && t.DstGroup == 0 {
		t.DstGroup = 1
	}
	return t
}

// validate checks t against a network.
func (t *Traffic) validate(n *Network) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("flitsim: traffic %s: %s: %w", t.Pattern, fmt.Sprintf(format, args...), ErrConfig)
	}
	N := n.NumNodes()
	switch {
	case int(t.Pattern) >= len(patternNames):
		return bad("unknown pattern")
	case t.Pattern != Shift && !(t.Load > 0 && t.Load <= 1):
		return bad("offered load %g, expected (0, 1]", t.Load)
	case int(t.Arrival) >= len(arrivalNames):
		return bad("unknown arrival process")
	case !(t.WeibullShape > 0):
		return bad("Weibull shape %g, expected > 0", t.WeibullShape)
	case t.MessagePackets < 1:
		return bad("%d packets per message, expected >= 1", t.MessagePackets)
	case t.Messages < 0:
		return bad("%d messages per source, expected >= 0", t.Messages)
	case t.Pattern == HotSpot && (t.HotNode < 0 || int(t.HotNode) >= N):
		return bad("hot node %d, expected 0..%d", t.HotNode, N-1)
	case t.Pattern == HotSpot && !(t.HotFraction >= 0 && t.HotFraction <= 1):
		return bad("hot fraction %g, expected [0, 1]", t.HotFraction)
	case (t.Pattern == NextGroup || t.Pattern == GroupHotSpot || t.Pattern == GroupLocal) && len(t.Groups) != n.g.NumSwitches():
		return bad("%d group entries, expected one per switch (%d)", len(t.Groups), n.g.NumSwitches())
	case t.Pattern == GroupHotSpot && t.SrcGroup == t.DstGroup:
		return bad("source and destination group are both %d", t.SrcGroup)
	case t.Pattern == IO && len(t.IONode) != N:
		return bad("%d I/O node entries, expected one per node (%d)", len(t.IONode), N)
	case t.Pattern == IO && !(t.IORatio >= 0 && t.IORatio <= 1):
		return bad("I/O ratio %g, expected [0, 1]", t.IORatio)
	}
	for _, g := range t.Groups {
		if g < 0 {
			return bad("negative group %d", g)
		}
	}
	for i, io := range t.IONode {
		if io >= int32(N) || io == int32(i) {
			return bad("node %d has I/O node %d", i, io)
		}
	}
	for i, c := range t.classes() {
		if c.MessagePackets < 1 {
			return bad("class %d (%s): %d packets per message", i, c.Name, c.MessagePackets)
		}
		if c.VLOffset < 0 || n.maxVL+c.VLOffset >= n.lanes {
			return bad("class %d (%s): VL offset %d does not fit the routing's VLs 0..%d in %d simulated VLs", i, c.Name, c.VLOffset, n.maxVL, n.lanes)
		}
	}
	return nil
}
