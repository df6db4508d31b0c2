package plan

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

func compile(t testing.TB, tp *topo.Topology, err error) *fabric.Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// treeRouting routes every LID along BFS shortest paths in the subgraph
// of channels ok allows, each switch taking its lowest-numbered usable
// port (a fixture: deadlock-free when the subgraph is a line or a tree).
func treeRouting(t testing.TB, g *fabric.Graph, name string, ok func(c int32) bool) *lft.Routing {
	t.Helper()
	r := lft.New(g, name)
	S := g.NumSwitches()
	dist := make([]int32, S)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		sw, term := g.Owner(lid)
		dsw, dport := sw, uint8(0)
		if term >= 0 {
			dsw, dport = g.Terms[term].Switch, g.Terms[term].SwitchPort
		}
		if dsw < 0 {
			continue
		}
		for i := range dist {
			dist[i] = -1
		}
		dist[dsw] = 0
		q := []int32{dsw}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				// the reverse channel carries packets towards x
				if y := g.Head[c]; dist[y] < 0 && ok(g.Rev[c]) {
					dist[y] = dist[x] + 1
					q = append(q, y)
				}
			}
		}
		for u := int32(0); int(u) < S; u++ {
			if u == dsw {
				r.SetPort(u, lid, dport)
				continue
			}
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if ok(c) && dist[u] > 0 && dist[g.Head[c]] == dist[u]-1 {
					r.SetPort(u, lid, g.OutPort[c])
					break
				}
			}
		}
	}
	return r
}

// cut returns a channel filter that drops the cable between switches a
// and b.
func cut(g *fabric.Graph, a, b int32) func(c int32) bool {
	return func(c int32) bool {
		x, y := g.Tail[c], g.Head[c]
		return !(x == a && y == b || x == b && y == a)
	}
}

// mustVerify fails unless r is safe on g.
func mustVerify(t testing.TB, g *fabric.Graph, r *lft.Routing, vls int) {
	t.Helper()
	if rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: vls}); err != nil {
		t.Fatalf("%s: %v\n%s", r.Engine, err, rep)
	}
}

func build(t testing.TB, g *fabric.Graph, old, new *lft.Routing, opt Options) *Plan {
	t.Helper()
	p, err := Build(context.Background(), g, old, new, opt)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return p
}

func verify(t testing.TB, g *fabric.Graph, old, new *lft.Routing, p *Plan, opt Options) *Report {
	t.Helper()
	rep, err := Verify(context.Background(), g, old, new, p, opt)
	if rep == nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

func mustDiff(t testing.TB, g *fabric.Graph, old, new *lft.Routing) *lft.Delta {
	t.Helper()
	d, err := lft.Diff(g, old, new)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// cdgSafe reports whether r passes the cdg verifier on g.
func cdgSafe(g *fabric.Graph, r *lft.Routing, vls int) bool {
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: vls})
	return err == nil && rep.OK()
}
