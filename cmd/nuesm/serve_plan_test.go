package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/topo"
)

// planFile is the part of plan.json the tests read.
type planFile struct {
	Note    string
	Metrics struct {
		Steps      int `json:"steps"`
		WriteSteps int `json:"write_steps"`
		Writes     int `json:"lft_writes"`
		LostPairs  int `json:"lost_pairs"`
	}
	Steps []struct {
		Kind string
		LFT  []struct{ Entries [][3]int }
	}
	Verify *struct {
		Safe bool
	}
}

func readPlan(t *testing.T, path string) planFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p planFile
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return p
}

func writeDump(t *testing.T, path string, f *fabric.Fabric) {
	t.Helper()
	if err := ibnetdiscover.WriteFile(path+".tmp", f); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// The daemon with the planner publishes plan.json with every reroute: the
// initial plan first, then, after a cable fails and the tables change, a
// verified plan whose writes are exactly the entries that changed.
func TestServePublishesPlan(t *testing.T) {
	dir := t.TempDir()
	fab, out := filepath.Join(dir, "fabric.topo"), filepath.Join(dir, "out")
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeDump(t, fab, tp.Fabric)
	s := planDaemon(t, fab, out)
	cur := filepath.Join(out, "current")

	checkInitialPlan(t, waitGeneration(t, s, 1), cur)
	prev := filepath.Join(dir, "prev")
	if err := os.MkdirAll(prev, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"nuesm.lft", "nuesm.sl", "nuesm.sl2vl"} {
		copyFile(t, filepath.Join(cur, f), filepath.Join(prev, f))
	}

	// A cable fails: the dump is replaced, the daemon reroutes.
	failed, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: 2, Seed: 5, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	writeDump(t, fab, failed)
	checkReroutePlan(t, waitGeneration(t, s, 2), failed, prev, cur)

	// And the CLI proves the same switch-over from the published files.
	outText, _, err := run(t, "plan", prev, cur, "--verify")
	if err != nil || !strings.Contains(outText, "SAFE") {
		t.Fatalf("nuesm plan on the published generations: %v\n%s", err, outText)
	}
}

// planDaemon runs the daemon with the planner (as `nuesm serve` wires
// it) on dump fab, publishing to out, until the test ends.
func planDaemon(t *testing.T, fab, out string) *sm.Server {
	t.Helper()
	cfg := sm.Config{Fabric: fab, Output: out, Engines: "nue", MaxVLs: 4, Listen: "127.0.0.1:0"}
	cfg.FabricPoll.Duration = sm.MinFabricPoll
	s, _ := e2eServe(t, cfg)
	return s
}

// waitGeneration waits (at most 60 s) until s has published generation
// gen or a later one.
func waitGeneration(t *testing.T, s *sm.Server, gen int) sm.Status {
	t.Helper()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	deadline = deadline.Add(-5 * time.Second)
	for time.Now().Before(deadline) {
		if st := s.Status(); st.Published != nil && st.Published.Generation >= gen {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timeout waiting for generation %d; status %+v", gen, s.Status())
	return sm.Status{}
}

// checkInitialPlan checks the first generation's plan.json (in cur) and
// status summary: verified, counting nuesm.lft's writes without listing
// them.
func checkInitialPlan(t *testing.T, st sm.Status, cur string) {
	t.Helper()
	p1 := readPlan(t, filepath.Join(cur, "plan.json"))
	if !strings.Contains(p1.Note, "initial") || p1.Verify == nil || !p1.Verify.Safe || p1.Metrics.Writes == 0 {
		t.Fatalf("initial plan: %+v", p1)
	}
	if st.Published.Plan == nil || !st.Published.Plan.Verified {
		t.Fatalf("status plan summary: %+v", st.Published.Plan)
	}
	// The initial plan writes every entry of nuesm.lft: counted, not
	// listed again.
	for _, s := range p1.Steps {
		if len(s.LFT) != 0 {
			t.Fatalf("initial plan lists %d switches' LFT writes, want none (they are nuesm.lft's)", len(s.LFT))
		}
	}
	if !strings.Contains(p1.Note, "nuesm.lft") {
		t.Errorf("initial plan note %q does not say where its writes are", p1.Note)
	}
}

// checkReroutePlan checks the plan of the reroute after the cable
// failure (fabric failed): verified, its writes listed and summed in
// status.json, exactly the entries that differ between the tables in
// prev (before) and cur.
func checkReroutePlan(t *testing.T, st sm.Status, failed *fabric.Fabric, prev, cur string) {
	t.Helper()
	p2 := readPlan(t, filepath.Join(cur, "plan.json"))
	writes := 0
	for _, s := range p2.Steps {
		for _, sw := range s.LFT {
			writes += len(sw.Entries)
		}
	}
	if p2.Verify == nil || !p2.Verify.Safe || p2.Metrics.WriteSteps == 0 || writes != p2.Metrics.Writes || strings.Contains(p2.Note, "initial") {
		t.Fatalf("reroute plan: %+v (%d writes listed)", p2, writes)
	}
	sum := st.Published.Plan
	if sum == nil || !sum.Verified || sum.Steps != p2.Metrics.Steps || sum.Writes != writes {
		t.Fatalf("status plan summary %+v, plan.json %+v", sum, p2.Metrics)
	}
	// Its writes are exactly the changed entries of the old tables (read
	// on the fabric as it is now) against the new ones.
	g, err := fabric.Compile(failed)
	if err != nil {
		t.Fatal(err)
	}
	old, err := readTableSet(prev, g, true)
	if err != nil {
		t.Fatal(err)
	}
	new, err := readTableSet(cur, g, false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := lft.Diff(g, old, new)
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Summary().Entries; n != writes || n == 0 {
		t.Fatalf("plan writes %d entries, the tables differ in %d", writes, n)
	}
}
