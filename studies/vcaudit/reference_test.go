package vcaudit

import (
	"fmt"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcpolicy"
)

// refEdges is the reference: it enumerates every path explicitly (no
// memo) with its own all-pairs distances, computes the counters along
// each path and collects the (channel, VC) dependencies.
func refEdges(t *testing.T, g *fabric.Graph, group []int, m Misroute, p vcpolicy.Policy) map[uint64]struct{} {
	n := g.NumSwitches()
	const inf = 1 << 20
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
		for j := range d[i] {
			d[i][j] = inf
		}
		d[i][i] = 0
	}
	for c := 0; c < g.NumChannels(); c++ {
		d[g.Tail[c]][g.Head[c]] = 1
	}
	for k := range n {
		for i := range n {
			for j := range n {
				d[i][j] = min(d[i][j], d[i][k]+d[k][j])
			}
		}
	}
	edges := map[uint64]struct{}{}
	V := int32(p.VCs)
	var walk func(x, dst int32, path []int32, phase int)
	walk = func(x, dst int32, path []int32, phase int) {
		if x == dst {
			var prev int32 = -1
			var h vcpolicy.Hop
			for i, c := range path {
				glob := group[g.Tail[c]] != group[g.Head[c]]
				h.Global = glob
				h.IntoDest = group[g.Head[c]] == group[dst]
				h.Phase = phaseOf(i, phase)
				vc, _ := p.VC(h)
				v := c*V + int32(vc)
				if prev >= 0 {
					edges[uint64(prev)<<32|uint64(v)] = struct{}{}
				}
				prev = v
				h.Hops++
				if glob {
					h.GlobalHops++
					h.HopsInGroup = 0
				} else {
					h.LocalHops++
					h.HopsInGroup++
				}
			}
			return
		}
		if len(path) > 2*n {
			t.Fatalf("reference path too long")
		}
		for c := g.Off[x]; c < g.Off[x+1]; c++ {
			y := g.Head[c]
			if d[y][dst] == d[x][dst]-1 {
				walk(y, dst, append(path, c), phase)
			} else if m == AnyPort && phase < 0 {
				walk(y, dst, append(path, c), len(path))
			}
		}
	}
	for s := int32(0); int(s) < n; s++ {
		for t := int32(0); int(t) < n; t++ {
			if s != t {
				walk(s, t, nil, -1)
			}
		}
	}
	return edges
}

// phaseOf: the misroute happened at hop index at (-1 none); hops from
// it on carry phase 1.
func phaseOf(i, at int) int {
	if at >= 0 && i >= at {
		return 1
	}
	return 0
}

// TestAgainstReference compares the memoised state search with explicit
// path enumeration on random graphs, rings and a flattened butterfly,
// with and without groups and one misroute.
func TestAgainstReference(t *testing.T) {
	pols := []vcpolicy.Policy{vcpolicy.HopsPolicy(3), policy(t, "vcs=3,local=hops-in-group,global=global-hops,clamp"), policy(t, "phase"), policy(t, "df-2vc")}
	type fab struct {
		name string
		g    *fabric.Graph
	}
	var fabs []fab
	for seed := 1; seed <= 6; seed++ {
		_, g := gen(t, "random", map[string]string{"switches": "8", "degree": "3", "hosts": "1", "seed": fmt.Sprint(seed)})
		fabs = append(fabs, fab{fmt.Sprintf("random seed %d", seed), g})
	}
	_, ring := gen(t, "ring", map[string]string{"switches": "6"})
	_, fb := gen(t, "fbfly", map[string]string{"dims": "3x3", "hosts": "1"})
	fabs = append(fabs, fab{"ring 6", ring}, fab{"fbfly 3x3", fb})
	checked := 0
	defer func() { t.Logf("%d audits compared", checked) }()
	for _, f := range fabs {
		for _, grouped := range []bool{false, true} {
			group := make([]int, f.g.NumSwitches())
			if grouped {
				for i := range group {
					group[i] = i % 3
				}
			}
			for _, m := range []Misroute{NoMisroute, AnyPort} {
				for _, p := range pols {
					a, err := newAuditor(Config{Graph: f.g, Group: group, Misroute: m, Policy: p})
					if err != nil {
						t.Fatal(err)
					}
					for d := int32(0); int(d) < f.g.NumSwitches(); d++ {
						if err := a.dest(d); err != nil {
							t.Fatal(err)
						}
					}
					want := refEdges(t, f.g, group, m, p)
					checked++
					if len(want) != len(a.edges) {
						t.Fatalf("%s grouped=%v %v %s: %d edges, reference %d", f.name, grouped, m, p.Name, len(a.edges), len(want))
					}
					for e := range want {
						if _, ok := a.edges[e]; !ok {
							t.Fatalf("%s grouped=%v %v %s: missing edge %x", f.name, grouped, m, p.Name, e)
						}
					}
				}
			}
		}
	}
}

