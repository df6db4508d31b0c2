package topo

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// clos4Want: 2h switches per pod, h per pod at stage 3, h/2 per pod on
// top; h² hosts per pod; cables: h² leaf–aggregation, h² aggregation–
// stage 3 and h² stage 3–top per pod.
func clos4Want(r, pods int) shapeWant {
	h := r / 2
	return shapeWant{switches: 2*h*pods + h*pods + h*pods/2, hosts: h * h * pods, cables: 3 * h * h * pods, radix: r}
}

func TestClos4(t *testing.T) {
	for _, c := range [][2]int{{8, 26}, {8, 8}, {8, 6}, {4, 3}, {6, 4}} {
		r, pods := c[0], c[1]
		tp, err := Clos4(r, pods)
		if err != nil {
			t.Fatal(err)
		}
		g, st := verifyShape(t, tp, clos4Want(r, pods))
		verifyFullPorts(t, tp)
		if st.CADiameter != 6 || st.Diameter > 8 {
			t.Errorf("clos4 r=%d pods=%d: diameter %d, between leaves %d; want <= 8 and 6", r, pods, st.Diameter, st.CADiameter)
		}
		if tp.Bisection != r*r*pods/8 {
			t.Errorf("clos4 r=%d pods=%d: bisection %d", r, pods, tp.Bisection)
		}
		// Every stage-3 switch reaches every pod of its group, and as many
		// up as down: h down cables from distinct aggregation switches.
		h := r / 2
		for s := int32(0); int(s) < g.NumSwitches(); s++ {
			if tp.Group[s] != 2 {
				continue
			}
			pods := map[int]bool{}
			up := 0
			for c := g.Off[s]; c < g.Off[s+1]; c++ {
				switch tp.Group[g.Head[c]] {
				case 1:
					pods[int(g.Head[c]-int32(h*c4pods(tp)))/h] = true
				case 3:
					up++
				}
			}
			if up != h || len(pods) == 0 || h%len(pods) != 0 {
				t.Fatalf("clos4 r=%d: %s reaches %d pods, %d up cables", r, g.SwitchName(s), len(pods), up)
			}
		}
	}
	for _, c := range [][2]int{{8, 1}, {8, 7}, {6, 5}, {7, 8}, {72, 234}} {
		if _, err := Clos4(c[0], c[1]); err == nil {
			t.Errorf("Clos4(%d, %d) accepted", c[0], c[1])
		}
	}
}

// c4pods reads the pod count back from the aggregation level.
func c4pods(tp *Topology) int {
	n := 0
	for _, l := range tp.Group {
		if l == 1 {
			n++
		}
	}
	return n / (tp.Radix / 2)
}

// TestClos4SeedSize checks the closed forms against seed 002 §VI-A's
// 72-port network (too large for one subnet's LIDs, so not built).
func TestClos4SeedSize(t *testing.T) {
	w := clos4Want(72, 234)
	if w.switches != 29484 || w.hosts != 303264 {
		t.Fatalf("72-port 234 pods: %d switches, %d hosts; seed: 29,484 and 303,264", w.switches, w.hosts)
	}
	if w.hosts+w.switches <= fabric.MaxUnicastLID {
		t.Fatal("expected the seed's network to exceed the unicast LIDs")
	}
}
