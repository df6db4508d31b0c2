// Package vcaudit builds the channel dependency graph (CDG) that a routing
// plus a VC policy (package vcpolicy) creates, and reports whether it is
// acyclic or prints a cycle (Dally and Seitz: acyclic CDG over virtual
// channels = deadlock-free). It serves the VC claims of seed 000 §IV-B
// (2 VCs for LAR on RSI) and seed 002 §V-E (2 VCs for the Dragonfly, N for
// an N-dimensional flattened butterfly).
//
// Routings are adaptive: every hop may take any of the routing's choices,
// and the CDG holds the dependencies of every choice. Minimal routing
// offers every minimal port (or the RSI two-level table entries, seed 000
// §IV-A); a Misroute mode adds at most one non-minimal hop per packet.
// Deterministic, no I/O.
package vcaudit

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcpolicy"
)

// Misroute selects where a packet may take its one non-minimal hop.
type Misroute int

const (
	// NoMisroute: minimal routing only.
	NoMisroute Misroute = iota
	// LAROwn is LAR (seed 000 Algorithm 1) with "ports to other super
	// nodes" read as the node's own global ports: at any hop before the
	// misroute, in the destination's group any other local port, else any
	// own global port; then minimal.
	LAROwn
	// LARToward reads "ports to other super nodes" as any port on a
	// minimal path toward another group t: the packet then travels
	// minimally to t, and from t minimally to its destination.
	LARToward
	// SourceGlobal is seed 002's conditional non-minimal rule (§V-D): at
	// the source switch only, any own global port to a group other than
	// the destination's; then minimal.
	SourceGlobal
	// AnyPort: at any hop before the misroute, any non-minimal port.
	AnyPort
)

var misrouteNames = []string{"none", "lar-own", "lar-toward", "source-global", "any"}

func (m Misroute) String() string {
	if m >= 0 && int(m) < len(misrouteNames) {
		return misrouteNames[m]
	}
	return fmt.Sprintf("Misroute(%d)", int(m))
}

// ParseMisroute reads a Misroute name.
func ParseMisroute(s string) (Misroute, error) {
	for i, n := range misrouteNames {
		if n == s {
			return Misroute(i), nil
		}
	}
	return 0, fmt.Errorf("vcaudit: misroute %q, expected one of %s", s, strings.Join(misrouteNames, ", "))
}

// Config is one audit.
type Config struct {
	Graph *fabric.Graph
	// Group gives each switch's group (super node); nil = the tables'
	// super nodes, or one group (every hop local) without tables.
	Group []int
	// Tables, when set, is the minimal routing (RSI two-level tables,
	// seed 000 §IV-A); otherwise every shortest-path port is minimal.
	Tables   *rsi.Tables
	Misroute Misroute
	// NoUTurn forbids a misroute back through the channel the packet
	// came in on (Algorithm 1 itself excludes only the minimal port).
	NoUTurn bool
	Policy  vcpolicy.Policy
	// MaxHops bounds a path (default 64); longer means the routing loops.
	MaxHops int
}

// ErrConfig is wrapped by errors about a bad Config.
var ErrConfig = errors.New("vcaudit: bad configuration")

// Result is the verdict.
type Result struct {
	Acyclic bool
	Cycle   *cdg.CycleError // a cycle of (channel, VC) when not acyclic
	// CycleGroups counts the groups (super nodes) the cycle's channels
	// touch: 1 for a cycle inside one group, 0 when acyclic.
	CycleGroups int
	Vertices    int // (channel, VC) pairs used
	Edges       int // dependencies
	MaxPath     int // longest path in hops
	VCsWanted   int // highest VC any hop asked for, plus one
	// Overflow counts hops that asked for a VC the policy lacks (without
	// Clamp); they were put on the top VC. OverflowExample shows one.
	Overflow        int
	OverflowExample string
}

// DeadlockFree reports an acyclic CDG with every hop on a VC it has.
func (r *Result) DeadlockFree() bool { return r.Acyclic && r.Overflow == 0 }

// Audit builds the CDG and looks for a cycle. Time O(D·X·deg) where D is
// the number of destinations and X the packet states reachable toward one
// (switch, incoming channel, counters, phase).
func Audit(cfg Config) (*Result, error) {
	a, err := newAuditor(cfg)
	if err != nil {
		return nil, err
	}
	for d := int32(0); int(d) < a.g.NumSwitches(); d++ {
		if a.isEnd[d] {
			if err := a.dest(d); err != nil {
				return nil, err
			}
		}
	}
	return a.result()
}

func (a *auditor) result() (*Result, error) {
	V := a.cfg.Policy.VCs
	n := a.g.NumChannels() * V
	keys := make([]uint64, 0, len(a.edges))
	for k := range a.edges {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	from := make([]int32, len(keys))
	to := make([]int32, len(keys))
	for i, k := range keys {
		from[i], to[i] = int32(k>>32), int32(uint32(k))
	}
	g, err := cdg.NewCSR(n, from, to)
	if err != nil {
		return nil, err
	}
	res := &Result{Edges: len(keys), MaxPath: a.maxPath, VCsWanted: a.wanted, Overflow: a.overflow, OverflowExample: a.overEx}
	for _, u := range a.used {
		if u {
			res.Vertices++
		}
	}
	cyc := cdg.FindCycle(g)
	res.Acyclic = cyc == nil
	if cyc != nil {
		e := &cdg.CycleError{}
		groups := map[int]bool{}
		for _, v := range cyc {
			c, vc := v/int32(V), v%int32(V)
			groups[a.group[a.g.Tail[c]]], groups[a.group[a.g.Head[c]]] = true, true
			e.Channels = append(e.Channels, c)
			e.VLs = append(e.VLs, uint8(vc))
			e.Names = append(e.Names, fmt.Sprintf("VC%d %s %s", vc, a.class(c), a.g.ChannelName(c)))
		}
		res.Cycle = e
		res.CycleGroups = len(groups)
	}
	return res, nil
}

// class names a channel local (L) or global (G).
func (a *auditor) class(c int32) string {
	if a.global(c) {
		return "G"
	}
	return "L"
}
