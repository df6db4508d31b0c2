package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// closRadix checks the switch radix of a folded Clos.
func closRadix(kind string, r int) error {
	if r < 2 || r%2 != 0 || r > fabric.MaxPorts {
		return paramError(kind, "radix %d, expected an even number in 2..%d", r, fabric.MaxPorts)
	}
	return nil
}

// Clos2 builds the full two-level folded Clos (leaf–spine fat tree) of
// radix-r switches: r leaf switches with r/2 hosts each and r/2 spine
// switches, every leaf cabled once to every spine, so every port of every
// switch is used. r = 36 gives 648 hosts, 36 leaves and 18 spines (the
// project's default fabric). It is XGFT(2; r/2, r; 1, r/2) in the notation
// of Öhring et al. (see XGFT) and the two-tier case of the folded Clos of
// Leiserson's fat trees (IEEE Trans. Computers 34(10), 1985).
//
// Switches: leaves "leaf0".."leaf<r−1>" first, then spines "spine0"…;
// Group is 0 for leaves and 1 for spines. Ports: leaf hosts on 1..r/2,
// leaf port r/2+1+j to spine j, spine port i+1 to leaf i. Bisection = r²/4
// (half the hosts: the network has full bisection bandwidth).
func Clos2(r int) (*Topology, error) {
	const kind = "clos2"
	if err := closRadix(kind, r); err != nil {
		return nil, err
	}
	h := r / 2
	if err := checkLIDBudget(kind, r+h, r*h); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("radix=%d", r), r)
	s.labels = make([]string, 0, r+h)
	for i := range r {
		s.addSwitch(fmt.Sprintf("leaf%d", i), h)
		s.group = append(s.group, 0)
	}
	for j := range h {
		s.addSwitch(fmt.Sprintf("spine%d", j), 0)
		s.group = append(s.group, 1)
	}
	s.cables = make([]cable, 0, r*h)
	for i := range r {
		for j := range h {
			s.linkPorts(i, h+1+j, r+j, i+1)
		}
	}
	s.bisection = r * r / 4
	return s.build()
}

// Clos3 builds the full three-level folded Clos of radix-r switches, the
// "k-ary fat tree" of Al-Fares, Loukissas and Vahdat ("A scalable, commodity
// data center network architecture", SIGCOMM 2008, Section 3) with k = r:
// r pods, each of r/2 leaf (edge) switches and r/2 aggregation switches
// cabled as a complete bipartite graph; every leaf carries r/2 hosts; the
// (r/2)² core switches form r/2 groups of r/2, aggregation switch j of every
// pod is cabled to each core of group j, and every core has one cable per
// pod. Totals: r³/4 hosts, 5r²/4 switches, r³/2 switch cables; r = 36 gives
// 11,664 hosts and 1,620 switches (648 leaves, 648 aggregation, 324 core).
// It is XGFT(3; r/2, r/2, r; 1, r/2, r/2).
//
// Switches: all leaves "pod<p> leaf<i>" (pod-major), then all aggregation
// switches "pod<p> agg<j>", then cores "core<c>" with c = j·r/2 + t for
// group j. Group is the level (0 leaf, 1 aggregation, 2 core). Ports: leaf
// hosts on 1..r/2, leaf port r/2+1+j to aggregation j of its pod;
// aggregation port i+1 to leaf i of its pod, port r/2+1+t to core t of its
// group; core port p+1 to pod p. Bisection = r³/8 (half the hosts).
func Clos3(r int) (*Topology, error) {
	const kind = "clos3"
	if err := closRadix(kind, r); err != nil {
		return nil, err
	}
	h := r / 2
	leaves, cores := r*h, h*h
	if err := checkLIDBudget(kind, 2*leaves+cores, leaves*h); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("radix=%d", r), r)
	n := 2*leaves + cores
	s.labels = make([]string, 0, n)
	s.hosts = make([]int, 0, n)
	s.group = make([]int, 0, n)
	for p := range r {
		for i := range h {
			s.addSwitch(fmt.Sprintf("pod%d leaf%d", p, i), h)
			s.group = append(s.group, 0)
		}
	}
	for p := range r {
		for j := range h {
			s.addSwitch(fmt.Sprintf("pod%d agg%d", p, j), 0)
			s.group = append(s.group, 1)
		}
	}
	for c := range cores {
		s.addSwitch(fmt.Sprintf("core%d", c), 0)
		s.group = append(s.group, 2)
	}
	s.cables = make([]cable, 0, 2*leaves*h)
	for p := range r {
		for i := range h {
			for j := range h {
				s.linkPorts(p*h+i, h+1+j, leaves+p*h+j, i+1)
			}
		}
	}
	for p := range r {
		for j := range h {
			for t := range h {
				s.linkPorts(leaves+p*h+j, h+1+t, 2*leaves+j*h+t, p+1)
			}
		}
	}
	s.bisection = leaves * h / 2
	return s.build()
}

func init() {
	register(Generator{
		Kind:    "clos2",
		Short:   "full 2-level folded Clos (leaf-spine) of radix-r switches: r leaves x r/2 hosts, r/2 spines",
		Example: "--radix 36",
		Params:  []Param{{"radix", "36", "ports per switch (even)"}},
		Build:   byRadix(Clos2),
	})
	register(Generator{
		Kind:    "clos3",
		Short:   "full 3-level folded Clos of radix-r switches (Al-Fares et al. 2008): r pods, (r/2)^2 cores, r^3/4 hosts",
		Example: "--radix 36",
		Params:  []Param{{"radix", "36", "ports per switch (even)"}},
		Build:   byRadix(Clos3),
	})
}

// byRadix is the Build of a generator whose one parameter is the radix.
func byRadix(build func(radix int) (*Topology, error)) func(Values) (*Topology, error) {
	return func(v Values) (*Topology, error) {
		r := v.Int("radix")
		if err := v.Err(); err != nil {
			return nil, err
		}
		return build(r)
	}
}
