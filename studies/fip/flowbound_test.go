package fip

import (
	"context"
	"math"
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
		tp, err := topo.Random(6, 3, 1+int(seed%2), seed)
		if err != nil {
			t.Fatal(err)
		}
		g := compile(t, tp.Fabric)
		b := bound(t, g)
		fn, err := newFlowNet(g)
		if err != nil {
			t.Fatal(err)
		}
		conc, mean := lpOptima(t, fn)
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

// lpOptima solves, in standard form with one flow variable per source
// switch and channel, the max concurrent flow (λ ≤ 1) and the max total
// flow with pair caps (per host, at load 1).
func lpOptima(t *testing.T, fn *flowNet) (conc, mean float64) {
	t.Helper()
	g := fn.g
	K, C := len(fn.sources), g.NumChannels()
	fv := func(k, c int) int { return k*C + c }
	nf := K * C
	// Concurrent: vars f, λ, capacity slacks (C), λ slack.
	{
		nv := nf + 1 + C + 1
		lam := nf
		var rows [][]float64
		var rhs []float64
		for k, s := range fn.sources {
			for v := 0; v < fn.S; v++ {
				if int32(v) == s {
					continue
				}
				r := make([]float64, nv)
				for c := 0; c < C; c++ {
					if g.Head[c] == int32(v) {
						r[fv(k, c)]++
					}
					if g.Tail[c] == int32(v) {
						r[fv(k, c)]--
					}
				}
				r[lam] = -fn.demand(s, int32(v))
				rows, rhs = append(rows, r), append(rhs, 0)
			}
		}
		for c := 0; c < C; c++ {
			r := make([]float64, nv)
			for k := range K {
				r[fv(k, c)] = 1
			}
			r[nf+1+c] = 1
			rows, rhs = append(rows, r), append(rhs, 1)
		}
		r := make([]float64, nv)
		r[lam], r[nv-1] = 1, 1
		rows, rhs = append(rows, r), append(rhs, 1)
		obj := make([]float64, nv)
		obj[lam] = -1
		conc = -solve(t, obj, rows, rhs)
	}
	// Mean: vars f, served w per (source, target switch), capacity
	// slacks, w slacks; conservation with w in place of λ·d.
	{
		nw := K * K
		nv := nf + nw + C + nw
		wv := func(k, j int) int { return nf + k*K + j }
		var rows [][]float64
		var rhs []float64
		offered := 0.0
		for k, s := range fn.sources {
			for v := 0; v < fn.S; v++ {
				if int32(v) == s {
					continue
				}
				r := make([]float64, nv)
				for c := 0; c < C; c++ {
					if g.Head[c] == int32(v) {
						r[fv(k, c)]++
					}
					if g.Tail[c] == int32(v) {
						r[fv(k, c)]--
					}
				}
				for j, tt := range fn.sources {
					if tt == int32(v) {
						r[wv(k, j)] = -1
					}
				}
				rows, rhs = append(rows, r), append(rhs, 0)
			}
			offered += fn.hosts[s] * (fn.hosts[s] - 1) / (fn.N - 1) // same switch: always served
		}
		for c := 0; c < C; c++ {
			r := make([]float64, nv)
			for k := range K {
				r[fv(k, c)] = 1
			}
			r[nf+nw+c] = 1
			rows, rhs = append(rows, r), append(rhs, 1)
		}
		obj := make([]float64, nv)
		for k, s := range fn.sources {
			for j, tt := range fn.sources {
				r := make([]float64, nv)
				r[wv(k, j)], r[nf+nw+C+k*K+j] = 1, 1
				rows, rhs = append(rows, r), append(rhs, fn.demand(s, tt))
				obj[wv(k, j)] = -1
			}
		}
		mean = (offered - solve(t, obj, rows, rhs)) / fn.N
	}
	return conc, mean
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
