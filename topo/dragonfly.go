package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Dragonfly builds a Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) as the
// Ethernet-for-exascale paper describes and simulates it (seed 002, §III-A,
// Fig. 3c and Table III): g groups of a switches, each switch with p hosts,
// a−1 local cables (the switches of a group are all-to-all) and h global
// cables. g = 0 selects the balanced maximum g = a·h + 1, where every pair
// of groups is joined by exactly one global cable; p = 8, a = 16, h = 8
// gives the simulated 129 groups, 2,064 switches and 16,512 hosts.
//
// Global wiring (the seed's rule, as adopted in SEEDS.md §002). Number the
// a·h global ports of a group k = j·h + m (switch j, global port m) and let
// G = g. Port k of group i goes to group
//
//	t = (i + d) mod G,   d = (k mod (G−1)) + 1,
//
// and lands on port k' = c·(G−1) + (G−1−d) of group t, c = ⌊k/(G−1)⌋ (the
// same "copy" c, offset G−d back to i). With G = a·h + 1 this is exactly the
// seed's "group i, switch j, global port m → group (i + j·h + m + 1) mod G",
// and the peer is switch a−1−j, global port h−1−m: the map is an
// involution, so every cable is described identically from both ends; it
// is emitted once, from the lower-numbered group. With smaller G (2 ≤ G ≤
// a·h) the a·h ports are dealt round-robin over the G−1 other groups, so
// every pair gets ⌊a·h/(G−1)⌋ cables plus possibly one more from the last
// partial round; a port of that last round whose peer port k' would not
// exist (k' ≥ a·h) stays uncabled. G = 2 joins switch j port m of both groups.
//
// Ports: hosts 1..p, local cable to switch j' of the own group on port
// p+1+j' (j' < j) or p+j' (j' > j), global port m on p+a+m. Radix =
// p + (a−1) + h. Switch i·a + j is labelled "g<i> s<j>" with Coords
// {i, j} and Group i. Bisection is left 0 (unknown). O(g·a·(a+h)).
func Dragonfly(p, a, h, g int) (*Topology, error) {
	const kind = "dragonfly"
	if p < 0 {
		return nil, paramError(kind, "p = %d hosts per switch, expected >= 0", p)
	}
	if a < 1 {
		return nil, paramError(kind, "a = %d switches per group, expected >= 1", a)
	}
	if h < 1 {
		return nil, paramError(kind, "h = %d global ports per switch, expected >= 1", h)
	}
	maxG := a*h + 1
	if g == 0 {
		g = maxG
	}
	if g < 2 || g > maxG {
		return nil, paramError(kind, "g = %d groups, expected 2..a·h+1 = %d (0 = balanced maximum)", g, maxG)
	}
	radix := p + a - 1 + h
	if radix > fabric.MaxPorts {
		return nil, paramError(kind, "radix p+(a−1)+h = %d exceeds %d ports", radix, fabric.MaxPorts)
	}
	if err := directLIDs(kind, g*a, p); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("p=%d a=%d h=%d g=%d", p, a, h, g), radix)
	for i := 0; i < g; i++ {
		for j := 0; j < a; j++ {
			s.addSwitch(fmt.Sprintf("g%d s%d", i, j), p)
			s.coords = append(s.coords, []int{i, j})
			s.group = append(s.group, i)
		}
	}
	for i := 0; i < g; i++ {
		for j := 0; j < a; j++ {
			for j2 := j + 1; j2 < a; j2++ {
				// j2 > j: on j it is port p+j2; j < j2: on j2 it is p+1+j.
				s.linkPorts(i*a+j, p+j2, i*a+j2, p+1+j)
			}
		}
	}
	for i := 0; i < g; i++ {
		for k := 0; k < a*h; k++ {
			t, k2, ok := dragonflyPeer(i, k, a*h, g)
			if !ok || t < i {
				continue
			}
			s.linkPorts(i*a+k/h, p+a+k%h, t*a+k2/h, p+a+k2%h)
		}
	}
	return s.build()
}

// dragonflyPeer returns the group t and global port index k2 (k = j·h + m
// numbering) at the far end of global port k of group i, in a Dragonfly of
// g groups with n = a·h global ports per group; ok is false when the port
// stays uncabled (see Dragonfly).
func dragonflyPeer(i, k, n, g int) (t, k2 int, ok bool) {
	c, r := k/(g-1), k%(g-1)
	d := r + 1
	t = (i + d) % g
	k2 = c*(g-1) + (g - 1 - d)
	return t, k2, k2 < n
}

// DragonflyBalanced builds the balanced Dragonfly of seed 002 (§III-A,
// after Kim et al.): p hosts and h = p global ports per switch, a = 2p
// switches per group and the maximum g = a·h + 1 = 2p² + 1 groups.
// DragonflyBalanced(8) is the simulated 129-group, 16,512-host network.
func DragonflyBalanced(p int) (*Topology, error) {
	if p < 1 {
		return nil, paramError("dragonfly", "balanced p = %d, expected >= 1", p)
	}
	return Dragonfly(p, 2*p, p, 0)
}

func init() {
	register(Generator{
		Kind:    "dragonfly",
		Short:   "Dragonfly: g all-to-all groups of a switches, h global cables per switch (seed 002 wiring)",
		Example: "--p 8 --a 16 --h 8",
		Params: []Param{
			{"p", "2", "hosts per switch"},
			{"a", "4", "switches per group"},
			{"h", "2", "global cables per switch"},
			{"g", "0", "groups, 2..a·h+1 (0 = balanced maximum a·h+1)"},
		},
		Build: func(v Values) (*Topology, error) {
			p, a, h, g := v.Int("p"), v.Int("a"), v.Int("h"), v.Int("g")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return Dragonfly(p, a, h, g)
		},
	})
}