// refGrouped is the reference for grouped routings: minimal choices come
// from the two-level tables (checked against BFS in package rsi), the
// misroute rules are restated here, and every path is enumerated.
func refGrouped(t *testing.T, tb *rsi.Tables, m Misroute, p vcpolicy.Policy) map[uint64]struct{} {
	g, group := tb.G, tb.Group
	edges := map[uint64]struct{}{}
	V := int32(p.VCs)
	var walk func(x, dst int32, path []int32, at int)
	walk = func(x, dst int32, path []int32, at int) {
		if len(path) > 16 {
			t.Fatal("reference path too long")
		}
		if x == dst {
			var prev int32 = -1
			var h vcpolicy.Hop
			for i, c := range path {
				glob := group[g.Tail[c]] != group[g.Head[c]]
				h.Global, h.IntoDest, h.Phase = glob, group[g.Head[c]] == group[dst], phaseOf(i, at)
				vc, _ := p.VC(h)
				v := c*V + int32(vc)
				if prev >= 0 {
					edges[uint64(prev)<<32|uint64(v)] = struct{}{}
				}
				prev = v
				h.Hops++
				if glob {
					h.GlobalHops++
					h.HopsInGroup = 0
				} else {
					h.LocalHops++
					h.HopsInGroup++
				}
			}
			return
		}
		mins := tb.Lookup(x, dst)
		for _, c := range mins {
			walk(g.Head[c], dst, append(path, c), at)
		}
		if at >= 0 {
			return
		}
		for c := g.Off[x]; c < g.Off[x+1]; c++ {
			if len(mins) == 1 && mins[0] == c && m != SourceGlobal {
				continue
			}
			xg, hg, dg := group[x], group[g.Head[c]], group[dst]
			ok := false
			switch m {
			case LAROwn:
				ok = (xg == dg && hg == xg) || (xg != dg && hg != xg)
			case SourceGlobal:
				ok = len(path) == 0 && hg != xg && hg != dg
			}
			if ok {
				walk(g.Head[c], dst, append(path, c), len(path))
			}
		}
	}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for d := int32(0); int(d) < g.NumSwitches(); d++ {
			if s != d {
				walk(s, d, nil, -1)
			}
		}
	}
	return edges
}

// TestGroupedAgainstReference compares the audit with refGrouped on a
// Dragonfly and a small RSI network, for LAR and seed 002's misroute.
func TestGroupedAgainstReference(t *testing.T) {
	nets := []struct {
		kind   string
		params map[string]string
	}{
		{"dragonfly", map[string]string{"p": "2", "a": "4", "h": "2"}},
		{"rsi", map[string]string{"layer1": "full-3", "supernodes": "3"}},
		{"rsi", map[string]string{"layer1": "butterfly-2x2", "supernodes": "3", "links": "2"}},
	}
	pols := []vcpolicy.Policy{vcpolicy.HopsPolicy(4), policy(t, "rsi-paper"), policy(t, "df-2vc"), policy(t, "phase")}
	for _, n := range nets {
		tp, g := gen(t, n.kind, n.params)
		tb, err := rsi.Build(g, tp.Group)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []Misroute{NoMisroute, LAROwn, SourceGlobal} {
			for _, p := range pols {
				a, err := newAuditor(Config{Graph: g, Tables: tb, Misroute: m, Policy: p})
				if err != nil {
					t.Fatal(err)
				}
				for d := int32(0); int(d) < g.NumSwitches(); d++ {
					if err := a.dest(d); err != nil {
						t.Fatal(err)
					}
				}
				want := refGrouped(t, tb, m, p)
				if len(want) != len(a.edges) {
					t.Fatalf("%s %v %v %s: %d edges, reference %d", n.kind, n.params, m, p.Name, len(a.edges), len(want))
				}
				for e := range want {
					if _, ok := a.edges[e]; !ok {
						t.Fatalf("%s %v %v %s: missing edge %x", n.kind, n.params, m, p.Name, e)
					}
				}
			}
		}
	}
}
