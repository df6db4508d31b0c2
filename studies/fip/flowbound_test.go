package fip

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

func compile(t *testing.T, f *fabric.Fabric) *fabric.Graph {
	t.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func bound(t *testing.T, g *fabric.Graph) *FabricBound {
	t.Helper()
	b, err := Bound(context.Background(), g, BoundOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !(b.ConcurrentLow > 0 && b.ConcurrentLow <= b.Concurrent*(1+1e-9) && b.Concurrent <= 1 && b.Mean <= 1 && b.Mean >= b.ConcurrentLow) {
		t.Fatalf("inconsistent bound %+v", *b)
	}
	return b
}

// unplug removes the cable at port p of the switch named name.
func unplug(t *testing.T, f *fabric.Fabric, name string, p uint8) *fabric.Fabric {
	t.Helper()
	f = f.Clone()
	for i := range f.Nodes {
		if f.Name(fabric.NodeID(i)) == name {
			peer := f.Nodes[i].Ports[p].Peer
			if peer.Node < 0 {
				t.Fatalf("%s port %d is not cabled", name, p)
			}
			f.Port(peer).Peer = fabric.NoPeer
			f.Nodes[i].Ports[p].Peer = fabric.NoPeer
			return f
		}
	}
	t.Fatalf("no switch %q", name)
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestBoundRing: a ring of 5 switches with 2 hosts each. Each host sends
// λ/9 to the 9 others: 4 at 1 hop, 4 at 2, so the 10 hosts put
// 10·12/9·λ flit-hops per cycle on 10 channels: λ ≤ 0.75 (the distance
// bound), and splitting every pair evenly over its shortest paths loads
// every channel equally, so λ* = 0.75 exactly.
func TestBoundRing(t *testing.T) {
	tp, err := topo.Ring(5, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := bound(t, compile(t, tp.Fabric))
	if !near(b.Concurrent, 0.75) || b.ConcurrentLow < 0.75/1.01 {
		t.Fatalf("ring: %+v, want concurrent 0.75 (low ≥ 0.75/1.01)", *b)
	}
	// Three neighbouring switches hold 6 hosts and 2 cables leave them:
	// the cut gives 2·9/(6·4) = 0.75 too. A single switch gives
	// 2·9/(2·8) = 1.125, above the host links' 1.
	if !near(b.Cut, 0.75) || !strings.HasPrefix(b.CutName, "3 switches around") {
		t.Fatalf("ring: cut %g at %q, want 0.75 at 3 switches", b.Cut, b.CutName)
	}
}

// TestBoundFatTreeLeafUplink: the k=4, n=3 fat tree (64 hosts, 4 per
// leaf, 4 uplinks per leaf). Intact, the host links bind: λ* = 1. With
// one uplink of leaf (0,0) unplugged, the leaf's 4 hosts send
// 4·60/63·λ to the other leaves over 3 channels: λ ≤ 3·63/240 = 0.7875,
// and the rest of the tree has room, so the bound is that cut.
func TestBoundFatTreeLeafUplink(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := bound(t, compile(t, tp.Fabric))
	if b.Concurrent != 1 || b.ConcurrentLow < 0.99 || b.Mean < 0.99 {
		t.Fatalf("intact: %+v, want concurrent 1 (low ≥ 0.99), mean ≈ 1", *b)
	}
	leaf := "fattree L0 (0,0)"
	f := unplug(t, tp.Fabric, leaf, 4+1+0) // the parent with digit 0
	b = bound(t, compile(t, f))
	want := 3.0 * 63 / (4 * 60)
	if !near(b.Concurrent, want) || !near(b.Cut, want) || !strings.HasPrefix(b.CutName, leaf+" (") || b.ConcurrentLow < want/1.01 {
		t.Fatalf("one uplink lost: %+v, want concurrent = cut = %g at %s", *b, want, leaf)
	}
	// Uniform at overload: every pair may be served but the leaf's own,
	// which fit 3 channels each way: (64 − 2·240/63 + 2·3)/64.
	if wantMean := (64 - 2*240.0/63 + 6) / 64; !near(b.Mean, wantMean) {
		t.Fatalf("one uplink lost: mean %g, want %g", b.Mean, wantMean)
	}
	// Both uplinks towards digit 0 and 1 of the same leaf: 2 channels.
	f = unplug(t, f, leaf, 4+1+1)
	b = bound(t, compile(t, f))
	if want := 2.0 * 63 / 240; !near(b.Concurrent, want) || !strings.HasPrefix(b.CutName, leaf+" (") {
		t.Fatalf("two uplinks lost: %+v, want %g at %s", *b, want, leaf)
	}
}

// TestBoundAgainstLP compares the bounds with the exact LP optima
// (gonum's simplex) on small random fabrics: the max concurrent flow λ*
// must lie in [ConcurrentLow, Concurrent], and the max multicommodity
// flow with pair caps must not exceed Mean.
func TestBoundAgainstLP(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		tp, err := topo.Random(6+2*int(seed%2), 3+int(seed%3%2), 1+int(seed%3), seed)
		if err != nil {
			t.Fatal(err)
		}
		g := compile(t, tp.Fabric)
		b := bound(t, g)
		fn, err := newFlowNet(g)
		if err != nil {
			t.Fatal(err)
		}
		conc, mean := lpConcurrent(t, fn), lpMean(t, fn)
		if conc < b.ConcurrentLow-1e-7 || conc > b.Concurrent+1e-7 {
			t.Errorf("seed %d: LP λ* = %g outside [%g, %g]", seed, conc, b.ConcurrentLow, b.Concurrent)
		}
		if b.Concurrent > conc*1.01 {
			t.Errorf("seed %d: bound %g more than 1 %% above the LP's %g", seed, b.Concurrent, conc)
		}
		if mean > b.Mean+1e-7 {
			t.Errorf("seed %d: LP mean %g above the bound %g", seed, mean, b.Mean)
		}
		t.Logf("seed %d: λ* %.4f in [%.4f, %.4f]; mean LP %.4f, bound %.4f", seed, conc, b.ConcurrentLow, b.Concurrent, mean, b.Mean)
	}
}

// lpModel is a standard-form LP under construction (A·x = b, x ≥ 0) whose
// first K·C variables are the flow of source switch k on channel c.
type lpModel struct {
	fn   *flowNet
	nv   int
	rows [][]float64
	rhs  []float64
}

func (m *lpModel) fv(k, c int) int { return k*m.fn.g.NumChannels() + c }

// add appends a row with right-hand side b.
func (m *lpModel) add(r []float64, b float64) { m.rows, m.rhs = append(m.rows, r), append(m.rhs, b) }

// conservation returns, for source k and switch v ≠ its source, the row
// of v's inflow minus outflow of k's flow (what v receives).
func (m *lpModel) conservation(k int, v int32) []float64 {
	g, r := m.fn.g, make([]float64, m.nv)
	for c := 0; c < g.NumChannels(); c++ {
		if g.Head[c] == v {
			r[m.fv(k, c)]++
		}
		if g.Tail[c] == v {
			r[m.fv(k, c)]--
		}
	}
	return r
}

// capacities adds Σ_k f(k, c) + slack_c = 1 for every channel, the slacks
// at variables slack0 + c.
func (m *lpModel) capacities(slack0 int) {
	for c := 0; c < m.fn.g.NumChannels(); c++ {
		r := make([]float64, m.nv)
		for k := range m.fn.sources {
			r[m.fv(k, c)] = 1
		}
		r[slack0+c] = 1
		m.add(r, 1)
	}
}

// lpConcurrent solves the max concurrent flow (λ ≤ 1) exactly: variables
// f, λ, the capacity slacks and λ's slack.
func lpConcurrent(t *testing.T, fn *flowNet) float64 {
	t.Helper()
	K, C := len(fn.sources), fn.g.NumChannels()
	m := &lpModel{fn: fn, nv: K*C + 1 + C + 1}
	lam := K * C
	for k, s := range fn.sources {
		for v := int32(0); int(v) < fn.S; v++ {
			if v != s {
				r := m.conservation(k, v)
				r[lam] = -fn.demand(s, v)
				m.add(r, 0)
			}
		}
	}
	m.capacities(lam + 1)
	r := make([]float64, m.nv)
	r[lam], r[m.nv-1] = 1, 1
	m.add(r, 1)
	obj := make([]float64, m.nv)
	obj[lam] = -1
	return -solve(t, obj, m.rows, m.rhs)
}

// lpMean solves the max total flow with pair caps exactly, per host at
// load 1: variables f, the served rate w per (source, target switch), the
// capacity slacks and the w slacks; pairs on one switch are always
// served.
func lpMean(t *testing.T, fn *flowNet) float64 {
	t.Helper()
	K, C := len(fn.sources), fn.g.NumChannels()
	m := &lpModel{fn: fn, nv: K*C + 2*K*K + C}
	wv := func(k, j int) int { return K*C + k*K + j }
	offered := 0.0
	for k, s := range fn.sources {
		for v := int32(0); int(v) < fn.S; v++ {
			if v == s {
				continue
			}
			r := m.conservation(k, v)
			if j := slices.Index(fn.sources, v); j >= 0 {
				r[wv(k, j)] = -1
			}
			m.add(r, 0)
		}
		offered += fn.hosts[s] * (fn.hosts[s] - 1) / (fn.N - 1)
	}
	m.capacities(K*C + K*K)
	obj := make([]float64, m.nv)
	for k, s := range fn.sources {
		for j, tt := range fn.sources {
			r := make([]float64, m.nv)
			r[wv(k, j)], r[K*C+K*K+C+k*K+j] = 1, 1
			m.add(r, fn.demand(s, tt))
			obj[wv(k, j)] = -1
		}
	}
	return (offered - solve(t, obj, m.rows, m.rhs)) / fn.N
}

func solve(t *testing.T, obj []float64, rows [][]float64, rhs []float64) float64 {
	t.Helper()
	A := mat.NewDense(len(rows), len(obj), nil)
	for i, r := range rows {
		A.SetRow(i, r)
	}
	opt, _, err := lp.Simplex(obj, A, rhs, 1e-10, nil)
	if err != nil {
		t.Fatalf("simplex: %v", err)
	}
	return opt
}

func TestBoundErrors(t *testing.T) {
	tp, err := topo.Ring(4, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the ring twice: hosts on two sides cannot meet.
	f := unplug(t, tp.Fabric, "ring r0", 2)
	f = unplug(t, f, "ring r2", 2)
	if _, err := Bound(context.Background(), compile(t, f), BoundOptions{}); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("split fabric: %v, want a cannot-reach error", err)
	}
}
