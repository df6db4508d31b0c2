// Package addressing is the hierarchical-addressing analysis of seed 002
// §III (Ethernet for exascale): forwarding-rule counts per access switch for
// flat, per-switch, per-group and compacted addressing (Eq. 1,
// R = (G−1) + (S−1) + T; compaction lower bound = the switch's port
// count) on folded Clos, flattened butterflies and Dragonflies built from
// switches of a given radix (Table I, Figs. 4 and 6), and its InfiniBand
// analogue: hierarchical LID assignment that keeps LFT blocks local to a
// group, and the 48K unicast LID limit (seed 002 §VII).
//
// Everything is deterministic and does no I/O.
package addressing

import (
	"errors"
	"fmt"
	"strings"
)

// ErrShape is wrapped by errors about a topology that cannot be built.
var ErrShape = errors.New("addressing: bad topology")

// Shape is the largest network of one kind that switches of a given radix
// build (seed 002 Table I), with the quantities of Eq. 1.
type Shape struct {
	Kind  string // clos3, fbfly<N>, dragonfly
	Radix int    // P, ports per switch
	Dims  int    // flattened butterfly dimensions (0 otherwise)
	K     int    // flattened butterfly switches per dimension
	// Dragonfly p (hosts per switch), a (switches per group), h (global
	// ports per switch).
	P, A, H int

	T        int // hosts per access switch
	G        int // groups
	S        int // access switches per group
	Hosts    int // H = G·S·T
	Switches int // all switches (access and transit)
	Ports    int // ports an access switch uses (hosts + cables)
}

// Kinds lists the shapes Max builds.
var Kinds = []string{"clos3", "fbfly2", "fbfly3", "fbfly4", "dragonfly"}

// Max returns the largest network of kind from radix-P switches:
//
//   - clos3: the 3-level folded Clos (k-ary fat tree, k = P): P pods of
//     P/2 access and P/2 aggregation switches, (P/2)² cores; T = P/2,
//     groups = pods (G = P, S = P/2), H = P³/4.
//   - fbfly<N>: N-dimensional flattened butterfly, k switches per
//     dimension and T = k hosts (the balanced choice, §V-D), the largest k
//     with k + N(k−1) <= P; groups = rows of dimension 0 (§VI-A: S = k,
//     G = k^(N−1)), H = k^(N+1).
//   - dragonfly: balanced, a = 2p = 2h, p the largest with 4p−1 <= P,
//     g = a·h + 1 groups (G = g, S = a, T = p), H = p·a·g.
func Max(kind string, radix int) (Shape, error) {
	s := Shape{Kind: kind, Radix: radix}
	switch {
	case kind == "clos3":
		if radix < 2 || radix%2 != 0 {
			return s, fmt.Errorf("%w: clos3 radix %d, expected an even number >= 2", ErrShape, radix)
		}
		h := radix / 2
		s.T, s.G, s.S = h, radix, h
		s.Switches = 2*radix*h + h*h
		s.Ports = radix
	case strings.HasPrefix(kind, "fbfly"):
		var n int
		if _, err := fmt.Sscanf(kind, "fbfly%d", &n); err != nil || n < 1 || n > 8 {
			return s, fmt.Errorf("%w: %q, expected fbfly1..fbfly8", ErrShape, kind)
		}
		k := (radix + n) / (n + 1)
		if k < 2 {
			return s, fmt.Errorf("%w: %d-dimensional flattened butterfly needs radix >= %d, got %d", ErrShape, n, n+2, radix)
		}
		s.Dims, s.K = n, k
		s.T, s.S, s.G = k, k, pow(k, n-1)
		s.Switches = pow(k, n)
		s.Ports = k + n*(k-1)
	case kind == "dragonfly":
		p := (radix + 1) / 4
		if p < 1 {
			return s, fmt.Errorf("%w: dragonfly needs radix >= 3, got %d", ErrShape, radix)
		}
		s.P, s.A, s.H = p, 2*p, p
		s.T, s.S, s.G = p, 2*p, 2*p*p+1
		s.Switches = s.S * s.G
		s.Ports = 4*p - 1
	default:
		return s, fmt.Errorf("%w: kind %q, expected one of %s", ErrShape, kind, strings.Join(Kinds, ", "))
	}
	s.Hosts = s.G * s.S * s.T
	return s, nil
}

func pow(k, n int) int {
	r := 1
	for range n {
		r *= k
	}
	return r
}

// AccessSwitches returns the switches with hosts (G·S).
func (s Shape) AccessSwitches() int { return s.G * s.S }

// Rules are per-access-switch forwarding-rule counts.
type Rules struct {
	Flat      int // one rule per host (CAM, §III)
	PerSwitch int // 2-level: (G·S − 1) + T (Eq. 1 with G = 1)
	PerGroup  int // 3-level: Eq. 1, (G−1) + (S−1) + T
	// CompactMin and CompactMax bound the rules after wildcard compaction
	// (§III-B): the port count for Clos and flattened butterflies; for the
	// Dragonfly at least ports + (S−1) and at most Eq. 1 (the paper's
	// Fig. 6 range).
	CompactMin, CompactMax int
}

// EqOne is Eq. 1 of seed 002: R = (G−1) + (S−1) + T.
func EqOne(G, S, T int) int { return (G - 1) + (S - 1) + T }

// Rules counts the rules of an access switch.
func (s Shape) Rules() Rules {
	r := Rules{
		Flat:      s.Hosts,
		PerSwitch: EqOne(1, s.AccessSwitches(), s.T),
		PerGroup:  EqOne(s.G, s.S, s.T),
	}
	r.CompactMin, r.CompactMax = s.Ports, s.Ports
	if s.Kind == "dragonfly" {
		r.CompactMin, r.CompactMax = s.Ports+s.S-1, r.PerGroup
	}
	return r
}
