package sm

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
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

// A cable failure repairs the published tables (only entries that led
// into the cable change, engine "nue+repair"); another reroute of the same
// fabric keeps them; the cable's return routes in full again.
func TestCableFailureRepairs(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.Torus([]int{4, 4, 4}, 1, false)
	writeFabric(t, fab, tp, err)
	out := filepath.Join(dir, "out")
	s := start(t, Config{Fabric: fab, Output: out, Engines: "nue", MaxVLs: 8})
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 })
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
	changedDests := 0
	for lid := 1; lid <= g.MaxLID(); lid++ {
		for x := range int32(g.NumSwitches()) {
			if old.Port(x, lid) != rep.Port(x, lid) {
				changedDests++
				break
			}
		}
	}
	if vs := s.verified.Load(); vs == nil || vs.Walked() != changedDests {
		t.Errorf("the repair's verification kept no State, or walked other than the %d destinations whose entries changed", changedDests)
	} else {
		t.Logf("repair verified walking %d of %d destinations", vs.Walked(), dests)
	}

	n0 := st.Reroutes
	s.Trigger("test")
	st = waitFor(t, s, "reroute of the same fabric", func(st Status) bool { return st.Reroutes > n0 && st.State == "idle" })
	if st.LastResult != resultUnchanged || st.Published.Generation != 2 || st.Published.Engine != "nue"+repairSuffix {
		t.Fatalf("same fabric again: %s, generation %d, engine %s; the repaired tables should stay", st.LastResult, st.Published.Generation, st.Published.Engine)
	}

	writeFabric(t, fab, tp, nil)
	st = waitFor(t, s, "full reroute", func(st Status) bool { return st.Published != nil && st.Published.Generation == 3 })
	if st.Published.Engine != "nue" {
		t.Fatalf("engine after the cable came back: %q, expected nue", st.Published.Engine)
	}
}
