package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Clos4 builds the 4-stage folded Clos of seed 002 §VI-A ("a 4-stage
// topology is required for the desired size ... basic 'pods' with 36
// switches in the first and second levels and 1,296 hosts. 1,296 stage-3
// switches connect 36 pods in a stage-3 group, which is replicated 6.5
// times to reach 29,484 switches and 303,264 hosts" with 72-port
// switches), for radix-r switches (h = r/2) and any number of pods:
//
//   - a pod is h leaves with h hosts each and h aggregation switches,
//     cabled as a complete bipartite graph (the 3-level Clos's pod);
//   - pods form stage-3 groups of h; a full group has h² stage-3
//     switches "(x, z)", and up port z+1 of aggregation switch x of each
//     pod goes to (x, z), so every stage-3 switch reaches every pod of its
//     group once; a last, partial group of q pods (q dividing h: the
//     seed's half group has q = h/2) has h·q stage-3 switches, up port y
//     of aggregation switch x going to (x + ⌊y/q⌋ mod h, y mod q), so each
//     takes h/q cables per pod, from distinct aggregation switches (no
//     parallel cables);
//   - the h²·pods up ports of stage 3 go round-robin to the h·pods/2
//     top switches: up port u of stage-3 switch i (numbered group, x, z)
//     is cable e = i·h + u, to top switch e mod (h·pods/2), whose ports
//     fill in order of e, so each top switch takes r cables, spread
//     evenly over stage 3.
//
// Every port of every switch is used and every level has as many up as
// down cables: full bisection. r = 72 with 234 pods is the seed's
// configuration (303,264 hosts, 29,484 switches), beyond InfiniBand's
// unicast LIDs; smaller radices build the same structure.
//
// Switches: leaves "pod<p> leaf<i>", aggregation "pod<p> agg<x>", stage 3
// "grp<g> s3 x<x> z<z>", top "top<m>"; Group is the stage (0..3). Ports:
// leaf hosts on 1..h, leaf port h+1+x to aggregation x; aggregation port
// i+1 to leaf i, port h+1+y up; stage-3 down ports in pod order, up ports
// h+1..r. Bisection = hosts/2.
func Clos4(r, pods int) (*Topology, error) {
	const kind = "clos4"
	if err := closRadix(kind, r); err != nil {
		return nil, err
	}
	h := r / 2
	full, q := pods/h, pods%h
	switch {
	case pods < 2 || pods > fabric.MaxUnicastLID:
		return nil, paramError(kind, "%d pods, expected 2 or more", pods)
	case q > 0 && h%q != 0:
		return nil, paramError(kind, "%d pods leave a partial stage-3 group of %d pods, which does not divide the group size %d", pods, q, h)
	case h*pods%2 != 0:
		return nil, paramError(kind, "%d pods of %d up ports each do not fill whole top switches of %d ports", pods, h*h, r)
	}
	s3, top := h*pods, h*pods/2
	if err := checkLIDBudget(kind, 2*h*pods+s3+top, h*h*pods); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("radix=%d pods=%d", r, pods), r)
	leaf := func(p, i int) int { return p*h + i }
	agg := func(p, x int) int { return h*pods + p*h + x }
	for p := range pods {
		for i := range h {
			s.addSwitch(fmt.Sprintf("pod%d leaf%d", p, i), h)
			s.group = append(s.group, 0)
		}
	}
	for p := range pods {
		for x := range h {
			s.addSwitch(fmt.Sprintf("pod%d agg%d", p, x), 0)
			s.group = append(s.group, 1)
		}
	}
	for p := range pods {
		for i := range h {
			for x := range h {
				s.linkPorts(leaf(p, i), h+1+x, agg(p, x), i+1)
			}
		}
	}
	base := 2 * h * pods
	for g := 0; g*h < pods; g++ {
		size := h // pods in this group
		if g == full {
			size = q
		}
		first := base + h*g*h // first stage-3 switch of the group
		for x := range h {
			for z := range size {
				s.addSwitch(fmt.Sprintf("grp%d s3 x%d z%d", g, x, z), 0)
				s.group = append(s.group, 2)
			}
		}
		per := h / size // cables from each pod to one stage-3 switch
		for k := range size {
			p := g*h + k
			for x := range h {
				for y := range h {
					j, z := y/size, y%size
					s.linkPorts(agg(p, x), h+1+y, first+((x+j)%h)*size+z, k*per+j+1)
				}
			}
		}
	}
	for m := range top {
		s.addSwitch(fmt.Sprintf("top%d", m), 0)
		s.group = append(s.group, 3)
	}
	for i := range s3 {
		for u := range h {
			e := i*h + u
			s.linkPorts(base+i, h+1+u, base+s3+e%top, e/top+1)
		}
	}
	s.bisection = h * h * pods / 2
	return s.build()
}

func init() {
	register(Generator{
		Kind:    "clos4",
		Short:   "4-stage folded Clos of radix-r switches (seed 002 §VI-A): pods of r/2 leaves and r/2 aggregation switches, stage-3 groups of r/2 pods, top switches",
		Example: "--radix 8 --pods 26",
		Params: []Param{
			{"radix", "8", "ports per switch (even)"},
			{"pods", "26", "pods (6.5 stage-3 groups of radix/2 pods, as the seed's 72-port 234-pod network)"},
		},
		Build: func(v Values) (*Topology, error) {
			r, p := v.Int("radix"), v.Int("pods")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return Clos4(r, p)
		},
	})
}
