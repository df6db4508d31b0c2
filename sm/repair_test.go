package sm

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/metrictest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// readGen reads a published generation's fabric and tables.
func readGen(t *testing.T, out string, gen int) (*fabric.Graph, *lft.Routing) {
	t.Helper()
	dir := (&publisher{dir: out}).genDir(gen)
	l, err := ibnetdiscover.LoadFile(filepath.Join(dir, "fabric.topo"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := lft.ReadTableSet(dir, l.Graph, lft.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Graph, r
}

// torusServer starts a server on a 4×4×4 torus (dump fab, output out)
// routed by Nue at 8 VLs and waits for its first generation.
func torusServer(t *testing.T) (s *Server, tp *topo.Topology, fab, out string) {
	t.Helper()
	dir := t.TempDir()
	fab = filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{4, 4, 4}, 1, false)
	writeFabric(t, fab, tp, err)
	out = filepath.Join(dir, "out")
	s = start(t, Config{Fabric: fab, Output: out, Engines: "nue", MaxVLs: 8})
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 })
	return s, tp, fab, out
}

// A cable failure repairs the published tables (only entries that led
// into the cable change, engine "nue+repair"); another reroute of the same
// fabric keeps them; the cable's return brings back the full routing from
// before the failure.
func TestCableFailureRepairs(t *testing.T) {
	s, tp, fab, out := torusServer(t)
	g0, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	dests := g0.NumSwitches() + len(g0.Terms) // LMC 0
	if vs := s.verified.Load(); vs == nil || vs.Walked() != dests {
		t.Fatalf("the full routing's verification kept no State, or not of its %d destinations", dests)
	}

	failed, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{LinkFraction: 0.01, Seed: 7, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	writeFabric(t, fab, &topo.Topology{Fabric: failed}, nil)
	st := waitFor(t, s, "repair", func(st Status) bool { return st.Published != nil && st.Published.Generation == 2 })
	if st.Published.Engine != "nue"+repairSuffix {
		t.Fatalf("engine after a cable failure: %q, expected nue+repair", st.Published.Engine)
	}
	g, rep := readGen(t, out, 2)
	_, old := readGen(t, out, 1)
	d, err := lft.Diff(g, old, rep)
	if err != nil {
		t.Fatal(err)
	}
	e, err := routing.Lookup("nue")
	if err != nil {
		t.Fatal(err)
	}
	full, err := e.Route(context.Background(), g, routing.Options{MaxVLs: 8})
	if err != nil {
		t.Fatal(err)
	}
	df, err := lft.Diff(g, old, full)
	if err != nil {
		t.Fatal(err)
	}
	n, nf := d.Summary().Entries, df.Summary().Entries
	if n == 0 || n*4 > nf {
		t.Errorf("repair changed %d entries, a full Nue reroute %d: not a minimal change", n, nf)
	}
	t.Logf("repair: %d entries changed (full reroute: %d)", n, nf)
	// The repair was verified against generation 1's State: only the
	// destinations whose entries changed were walked (a repair changes
	// every entry into the failed cables).
	nd := changedDests(g, old, rep)
	if vs := s.verified.Load(); vs == nil || vs.Walked() != nd {
		t.Errorf("the repair's verification kept no State, or walked other than the %d destinations whose entries changed", nd)
	} else {
		t.Logf("repair verified walking %d of %d destinations", vs.Walked(), dests)
	}

	n0 := st.Reroutes
	s.Trigger("test")
	st = waitFor(t, s, "reroute of the same fabric", func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
	if st.LastResult != resultUnchanged || st.Published.Generation != 2 || st.Published.Engine != "nue"+repairSuffix {
		t.Fatalf("same fabric again: %s, generation %d, engine %s; the repaired tables should stay", st.LastResult, st.Published.Generation, st.Published.Engine)
	}

	// The cable comes back: the routing from before the failure returns,
	// entry for entry, verified against its own State (nothing to walk).
	writeFabric(t, fab, tp, nil)
	st = waitFor(t, s, "cable back", func(st Status) bool { return st.Published != nil && st.Published.Generation == 3 })
	if st.Published.Engine != "nue" {
		t.Fatalf("engine after the cable came back: %q, expected nue (the full routing restored)", st.Published.Engine)
	}
	g3, back := readGen(t, out, 3)
	if !lft.Equal(back, old) {
		t.Errorf("the cable came back, yet the tables are not those from before the failure (%d columns differ)", changedDests(g3, old, back))
	}
	if vs := s.verified.Load(); vs == nil || vs.Walked() != 0 {
		t.Errorf("the restored tables were not verified against the State of the full routing")
	}
}

// changedDests counts the LIDs whose entries differ between a and b (g's
// switches and LIDs).
func changedDests(g *fabric.Graph, a, b *lft.Routing) int {
	n := 0
	for lid := 1; lid <= g.MaxLID(); lid++ {
		for x := range int32(g.NumSwitches()) {
			if a.Port(x, lid) != b.Port(x, lid) {
				n++
				break
			}
		}
	}
	return n
}

// into counts the entries of r (on g) that lead into cable l of fabric
// f (g's fabric with l cabled).
func into(g *fabric.Graph, r *lft.Routing, f *fabric.Fabric, l fabric.Link) int {
	n := 0
	for _, end := range []fabric.PortRef{l.A, l.B} {
		id, ok := g.F.NodeByGUID(f.Nodes[end.Node].GUID)
		if !ok || g.SwitchOf[id] < 0 {
			continue
		}
		x := g.SwitchOf[id]
		for lid := 1; lid <= g.MaxLID(); lid++ {
			if r.Port(x, lid) == uint8(end.Port) {
				n++
			}
		}
	}
	return n
}

// unlink returns f without cable l.
func unlink(f *fabric.Fabric, l fabric.Link) *fabric.Fabric {
	out := f.Clone()
	out.Port(l.A).Peer, out.Port(l.B).Peer = fabric.NoPeer, fabric.NoPeer
	return out
}

// Two cables fail one after the other, then come back one after the
// other: each return repairs the full routing from before the failures
// for the fabric (only the still-failed cable's entries differ from it),
// verified against that routing's State walking only the destinations
// whose entries differ from it; the returned cable carries its traffic
// again, the change is of the order of the entries it carried, and the
// last return restores the full routing entry for entry. (A returned
// cable may carry more than before the failures: the detours around the
// cable still failed may run over it.)
func TestCableReturnRepairs(t *testing.T) {
	s, tp, fab, out := torusServer(t)
	_, r0 := readGen(t, out, 1)

	f1, fl1, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: 1, Seed: 3, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	f12, fl2, err := topo.InjectFailures(f1, topo.FailureSpec{Links: 1, Seed: 5, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := fl1[0].Link, fl2[0].Link
	steps := []struct {
		f      *fabric.Fabric
		engine string
		back   *fabric.Link // the cable that came back
	}{
		{f1, "nue+repair", nil},
		{f12, "nue+repair", nil},
		{unlink(tp.Fabric, c2), "nue+repair", &c1},
		{tp.Fabric, "nue", &c2},
	}
	g0, _ := readGen(t, out, 1)
	for i, step := range steps {
		gen := i + 2
		writeFabric(t, fab, &topo.Topology{Fabric: step.f}, nil)
		st := waitFor(t, s, fmt.Sprintf("generation %d", gen), func(st Status) bool { return st.Published != nil && st.Published.Generation == gen })
		if st.Published.Engine != step.engine {
			t.Fatalf("generation %d: engine %q, expected %q", gen, st.Published.Engine, step.engine)
		}
		if step.back == nil {
			continue
		}
		g, r := readGen(t, out, gen)
		_, prev := readGen(t, out, gen-1)
		used := into(g0, r0, tp.Fabric, *step.back)
		carried := into(g, r, tp.Fabric, *step.back)
		d, err := lft.Diff(g, prev, r)
		if err != nil {
			t.Fatal(err)
		}
		n := d.Summary().Entries
		if carried == 0 || n == 0 || n > 5*used {
			t.Errorf("generation %d: the returned cable carries %d entries (%d before the failures); %d entries changed", gen, carried, used, n)
		}
		walked := changedDests(g, r0, r)
		if vs := s.verified.Load(); vs == nil || vs.Walked() != walked {
			t.Errorf("generation %d: not verified against the full routing's State walking the %d destinations that differ from it", gen, walked)
		}
		t.Logf("generation %d: the returned cable carries %d entries (%d before the failures); %d entries changed, %d destinations walked", gen, carried, used, n, walked)
	}
	g, r := readGen(t, out, len(steps)+1)
	if !lft.Equal(r, r0) {
		t.Errorf("every cable back, yet %d destinations' entries differ from the full routing's", changedDests(g, r0, r))
	}
}

// A host's cable fails: the published tables need no change, so they
// stay published (no new generation, no full reroute). When the host
// comes back, the fabric is the one the published tables were routed
// for: they stay too, verified for it against the full routing's State
// (nothing walked) with no routing or repair run.
func TestHostCableKeepsTables(t *testing.T) {
	s, tp, fab, _ := torusServer(t)
	var host fabric.Link
	for _, l := range tp.Fabric.Links() {
		if tp.Fabric.Nodes[l.A.Node].Kind != tp.Fabric.Nodes[l.B.Node].Kind {
			host = l
			break
		}
	}
	for i, step := range []struct {
		what string
		f    *fabric.Fabric
	}{{"host gone", unlink(tp.Fabric, host)}, {"host back", tp.Fabric}} {
		n0, routes, verifies := s.Status().Reroutes, phaseCount(t, s, "route"), phaseCount(t, s, "verify")
		writeFabric(t, fab, &topo.Topology{Fabric: step.f}, nil)
		st := waitFor(t, s, step.what, func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
		if st.LastResult != resultUnchanged || st.Published.Generation != 1 || st.Published.Engine != "nue" {
			t.Fatalf("%s: %s %q, generation %d, engine %s; the published tables should stay", step.what, st.LastResult, st.LastError,
				st.Published.Generation, st.Published.Engine)
		}
		if i == 0 {
			continue
		}
		if n := phaseCount(t, s, "route") - routes; n != 0 {
			t.Errorf("%s: %d routing or repair runs; the published tables were routed for this fabric", step.what, n)
		}
		if n := phaseCount(t, s, "verify") - verifies; n != 1 {
			t.Errorf("%s: %d verifications, expected the kept tables' one", step.what, n)
		}
		if vs := s.verified.Load(); vs == nil || vs.Walked() != 0 {
			t.Errorf("%s: the kept tables were not verified against the full routing's State", step.what)
		}
	}
}

// phaseCount is how many times the reroute phase was timed (metric
// nuesm_reroute_phase_duration_seconds).
func phaseCount(t *testing.T, s *Server, phase string) uint64 {
	t.Helper()
	return uint64(metrictest.Value(t, s.metrics.Registry, "nuesm_reroute_phase_duration_seconds", "phase", phase))
}
