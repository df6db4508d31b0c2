package addressing

import (
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// TestAlignedWiring: the aligned layout is a Dragonfly: every switch has h
// global cables, every pair of groups is cabled exactly once (from both
// ends), and group IDs are distinct.
func TestAlignedWiring(t *testing.T) {
	for _, ah := range [][2]int{{2, 1}, {4, 2}, {6, 3}, {8, 4}, {12, 6}, {16, 8}} {
		a, h := ah[0], ah[1]
		l := alignedLayout(a, h)
		g := a*h + 1
		seen := make(map[[2]int]int)
		for i := range g {
			for j, gs := range l.holds[i] {
				if len(gs) != h {
					t.Fatalf("a=%d h=%d: group %d switch %d holds %d groups", a, h, i, j, len(gs))
				}
				for _, G := range gs {
					if G == i {
						t.Fatalf("a=%d h=%d: group %d cabled to itself", a, h, i)
					}
					seen[[2]int{i, G}]++
				}
			}
		}
		for i := range g {
			for G := range g {
				if G != i && (seen[[2]int{i, G}] != 1 || seen[[2]int{G, i}] != 1) {
					t.Fatalf("a=%d h=%d: groups %d and %d cabled %d/%d times", a, h, i, G, seen[[2]int{i, G}], seen[[2]int{G, i}])
				}
			}
		}
		if ids := slices.Compact(slices.Clone(l.real)); len(ids) != g {
			t.Fatalf("a=%d h=%d: %d distinct IDs for %d groups", a, h, len(ids), g)
		}
	}
}

// TestCompactedRulesForward builds every switch's group rules under each
// reading and checks them by lookup: every other group's ID is matched by
// exactly one rule, and that rule's port leads to the switch holding the
// group (an own global port for the switch's own groups).
func TestCompactedRulesForward(t *testing.T) {
	for _, ah := range [][2]int{{4, 2}, {8, 4}, {12, 6}} {
		a, h := ah[0], ah[1]
		g := a*h + 1
		for _, l := range []*dfLayout{seedLayout(a, h, g, false), seedLayout(a, h, g, true), alignedLayout(a, h)} {
			for i := range g {
				rules := l.groupRules(i)
				for s := range a {
					for G := range g {
						if G == i {
							continue
						}
						var via []int // switches whose rules match G
						for j := range a {
							if j == s {
								if slices.Contains(l.holds[i][j], G) {
									via = append(via, j) // own port, exact rule
								}
								continue
							}
							for _, p := range rules[j] {
								if p.Matches(l.id[G]) {
									via = append(via, j)
								}
							}
						}
						if len(via) != 1 || !slices.Contains(l.holds[i][via[0]], G) {
							t.Fatalf("a=%d h=%d free=%v: group %d switch %d: group %d matched via %v", a, h, l.free, i, s, G, via)
						}
					}
				}
			}
		}
	}
}

// TestDragonflyCompactionFigures pins the report's figures: the seed's
// wiring with plain prefixes is DragonflyCompact's range; the aligned
// assignment puts every switch at ports + S − 1 or one above (P = 96:
// 142 or 143, 1,200 of 55,344 switches at the bound: switch 0 of each
// group and every switch of the last one).
func TestDragonflyCompactionFigures(t *testing.T) {
	for _, r := range []int{8, 16, 24, 48, 96} {
		s, err := Max("dragonfly", r)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := DragonflyCompaction(s.P, s.A, s.H, "seed-plain")
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := DragonflyCompact(s.P, s.A, s.H, s.G); plain.Min != lo || plain.Max != hi {
			t.Errorf("P=%d: seed-plain %d–%d, DragonflyCompact %d–%d", r, plain.Min, plain.Max, lo, hi)
		}
		al, err := DragonflyCompaction(s.P, s.A, s.H, "aligned")
		if err != nil {
			t.Fatal(err)
		}
		if al.Bound != s.Ports+s.S-1 || al.Min != al.Bound || al.Max != al.Bound+1 || al.AtBound != s.G+s.A-1 {
			t.Errorf("P=%d: aligned %+v, want %d–%d with %d at the bound", r, al, s.Ports+s.S-1, s.Ports+s.S, s.G+s.A-1)
		}
		if r == 96 && (plain.Min != 189 || plain.Max != 354 || al.Bound != 142) {
			t.Errorf("P=96: seed-plain %d–%d, bound %d; want 189–354, 142", plain.Min, plain.Max, al.Bound)
		}
	}
	if _, err := DragonflyCompaction(2, 4, 2, "best"); err == nil {
		t.Error("unknown reading accepted")
	}
}

// TestNoAssignmentReachesTheBound checks the optimality argument of
// DragonflyCompaction on the smallest case with h > 1 (a = 2, h = 2, g = 5,
// 3-bit IDs): over every injective ID assignment, and for each group the
// best split of the other groups over its two switches, some switch needs
// ports + S rules.
func TestNoAssignmentReachesTheBound(t *testing.T) {
	const a, h, g, width = 2, 2, 5, 3
	best := -1
	ids := make([]int, g)
	used := make([]bool, 1<<width)
	var rec func(k int)
	rec = func(k int) {
		if k < g {
			for v := range 1 << width {
				if !used[v] {
					used[v], ids[k] = true, v
					rec(k + 1)
					used[v] = false
				}
			}
			return
		}
		l := &dfLayout{id: ids, real: slices.Sorted(slices.Values(ids)), bits: width, free: true}
		worst := 0 // group rules of the worst switch, best split per group
		for i := range g {
			var others []int
			for G := range g {
				if G != i {
					others = append(others, G)
				}
			}
			groupBest := -1
			for mask := range 1 << (g - 1) {
				var x0, x1 []int
				for b, G := range others {
					if mask>>b&1 == 1 {
						x1 = append(x1, ids[G])
					} else {
						x0 = append(x0, ids[G])
					}
				}
				if len(x0) != h {
					continue
				}
				slices.Sort(x0)
				slices.Sort(x1)
				c0 := len(l.cover(x0, ids[i], 0, 1<<width, nil))
				c1 := len(l.cover(x1, ids[i], 0, 1<<width, nil))
				if w := max(c0, c1); groupBest < 0 || w < groupBest {
					groupBest = w // switch 0 holds x0 itself and needs c1 rules, and vice versa
				}
			}
			worst = max(worst, groupBest)
		}
		if best < 0 || worst < best {
			best = worst
		}
	}
	rec(0)
	if best != a {
		t.Fatalf("best worst-switch group rules %d, want %d (= S − 1 + 1)", best, a)
	}
}

// TestExascaleShapes: the §VI-A figures, and the 4-stage Clos shape
// against the generator at radix 8 (6.5 stage-3 groups, as the seed's).
func TestExascaleShapes(t *testing.T) {
	want := map[string][3]int{"clos4": {303264, 29484, 304}, "fbfly4": {303750, 20250, 1378}, "dragonfly": {300024, 16668, 515}}
	for _, s := range Exascale() {
		w := want[s.Kind]
		if s.Hosts != w[0] || s.Switches != w[1] || s.Rules().PerGroup != w[2] {
			t.Errorf("%s: %d hosts, %d switches, %d rules; want %v", s.Kind, s.Hosts, s.Switches, s.Rules().PerGroup, w)
		}
	}
	s, err := Clos4Shape(8, 26)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Clos4(8, 26)
	if err != nil {
		t.Fatal(err)
	}
	if f := tp.Fabric; f.Count(fabric.CA) != s.Hosts || f.Count(fabric.Switch) != s.Switches {
		t.Errorf("clos4 r=8: generator %d hosts %d switches, shape %+v", f.Count(fabric.CA), f.Count(fabric.Switch), s)
	}
}
