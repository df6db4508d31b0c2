package lft_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// walkCase is a fabric with tables that fail in every way a walk can: a
// tenth of the entries corrupted (loops, dead ends, port 0, ports beyond
// the switch, wrong ports at the destination) and, in some cases, cables
// failed after routing (uncabled ports).
type walkCase struct {
	name string
	g    *fabric.Graph
	r    *lft.Routing
}

func walkCases(t *testing.T) []walkCase {
	t.Helper()
	var out []walkCase
	add := func(name string, tp *topo.Topology, err error, failLinks int, seed uint64) {
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		r, err := routing.MinHop{}.Route(context.Background(), g, routing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if failLinks > 0 {
			f, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: failLinks, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if g, err = fabric.Compile(f); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		for x := int32(0); int(x) < g.NumSwitches(); x++ {
			np := g.F.Nodes[g.Switches[x]].NumPorts()
			for lid := 1; lid <= g.MaxLID(); lid++ {
				if rng.IntN(10) == 0 {
					r.SetPort(x, lid, uint8(rng.IntN(np+3)))
				}
				if rng.IntN(100) == 0 {
					r.SetPort(x, lid, lft.NoPort)
				}
			}
		}
		out = append(out, walkCase{name, g, r})
	}
	for seed := uint64(1); seed <= 3; seed++ {
		tp, err := topo.Torus([]int{4, 3}, 2, false)
		add(fmt.Sprintf("torus4x3-%d", seed), tp, err, int(seed)*2, seed)
		tp, err = topo.Random(10, 3, 1, seed)
		add(fmt.Sprintf("random10-%d", seed), tp, err, 0, seed)
	}
	tp, err := topo.FatTree(2, 3, 0)
	add("fattree2-3-failed", tp, err, 3, 9)
	return out
}

// naiveHops follows the tables hop by hop from u towards LID d (delivered)
// and returns the channels crossed.
func naiveHops(g *fabric.Graph, r *lft.Routing, u int32, d int, dsw int32) []int32 {
	var path []int32
	for x := u; x != dsw; {
		c := g.ChannelAt(x, r.Port(x, d))
		path = append(path, c)
		x = g.Head[c]
	}
	return path
}

// TestWalkerMatchesReference: for every (switch, destination LID) the
// Walker's outcome, failure switch, hop count and accumulated channel
// loads equal those of the naive pair-by-pair walk of
// enginetest.Reference and of a plain hop-by-hop walk.
func TestWalkerMatchesReference(t *testing.T) {
	seen := map[lft.Reason]bool{}
	for _, c := range walkCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ref := enginetest.Reference(c.g, c.r, enginetest.RefOptions{SwitchDelivery: true})
			type key struct {
				d int
				u int32
			}
			fails := map[key]enginetest.Failure{}
			for _, f := range ref.Failures {
				fails[key{f.DLID, f.Src}] = f
			}
			checkWalker(t, c, func(d int, u int32) (enginetest.Failure, bool) {
				f, ok := fails[key{d, u}]
				return f, ok
			}, seen)
		})
	}
	for r := lft.Delivered; r <= lft.WrongPort; r++ {
		if !seen[r] {
			t.Errorf("no walk ended in %q: the cases do not cover it", r)
		}
	}
}

func checkWalker(t *testing.T, c walkCase, fail func(d int, u int32) (enginetest.Failure, bool), seen map[lft.Reason]bool) {
	g, r := c.g, c.r
	S := g.NumSwitches()
	w := lft.NewWalker(g, r)
	load, perCh, want := make([]int64, S), make([]int64, g.NumChannels()), make([]int64, g.NumChannels())
	comp, dist, queue := make([]int32, S), make([]int32, S), make([]int32, S)
	for d := 1; d <= g.MaxLID(); d++ {
		dsw := w.Dest(d)
		if dsw < 0 {
			continue
		}
		_, _, term := lft.Target(g, d)
		g.BFS(dsw, dist, queue)
		copy(comp, dist)
		clear(perCh)
		clear(want)
		settled := 0
		for u := int32(0); int(u) < S; u++ {
			why, at := w.Resolve(u)
			settled += len(w.Settled())
			seen[why] = true
			f, failed := fail(d, u)
			checked := comp[u] >= 0 && (term >= 0 || u != dsw) // the reference's pairs
			switch {
			case checked && failed && (why != f.Reason || !slices.Contains(f.At, at)):
				t.Fatalf("LID %d from switch %d: walker %q at %d, reference %q at %v", d, u, why, at, f.Reason, f.At)
			case checked && !failed && why != lft.Delivered:
				t.Fatalf("LID %d from switch %d: walker %q at %d, reference delivers", d, u, why, at)
			case why != lft.Delivered:
				load[u] = 0
				continue
			}
			path := naiveHops(g, r, u, d, dsw)
			if int(w.Hops(u)) != len(path) || (len(path) > 0 && w.Next(u) != path[0]) {
				t.Fatalf("LID %d from switch %d: %d hops first channel %d, want %v", d, u, w.Hops(u), w.Next(u), path)
			}
			load[u] = int64(u) + 1
			for _, ch := range path {
				want[ch] += load[u]
			}
		}
		if settled != S {
			t.Fatalf("LID %d: Resolve settled %d switches, want each of %d once", d, settled, S)
		}
		w.Accumulate(load, perCh)
		if !slices.Equal(perCh, want) {
			t.Fatalf("LID %d: accumulated %v, want %v", d, perCh, want)
		}
	}
}

// TestWalkerColumn: walks along an explicit column equal those along the
// routing's tables.
func TestWalkerColumn(t *testing.T) {
	c := walkCases(t)[0]
	g, r := c.g, c.r
	a, b := lft.NewWalker(g, r), lft.NewWalker(g, nil)
	col := make([]uint8, g.NumSwitches())
	for d := 1; d <= g.MaxLID(); d++ {
		dsw, dport, _ := lft.Target(g, d)
		if a.Dest(d) != dsw || dsw < 0 {
			continue
		}
		for x := range col {
			col[x] = r.Port(int32(x), d)
		}
		b.DestColumn(col, dsw, dport)
		for u := int32(0); int(u) < g.NumSwitches(); u++ {
			w1, at1 := a.Resolve(u)
			w2, at2 := b.Resolve(u)
			if w1 != w2 || at1 != at2 || (w1 == lft.Delivered && a.Hops(u) != b.Hops(u)) {
				t.Fatalf("LID %d switch %d: tables %q at %d, column %q at %d", d, u, w1, at1, w2, at2)
			}
		}
	}
}

// TestHopLoopback: a port cabled back to its own switch loops.
func TestHopLoopback(t *testing.T) {
	b := fabric.NewBuilder()
	sw, err := b.AddNode(fabric.Switch, 0x10, 4, "sw")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Connect(fabric.PortRef{Node: sw, Port: 1}, fabric.PortRef{Node: sw, Port: 2}); err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(b.Fabric())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    uint8
		want lft.Reason
	}{{1, lft.Loop}, {3, lft.Uncabled}, {0, lft.WrongNode}, {5, lft.BadPort}, {lft.NoPort, lft.NoRoute}} {
		if c, why := lft.Hop(g, 0, tc.p); c != -1 || why != tc.want {
			t.Errorf("port %d: %d %q, want -1 %q", tc.p, c, why, tc.want)
		}
	}
}
