package addressing

import "fmt"

// Clos4Shape is the 4-stage folded Clos of radix-P switches with the given
// number of pods (topo.Clos4): pods of P/2 leaves (T = P/2 hosts each)
// and P/2 aggregation switches, stage 3 of P/2 switches per pod, P/4 top
// switches per pod. Groups are pods (§VI-A: "the 3-level organization
// considers a 'pod' to share a common group prefix"); every access switch
// uses all P ports (hosts and uplinks), so compaction reaches P (uplinks
// by source hash, §III-B).
func Clos4Shape(radix, pods int) (Shape, error) {
	if radix < 2 || radix%2 != 0 || pods < 2 {
		return Shape{}, fmt.Errorf("%w: clos4 radix %d with %d pods, expected an even radix and 2 or more pods", ErrShape, radix, pods)
	}
	h := radix / 2
	s := Shape{Kind: "clos4", Radix: radix, T: h, S: h, G: pods, Ports: radix}
	s.Switches = 2*h*pods + h*pods + h*pods/2
	s.Hosts = pods * h * h
	return s, nil
}

// Exascale returns the ~300,000-host networks of seed 002 §VI-A, all of
// 72-port switches: the 4-stage Clos (234 pods: "replicated 6.5 times to
// reach 29,484 switches and 303,264 hosts"), the 15×15×15×6 flattened
// butterfly (15 hosts per switch, groups = rows of dimension 0: 20,250
// switches, 303,750 hosts) and the Dragonfly of 463 groups of 36 switches
// with 18 hosts each (300,024 hosts; 462 global cables per group over 36
// switches: 12 or 13 each, at most 13). Ports counts the ports an access
// switch needs for distinct destinations (the FB: 15 hosts and
// 14 + 14 + 14 + 5 neighbours; the spare ports the seed fills with extra
// links for bisection add no rule classes).
func Exascale() []Shape {
	clos, _ := Clos4Shape(72, 234)
	fb := Shape{Kind: "fbfly4", Radix: 72, Dims: 4, K: 15, T: 15, S: 15, G: 15 * 15 * 6, Switches: 15 * 15 * 15 * 6, Ports: 15 + 14*3 + 5}
	fb.Hosts = fb.Switches * fb.T
	df := Shape{Kind: "dragonfly", Radix: 72, P: 18, A: 36, H: 13, T: 18, S: 36, G: 463, Switches: 463 * 36, Ports: 18 + 35 + 13}
	df.Hosts = df.Switches * df.T
	return []Shape{clos, fb, df}
}
