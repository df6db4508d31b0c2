package sm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// publishedTorus publishes generation 1 for a torus with a daemon of
// cfg's engines (its dump and output set here) and stops it.
func publishedTorus(t *testing.T, dims []int, cfg Config) (tp *topo.Topology, fab, out string, _ Config) {
	t.Helper()
	dir := t.TempDir()
	fab, out = filepath.Join(dir, "fabric.topo"), filepath.Join(dir, "out")
	tp, err := topo.Torus(dims, 1, false)
	writeFabric(t, fab, tp, err)
	cfg.Fabric, cfg.Output = fab, out
	s, stop := serve(t, cfg)
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 && st.State == "idle" })
	stop()
	return tp, fab, out, cfg
}

// restarted starts a daemon on a published output and waits for its
// first reroute.
func restarted(t *testing.T, cfg Config, opts ...Option) (*Server, Status, func()) {
	t.Helper()
	s, stop := serve(t, cfg, opts...)
	st := waitFor(t, s, "the first reroute after the restart", func(st Status) bool { return st.Reroutes > 0 && st.State == "idle" })
	return s, st, stop
}

// A restart on the fabric the published tables were verified for, in
// other text, keeps them as the running daemon does: no routing or
// repair run, one verification (of the tables read back, for the new
// dump's fabric). Its node blocks reordered: nothing is published. A
// host renamed: a new generation with the same tables publishes the
// dump and OpenSM's LFT dump that name it. Repaired tables (after a
// cable failure) stay too when their dump is reordered.
func TestRestartSameFabricOtherText(t *testing.T) {
	tp, fab, out, cfg := publishedTorus(t, []int{4, 4, 4}, Config{Engines: "nue", MaxVLs: 8})
	_, r1 := readGen(t, out, 1)
	renamed := tp.Fabric.Clone()
	for i := range renamed.Nodes {
		if renamed.Nodes[i].Kind == fabric.CA {
			renamed.Nodes[i].Desc += " renamed"
			break
		}
	}
	// keep restarts the daemon after write and checks that it keeps
	// generation gen's tables, r1, verified once, routed and repaired by
	// no run, with the result expected.
	keep := func(what string, write func(), gen int, result, engine string) {
		t.Helper()
		write()
		s, st, stop := restarted(t, cfg)
		stop()
		if st.LastResult != result || st.Published == nil || st.Published.Generation != gen || st.Published.Engine != engine {
			t.Fatalf("restart, %s: %s %q, published %+v; expected %s, generation %d by %s", what, st.LastResult, st.LastError,
				st.Published, result, gen, engine)
		}
		if n := phaseCount(t, s, "route"); n != 0 {
			t.Errorf("restart, %s: %d routing or repair runs; the published tables were verified for this fabric", what, n)
		}
		if n := phaseCount(t, s, "verify"); n != 1 {
			t.Errorf("restart, %s: %d verifications, expected the kept tables' one", what, n)
		}
		if g, r := readGen(t, out, gen); !lft.Equal(r, r1) {
			t.Errorf("restart, %s: generation %d's tables differ from the kept ones in %d destinations", what, gen, changedDests(g, r1, r))
		}
	}
	keep("node blocks reordered", func() { writeText(t, fab, reorderedDump(t, fab)) }, 1, resultUnchanged, "nue")
	keep("a host renamed", func() { writeFabric(t, fab, &topo.Topology{Fabric: renamed}, nil) }, 2, resultPublished, "nue")
	want, err := os.ReadFile(fab)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(out, genName(2), lft.FabricFile)); err != nil || string(got) != string(want) {
		t.Errorf("generation 2 does not publish the dump with the renamed host (%v)", err)
	}

	failed, _, err := topo.InjectFailures(renamed, topo.FailureSpec{LinkFraction: 0.01, Seed: 7, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	writeFabric(t, fab, &topo.Topology{Fabric: failed}, nil)
	s, stop := serve(t, cfg)
	st := waitFor(t, s, "repair", func(st Status) bool { return st.Published != nil && st.Published.Generation == 3 && st.State == "idle" })
	stop()
	if st.Published.Engine != "nue"+repairSuffix {
		t.Fatalf("engine after a cable failure: %q, expected nue+repair", st.Published.Engine)
	}
	_, r1 = readGen(t, out, 3)
	keep("repaired tables' dump reordered", func() { writeText(t, fab, reorderedDump(t, fab)) }, 3, resultUnchanged, "nue"+repairSuffix)
	checkPublished(t, out)
}

// A host's cable fails while the daemon is down: after the restart the
// published tables, which need no change, stay published (verified for
// the fabric without the host, no full routing), as they do when the
// cable fails while it runs (TestHostCableKeepsTables).
func TestRestartHostCableKeepsTables(t *testing.T) {
	tp, fab, out, cfg := publishedTorus(t, []int{4, 4, 4}, Config{Engines: "nue", MaxVLs: 8})
	_, r1 := readGen(t, out, 1)
	var host fabric.Link
	for _, l := range tp.Fabric.Links() {
		if tp.Fabric.Nodes[l.A.Node].Kind != tp.Fabric.Nodes[l.B.Node].Kind {
			host = l
			break
		}
	}
	writeFabric(t, fab, &topo.Topology{Fabric: unlink(tp.Fabric, host)}, nil)
	s, st, stop := restarted(t, cfg)
	stop()
	if st.LastResult != resultUnchanged || st.Published == nil || st.Published.Generation != 1 || st.Published.Engine != "nue" {
		t.Fatalf("restart without a host: %s %q, published %+v; the published tables should stay", st.LastResult, st.LastError, st.Published)
	}
	if n := phaseCount(t, s, "verify"); n != 1 {
		t.Errorf("restart without a host: %d verifications, expected the kept tables' one", n)
	}
	if _, r := readGen(t, out, 1); !lft.Equal(r, r1) {
		t.Error("generation 1's tables changed")
	}
}

// A restart on a damaged published generation never panics: the engine
// chain routes afresh and publishes a new, verified generation, whether
// the dump is the published text (a full routing's text routes in full
// after a restart anyway) or the same fabric in other text, where the
// log says why the published tables are not kept: a published dump
// that is missing or does not load cannot show that the fabric is the
// same; tables that do not read back or do not verify are not kept.
func TestRestartDamagedPublished(t *testing.T) {
	for _, tc := range []struct {
		what   string
		damage func(t *testing.T, dir string)
		log    string // why the tables are not kept, in other text
		// a file differs from its checksum: the log says so at start
		damaged bool
		// generation 2's plan.json says so: it was planned from no tables
		unreadable bool
	}{
		{"nuesm.lft truncated", truncateLFTs, "published tables unreadable", true, true},
		{"fabric.topo missing", func(t *testing.T, dir string) { remove(t, filepath.Join(dir, lft.FabricFile)) }, "published dump unreadable", true, false},
		{"fabric.topo unparsable", func(t *testing.T, dir string) { rewrite(t, filepath.Join(dir, lft.FabricFile), "not a dump\n") }, "published dump unreadable", true, false},
		{"tables with a loop", loopTables, "published tables do not verify", false, false},
	} {
		for _, other := range []bool{false, true} {
			name := tc.what
			if other {
				name += ", dump in other text"
			}
			t.Run(name, func(t *testing.T) {
				_, fab, out, cfg := publishedTorus(t, []int{4, 4}, Config{Engines: "nue", MaxVLs: 8})
				tc.damage(t, filepath.Join(out, genName(1)))
				if other {
					writeText(t, fab, reorderedDump(t, fab))
				}
				var log logBuffer
				opts := []Option{WithLogger(log.logger())}
				if other { // plan.json by the planner; else its note without one
					opts = append(opts, WithPlanner(NewPlanner(0)))
				}
				s, st, stop := restarted(t, cfg, opts...)
				stop()
				if st.LastResult != resultPublished || st.Published == nil || st.Published.Generation != 2 || st.Published.Engine != "nue" {
					t.Fatalf("%s %q, published %+v; expected generation 2 by nue", st.LastResult, st.LastError, st.Published)
				}
				if n := phaseCount(t, s, "route"); n != 1 {
					t.Errorf("%d routing runs; expected one full routing", n)
				}
				if other && !strings.Contains(log.String(), tc.log) {
					t.Errorf("the log does not say %q:\n%s", tc.log, log.String())
				}
				if strings.Contains(log.String(), "published generation damaged") != tc.damaged {
					t.Errorf("damaged files: %v, yet the log says otherwise:\n%s", tc.damaged, log.String())
				}
				checkPublished(t, out)
				checkPlanNote(t, out, tc.unreadable)
			})
		}
	}
}

// The published dump is the reference for keeping tables only after a
// restart under the routing configuration they were published under
// (status.json routing_config). Under another seed the dump of the
// published fabric in other text is routed in full and the log says
// why; so is one from a generation that does not say (published by an
// older nuesm), as before the published dump served as a reference.
func TestRestartOtherRoutingConfig(t *testing.T) {
	for _, tc := range []struct {
		what string
		seed uint64
		edit func(*PublishedStatus)
		log  string
	}{
		{"another seed", 7, func(*PublishedStatus) {}, "another routing configuration"},
		{"configuration unknown", 0, func(st *PublishedStatus) { st.RoutingConfig = "" }, ""},
	} {
		t.Run(tc.what, func(t *testing.T) {
			_, fab, out, cfg := publishedTorus(t, []int{4, 4}, Config{Engines: "nue", MaxVLs: 8})
			editStatus(t, filepath.Join(out, genName(1)), tc.edit)
			writeText(t, fab, reorderedDump(t, fab))
			cfg.Seed = tc.seed
			var log logBuffer
			s, st, stop := restarted(t, cfg, WithLogger(log.logger()))
			stop()
			if st.LastResult == resultFailed {
				t.Fatalf("%s", st.LastError)
			}
			if n := phaseCount(t, s, "route"); n != 1 {
				t.Errorf("%d routing or repair runs, expected one full routing", n)
			}
			if !strings.Contains(log.String(), tc.log) {
				t.Errorf("the log does not say %q:\n%s", tc.log, log.String())
			}
		})
	}
}

// A restart hands the published generation to the deployer when it is
// intact. A damaged one (a file changed after it was published) is not
// rolled out: the deployer gets the generation the first reroute
// publishes afresh.
func TestRestartHandsDeployerIntactGeneration(t *testing.T) {
	_, _, out, cfg := publishedTorus(t, []int{4, 4}, Config{Engines: "nue", MaxVLs: 8})
	dep := &handoffDeployer{}
	_, _, stop := restarted(t, cfg, WithDeployer(dep))
	stop()
	if hs, pub := dep.seen(); len(hs) != 0 || !slices.Equal(pub, []int{1}) {
		t.Fatalf("intact: generations %v handed over from disk, %d in memory; expected generation 1 from disk", pub, len(hs))
	}

	truncateLFTs(t, filepath.Join(out, genName(1)))
	dep = &handoffDeployer{}
	_, st, stop := restarted(t, cfg, WithDeployer(dep))
	stop()
	if st.Published == nil || st.Published.Generation != 2 {
		t.Fatalf("damaged: %s %q, published %+v; expected generation 2", st.LastResult, st.LastError, st.Published)
	}
	deadline := testDeadline(t)
	for {
		hs, pub := dep.seen()
		if len(pub) != 0 {
			t.Fatalf("damaged: generations %v handed over from disk", pub)
		}
		if len(hs) > 0 {
			if len(hs) != 1 || hs[0].h.Gen != 2 || hs[0].err != nil {
				t.Fatalf("damaged: %d handed over in memory, the first generation %d (%v); expected generation 2", len(hs), hs[0].h.Gen, hs[0].err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("damaged: generation 2 was not handed over")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// truncateLFTs cuts the generation's nuesm.lft in half.
func truncateLFTs(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, lft.CompactLFTsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, p, string(b[:len(b)/2]))
}

// loopTables rewrites the generation's nuesm.lft with a loop between two
// switches towards one terminal, with its checksum in status.json: a set
// intact as published whose tables do not verify.
func loopTables(t *testing.T, dir string) {
	t.Helper()
	g, r := readGen(t, filepath.Dir(dir), 1)
	c := int32(0) // a channel x→y
	x, y := g.Tail[c], g.Head[c]
	lid := -1
	for i := range g.Terms {
		if tm := g.Terms[i]; tm.Switch != x && tm.Switch != y {
			lid = int(tm.LID)
			break
		}
	}
	r.SetPort(x, lid, g.OutPort[c])
	r.SetPort(y, lid, g.InPort[c])
	p := filepath.Join(dir, lft.CompactLFTsFile)
	if err := lft.WriteCompactLFTsFile(p, g, r); err != nil {
		t.Fatal(err)
	}
	sum, err := fileSHA256(p)
	if err != nil {
		t.Fatal(err)
	}
	editStatus(t, dir, func(st *PublishedStatus) { st.SHA256[lft.CompactLFTsFile] = sum })
}

// editStatus rewrites the generation's status.json with edit applied.
func editStatus(t *testing.T, dir string, edit func(*PublishedStatus)) {
	t.Helper()
	p := filepath.Join(dir, statusFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var st PublishedStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	edit(&st)
	if b, err = json.MarshalIndent(&st, "", "  "); err != nil {
		t.Fatal(err)
	}
	rewrite(t, p, string(b))
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func rewrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkPlanNote checks generation 2's plan.json: planned from no tables
// when generation 1's were unreadable, and saying so, not that nothing
// was published before.
func checkPlanNote(t *testing.T, out string, unreadable bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, genName(2), planFile))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Note string }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	said := strings.Contains(p.Note, "published tables (generation 1) unreadable for this fabric: lft: ")
	if said != unreadable || strings.Contains(p.Note, "nothing published before") {
		t.Errorf("plan.json note %q; generation 1's tables unreadable: %v", p.Note, unreadable)
	}
}
