package cdg_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/nuesm/nuesm/cdg"
)

// This file compares FindCycle with two references on many random small
// digraphs: a plain recursive depth-first search, and gonum's Tarjan SCC
// search (and, on the smallest graphs, Johnson's enumeration of every
// elementary cycle).

// refCyclic is the textbook recursive three-colour DFS.
func refCyclic(adj [][]int32) bool {
	color := make([]int, len(adj))
	var visit func(v int32) bool
	visit = func(v int32) bool {
		color[v] = 1
		for _, w := range adj[v] {
			if color[w] == 1 || (color[w] == 0 && visit(w)) {
				return true
			}
		}
		color[v] = 2
		return false
	}
	for v := range adj {
		if color[v] == 0 && visit(int32(v)) {
			return true
		}
	}
	return false
}

// gonumGraph builds a gonum digraph of n vertices without self-loops
// (gonum's simple graphs refuse them) and reports whether there were any.
func gonumGraph(n int, from, to []int32) (*simple.DirectedGraph, bool) {
	dg := simple.NewDirectedGraph()
	for v := 0; v < n; v++ {
		dg.AddNode(simple.Node(v))
	}
	self := false
	for i := range from {
		if from[i] == to[i] {
			self = true
			continue
		}
		dg.SetEdge(dg.NewEdge(simple.Node(from[i]), simple.Node(to[i])))
	}
	return dg, self
}

// randomDigraph draws a digraph of n vertices. kind 0: edges with a random
// density (self-loops and parallel edges allowed); 1: a DAG (edges only
// forward in a random vertex order); 2: a DAG plus one edge closing a
// cycle.
func randomDigraph(rng *rand.Rand, n, kind int) (from, to []int32) {
	perm := rng.Perm(n)
	p := rng.Float64() * 0.5
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if rng.Float64() >= p {
				continue
			}
			switch {
			case kind == 0:
			case a < b:
			default:
				continue
			}
			from, to = append(from, int32(perm[a])), append(to, int32(perm[b]))
			if kind == 0 && rng.IntN(8) == 0 {
				from, to = append(from, int32(perm[a])), append(to, int32(perm[b])) // parallel edge
			}
		}
	}
	if kind == 2 {
		// A forward path a -> b exists once we add it; close it backwards.
		a, b := rng.IntN(n), rng.IntN(n)
		if a > b {
			a, b = b, a
		}
		from, to = append(from, int32(perm[a])), append(to, int32(perm[b]))
		from, to = append(from, int32(perm[b])), append(to, int32(perm[a]))
	}
	// Shuffle the edge list so that successor order is arbitrary too.
	rng.Shuffle(len(from), func(i, j int) {
		from[i], from[j] = from[j], from[i]
		to[i], to[j] = to[j], to[i]
	})
	return from, to
}

func TestFindCycleAgainstReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(2024, 7))
	var cyclic, acyclic, johnson int
	for trial := 0; trial < 4000; trial++ {
		n := 1 + rng.IntN(14)
		kind := trial % 3
		from, to := randomDigraph(rng, n, kind)
		g, err := cdg.NewCSR(n, from, to)
		if err != nil {
			t.Fatal(err)
		}
		adj := make([][]int32, n)
		edge := map[[2]int32]bool{}
		for i := range from {
			adj[from[i]] = append(adj[from[i]], to[i])
			edge[[2]int32{from[i], to[i]}] = true
		}
		got := cdg.FindCycle(g)
		want := refCyclic(adj)
		dg, self := gonumGraph(n, from, to)
		sccCyclic := self
		for _, scc := range topo.TarjanSCC(dg) {
			if len(scc) > 1 {
				sccCyclic = true
			}
		}
		if want != sccCyclic {
			t.Fatalf("trial %d: the references disagree (DFS %v, Tarjan %v) on %v -> %v", trial, want, sccCyclic, from, to)
		}
		if (got != nil) != want {
			t.Fatalf("trial %d: FindCycle = %v, reference cyclic = %v; edges %v -> %v", trial, got, want, from, to)
		}
		if kind == 1 && got != nil || kind == 2 && got == nil {
			t.Fatalf("trial %d (kind %d): FindCycle = %v", trial, kind, got)
		}
		if !slices.Equal(got, cdg.FindCycle(g)) {
			t.Fatalf("trial %d: FindCycle is not deterministic", trial)
		}
		if got == nil {
			acyclic++
			continue
		}
		cyclic++
		// A real cycle: distinct vertices, consecutive edges exist, the
		// last vertex has an edge back to the first.
		seen := map[int32]bool{}
		for i, v := range got {
			if v < 0 || int(v) >= n || seen[v] {
				t.Fatalf("trial %d: cycle %v repeats or leaves the graph", trial, got)
			}
			seen[v] = true
			if w := got[(i+1)%len(got)]; !edge[[2]int32{v, w}] {
				t.Fatalf("trial %d: cycle %v uses %d -> %d, which is no edge", trial, got, v, w)
			}
		}
		// On small graphs the cycle must be one of Johnson's elementary
		// cycles (which gonum lists closed: first vertex repeated last).
		if n <= 8 && len(got) > 1 {
			johnson++
			if !isElementary(got, topo.DirectedCyclesIn(dg)) {
				t.Fatalf("trial %d: cycle %v is not among gonum's elementary cycles", trial, got)
			}
		}
	}
	if cyclic < 1000 || acyclic < 1000 || johnson < 300 {
		t.Fatalf("weak sample: %d cyclic, %d acyclic, %d checked against Johnson", cyclic, acyclic, johnson)
	}
	t.Logf("%d cyclic, %d acyclic digraphs; %d cycles matched against Johnson's enumeration", cyclic, acyclic, johnson)
}

// isElementary reports whether cyc is, up to rotation, one of the cycles.
func isElementary(cyc []int32, cycles [][]graph.Node) bool {
	for _, c := range cycles {
		c = c[:len(c)-1]
		if len(c) != len(cyc) {
			continue
		}
		for rot := range c {
			match := true
			for i := range cyc {
				if c[(rot+i)%len(c)].ID() != int64(cyc[i]) {
					match = false
					break
				}
			}
			if match {
				return true
			}
		}
	}
	return false
}

// TestFindCycleLong checks that the search is iterative: a single cycle
// through a million vertices, and a million-vertex path, do not overflow
// any stack.
func TestFindCycleLong(t *testing.T) {
	const n = 1_000_000
	from, to := make([]int32, n), make([]int32, n)
	for i := range from {
		from[i], to[i] = int32(i), int32((i+1)%n)
	}
	g, err := cdg.NewCSR(n, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if c := cdg.FindCycle(g); len(c) != n || c[0] != 0 || c[n-1] != n-1 {
		t.Fatalf("ring of %d: cycle of %d vertices", n, len(c))
	}
	g, err = cdg.NewCSR(n, from[:n-1], to[:n-1])
	if err != nil {
		t.Fatal(err)
	}
	if c := cdg.FindCycle(g); c != nil {
		t.Fatalf("path: cycle of %d vertices", len(c))
	}
}
