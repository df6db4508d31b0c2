package placement

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// The worked example of §4.3 (Fig. 14, 15) on RQP distance-1 in Q_8^2,
// with SEEDS.md's corrected coordinates J = (6,2), M = (7,4).
func TestFailoverWorkedExample(t *testing.T) {
	tr := torus(t, "8x8")
	p, err := RQP(tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Assign(p)
	if err != nil {
		t.Fatal(err)
	}
	n := func(x, y int) int { return tr.Index([]int{x, y}) }
	I, J, K, L, M := n(3, 1), n(6, 2), n(2, 4), n(4, 3), n(7, 4)
	for _, v := range []int{I, J, K, L, M} {
		if a.Of[v] != v {
			t.Fatalf("%s is no I/O node of RQP Q_8^2", tr.Label(v))
		}
	}
	// Fig. 14: L fails; its four neighbours move.
	b, reg, err := Failover(a, []int{L})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{
		n(4, 2): J,       // A: J on its X-line (y = 2) beats I
		n(3, 3): I,       // B: no X-line candidate; I on its Y-line (x = 3)
		n(4, 4): K,       // X-line (y = 4)
		n(5, 3): n(5, 5), // Y-line (x = 5)
	}
	if len(reg.Moves) != len(want) {
		t.Errorf("moves %+v, want the 4 neighbours of L", reg.Moves)
	}
	for _, m := range reg.Moves {
		if m.From != L || want[m.Node] != m.To || m.NewDist != 2 || m.OldDist != 1 {
			t.Errorf("move %s: %s -> %s (%d -> %d), want L -> %s at 2", tr.Label(m.Node), tr.Label(m.From), tr.Label(m.To), m.OldDist, m.NewDist, tr.Label(want[m.Node]))
		}
	}
	if len(reg.Neighbours) == 0 {
		t.Error("no neighbours notified")
	}
	for _, v := range reg.Neighbours {
		if _, moved := want[v]; moved || b.Role(v) != "compute" {
			t.Errorf("neighbour %s is affected or no compute node", tr.Label(v))
		}
	}
	// Fig. 15: J fails as well.
	c, _, err := Failover(b, []int{J})
	if err != nil {
		t.Fatal(err)
	}
	if c.Of[n(4, 2)] != I {
		t.Errorf("A (4,2) -> %s, want I (3,1), its only healthy I/O node at 2", tr.Label(c.Of[n(4, 2)]))
	}
	if c.Of[n(6, 3)] != M {
		t.Errorf("C (6,3) -> %s, want M (7,4) (L would win the tie but failed)", tr.Label(c.Of[n(6, 3)]))
	}
	if c.Role(J) != "failed" || c.Role(L) != "failed" || c.Of[J] != -1 {
		t.Error("J and L should be failed")
	}
	for v := range c.Of {
		if c.Of[v] >= 0 && c.Failed[c.Of[v]] {
			t.Fatalf("node %s still served by a failed I/O node", tr.Label(v))
		}
	}
}

// The tie rule on a small torus: X-line, then Y-line, then the lines one
// step away.
func TestAxisKey(t *testing.T) {
	tr := torus(t, "8x8")
	n := func(x, y int) int { return tr.Index([]int{x, y}) }
	for _, c := range []struct{ x, a, b int }{
		{n(4, 2), n(6, 2), n(3, 1)}, // X-line beats neither
		{n(3, 3), n(3, 1), n(2, 4)}, // Y-line beats neither
		{n(0, 0), n(2, 0), n(0, 2)}, // X-line beats Y-line
		{n(0, 0), n(2, 1), n(1, 2)}, // one off the X-line beats one off the Y-line
	} {
		if axisKey(tr, c.x, c.a) >= axisKey(tr, c.x, c.b) {
			t.Errorf("from %s: %s should win over %s", tr.Label(c.x), tr.Label(c.a), tr.Label(c.b))
		}
	}
}

func TestFailoverErrors(t *testing.T) {
	tr := torus(t, "5x5")
	p, _ := Perfect(tr, 1)
	a, _ := Assign(p)
	if _, _, err := Failover(a, []int{1}); !errors.Is(err, ErrBadParam) {
		t.Errorf("failing a compute node: %v", err)
	}
	if _, _, err := Failover(a, p.IO); !errors.Is(err, ErrBadParam) {
		t.Errorf("failing every I/O node: %v", err)
	}
	if _, _, err := Failover(a, []int{0, 0}); !errors.Is(err, ErrBadParam) {
		t.Errorf("failing twice: %v", err)
	}
}

func TestRolesRoundTrip(t *testing.T) {
	tr := torus(t, "4x4x4")
	p, _ := RQP(tr, 1)
	a, _ := Assign(p)
	b, _, err := Failover(a, p.IO[:2])
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRoles(&buf, b); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRoles(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r.Torus.String() != "4x4x4" || r.Method != "rqp" || r.T != 1 || len(r.IONodes()) != len(p.IO)-2 {
		t.Errorf("read back %s %s t=%d with %d I/O nodes", r.Torus, r.Method, r.T, len(r.IONodes()))
	}
	for i, nr := range r.Nodes {
		if nr.Role != b.Role(i) || nr.IO != b.Of[i] || nr.Dist != b.Dist[i] {
			t.Fatalf("node %d: %+v, want %s %d %d", i, nr, b.Role(i), b.Of[i], b.Dist[i])
		}
	}
	for _, bad := range []string{
		"",
		"nodes v1 dims=2x2\n",
		"roles v1 method=x\n",
		"roles v1 dims=2x2\nnode 0 (0,0) io 0 0\n",
		"roles v1 dims=2x2\nnode 1 (1,0) io 1 0\nnode 0 (0,0) io 0 0\nnode 2 (0,1) io 2 0\nnode 3 (1,1) io 3 0\n",
		"roles v1 dims=2x2\nnode 0 (0,0) boss 0 0\nnode 1 (1,0) io 1 0\nnode 2 (0,1) io 2 0\nnode 3 (1,1) io 3 0\n",
		"roles v1 dims=2x2\nnode 0 (0,1) io 0 0\nnode 1 (1,0) io 1 0\nnode 2 (0,1) io 2 0\nnode 3 (1,1) io 3 0\n",
		"roles v1 dims=2x2\nnode 0 (0,0) compute 1 1\nnode 1 (1,0) compute 0 1\nnode 2 (0,1) io 2 0\nnode 3 (1,1) io 3 0\n",
	} {
		if _, err := ReadRoles(strings.NewReader(bad)); !errors.Is(err, ErrRoles) {
			t.Errorf("ReadRoles(%q): %v, want ErrRoles", bad, err)
		}
	}
}

func FuzzReadRoles(f *testing.F) {
	f.Add("roles v1 dims=2x2\nnode 0 (0,0) io 0 0\nnode 1 (1,0) compute 0 1\nnode 2 (0,1) compute 0 1\nnode 3 (1,1) compute 0 2\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ReadRoles(strings.NewReader(s))
	})
}

func TestDescribeCAs(t *testing.T) {
	tr := torus(t, "5x5")
	p, _ := Perfect(tr, 1)
	a, _ := Assign(p)
	tp, err := topo.Torus([]int{5, 5}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := DescribeCAs(tp.Fabric, a); err != nil {
		t.Fatal(err)
	}
	io, compute := 0, 0
	for _, n := range tp.Fabric.Nodes {
		switch {
		case strings.HasSuffix(n.Desc, " role=io"):
			io++
		case strings.Contains(n.Desc, " role=compute io=("):
			compute++
		}
	}
	if io != 10 || compute != 40 {
		t.Errorf("%d io and %d compute CAs, want 10 and 40 (2 hosts per switch)", io, compute)
	}
	small, _ := topo.Torus([]int{4, 4}, 1, false)
	if err := DescribeCAs(small.Fabric, a); !errors.Is(err, ErrBadParam) {
		t.Errorf("4x4 fabric for a 5x5 placement: %v", err)
	}
}

// TestFailSweep pins the averages over every combination of failed I/O
// nodes on RQP Q_4^3 (§5.2.5) and checks the sums against a direct count.
func TestFailSweep(t *testing.T) {
	p, err := RQP(torus(t, "4x4x4"), 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Assign(p)
	if err != nil {
		t.Fatal(err)
	}
	// Every compute node moves in the C(8, k−1) combinations that fail its
	// own I/O node: 55 compute nodes · C(8, k−1) moves in all.
	for _, tc := range []struct {
		k, combos, distWorst, loadWorst int
		moved                           float64
	}{
		{1, 9, 3, 9, 55.0 / 9}, {2, 36, 3, 11, 440.0 / 36}, {4, 126, 4, 17, 3080.0 / 126},
	} {
		s, err := FailSweep(a, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		if s.Combinations != tc.combos || s.MaxDistWorst != tc.distWorst || s.MaxLoadWorst != tc.loadWorst || math.Abs(s.Moved-tc.moved) > 1e-9 {
			t.Errorf("k = %d: %+v, want %d combinations, worst distance %d, worst load %d, %.3f moved", tc.k, s, tc.combos, tc.distWorst, tc.loadWorst, tc.moved)
		}
	}
	if _, err := FailSweep(a, 9); !errors.Is(err, ErrBadParam) {
		t.Errorf("failing all 9: %v, want ErrBadParam", err)
	}
}
