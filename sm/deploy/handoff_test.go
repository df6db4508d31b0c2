package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sm"
)

// writeSet writes a table set's files into dir as a published
// generation holds them.
func writeSet(t *testing.T, dir string, set *lft.TableSet) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range set.Files() {
		out, err := os.Create(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Write(out); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// heal is a cable failure on the fat tree k=4 n=3 as the daemon handles
// it: the Nue tables of the whole fabric, the fabric without one
// switch-to-switch cable, and their minimal repair.
type heal struct {
	old          *lft.Routing // on the whole fabric
	cutDump      []byte
	cutG         *fabric.Graph // loaded from cutDump, as the daemon does
	repaired     *lft.Routing
	oldDir, gen2 string
}

func newHeal(t *testing.T) heal {
	t.Helper()
	f := fatTree43(t)
	whole, err := ibnetdiscover.Load(dumpOf(t, f), "whole.topo")
	if err != nil {
		t.Fatal(err)
	}
	engines, err := routing.ParseChain("nue")
	if err != nil {
		t.Fatal(err)
	}
	opt := routing.Options{MaxVLs: 4, KeepState: true}
	res, err := routing.RouteChain(context.Background(), whole.Graph, engines, opt)
	if err != nil {
		t.Fatal(err)
	}
	cut := f.Clone()
	sw := fabric.NodeID(0)
	for cut.Nodes[sw].Kind != fabric.Switch {
		sw++
	}
	for p := 1; p < len(cut.Nodes[sw].Ports); p++ {
		if pe := cut.Nodes[sw].Ports[p].Peer; pe.Node >= 0 && cut.Nodes[pe.Node].Kind == fabric.Switch {
			cut.Nodes[sw].Ports[p].Peer = fabric.NoPeer
			cut.Port(pe).Peer = fabric.NoPeer
			break
		}
	}
	h := heal{old: res.Routing, cutDump: dumpOf(t, cut)}
	l, err := ibnetdiscover.Load(h.cutDump, "cut.topo")
	if err != nil {
		t.Fatal(err)
	}
	h.cutG = l.Graph
	h.repaired, _, err = routing.RepairWith(context.Background(), h.cutG, h.old, routing.RepairOptions{State: res.State})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h.oldDir, h.gen2 = filepath.Join(dir, "gen-000001"), filepath.Join(dir, "gen-000002")
	writeSet(t, h.oldDir, &lft.TableSet{Graph: whole.Graph, Routing: h.old, Fabric: whole.Text})
	writeSet(t, h.gen2, &lft.TableSet{Graph: h.cutG, Routing: h.repaired, Fabric: h.cutDump})
	return h
}

// planJSON is a rollout's plan as comparable text: every stage's steps
// and the tables it starts from and reaches.
func planJSON(t *testing.T, g *fabric.Graph, stages []plan.Stage) string {
	t.Helper()
	type stage struct {
		Plan     *plan.PlanJSON
		From, To [32]byte
	}
	var out []stage
	for _, st := range stages {
		out = append(out, stage{Plan: st.Plan.JSON(g), From: tablesSum(t, g, st.From), To: tablesSum(t, g, st.To)})
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tablesSum identifies a routing's LFTs and SLs by their OpenSM form.
func tablesSum(t *testing.T, g *fabric.Graph, r *lft.Routing) [32]byte {
	t.Helper()
	var b bytes.Buffer
	if err := lft.WriteOpenSMLFTs(&b, g, r); err != nil {
		t.Fatal(err)
	}
	if err := lft.WriteSL(&b, g, r); err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b.Bytes())
}

// TestHandoffSameRolloutAsDisk: a generation handed over in memory gives
// the deployer the fabric and tables it reads back from the published
// files, so the rollout plans the same stages and steps through the same
// states, each proven; the daemon's tables are not modified.
func TestHandoffSameRolloutAsDisk(t *testing.T) {
	h := newHeal(t)
	published := make(chan error, 1)
	published <- nil
	before := h.repaired.Clone()
	mem := genRef{gen: 2, dir: h.gen2, mem: &memGen{g: h.cutG, r: h.repaired, dump: h.cutDump, published: published}}
	disk := genRef{gen: 2, dir: h.gen2}

	dm, dd := &Deployer{}, &Deployer{}
	gm, rm, err := dm.generation(mem)
	if err != nil {
		t.Fatal(err)
	}
	gd, rd, err := dd.generation(disk)
	if err != nil {
		t.Fatal(err)
	}
	if dm.local != dd.local {
		t.Errorf("diags node: %#x in memory, %#x from disk", dm.local, dd.local)
	}
	if !sameTables(gd, rm, rd) {
		t.Fatal("the tables handed over differ from the published ones")
	}
	// What the switches hold after the failure: the old tables on the
	// fabric without the cable, read as the deployer reads them.
	ctx := context.Background()
	var plans [2]string
	for i, gr := range []struct {
		g *fabric.Graph
		r *lft.Routing
	}{{gm, rm}, {gd, rd}} {
		held, err := lft.ReadTableSet(h.oldDir, gr.g, lft.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opt := plan.Options{MaxVLs: 4, AllowReorder: true}
		stages, err := plan.BuildLive(ctx, gr.g, held, gr.r, opt)
		if err != nil {
			t.Fatal(err)
		}
		for k, st := range stages {
			if _, err := plan.Verify(ctx, gr.g, st.From, st.To, st.Plan, opt); err != nil {
				t.Fatalf("stage %d does not verify: %v", k+1, err)
			}
		}
		if len(stages) == 0 || stages[0].Plan.Metrics().Writes == 0 {
			t.Fatal("the repair's rollout writes nothing")
		}
		plans[i] = planJSON(t, gr.g, stages)
	}
	if plans[0] != plans[1] {
		t.Errorf("the rollout planned from memory differs from the one planned from disk:\n%s\n%s", plans[0], plans[1])
	}
	rm.SetPort(0, 1, rm.Port(0, 1)^1) // the deployer's copy, not the daemon's
	if !lft.Equal(before, h.repaired) {
		t.Error("the deployer's copy of the tables shares memory with the daemon's")
	}
}

// TestHandoffWaitsForPublication: a generation handed over in memory
// records nothing until the daemon confirms its publication, and one
// whose publication failed is dropped with errNotPublished; one read
// from disk needs no confirmation.
func TestHandoffWaitsForPublication(t *testing.T) {
	d := &Deployer{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ch := make(chan error, 1)
	ref := genRef{gen: 3, mem: &memGen{published: ch}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.awaitPublished(ctx, ref) }()
	select {
	case err := <-done:
		t.Fatalf("returned before the publication's outcome: %v", err)
	default:
	}
	ch <- errors.New("disk full")
	if err := <-done; !errors.Is(err, errNotPublished) {
		t.Fatalf("a failed publication: %v, want errNotPublished", err)
	}
	// The outcome is kept: a retry does not wait again.
	if err := d.awaitPublished(ctx, ref); !errors.Is(err, errNotPublished) {
		t.Fatalf("again: %v", err)
	}
	ok := make(chan error, 1)
	ok <- nil
	if err := d.awaitPublished(ctx, genRef{mem: &memGen{published: ok}}); err != nil {
		t.Fatal(err)
	}
	if err := d.awaitPublished(ctx, genRef{gen: 1, dir: "x"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := d.awaitPublished(ctx, genRef{mem: &memGen{published: make(chan error)}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestHandoffRefusesMissingLIDs: the in-memory path refuses a fabric
// discovered before OpenSM assigned LIDs, as loading it from disk does.
func TestHandoffRefusesMissingLIDs(t *testing.T) {
	h := newHeal(t)
	g := h.cutG
	f := g.F.Clone()
	for _, r := range f.Endpoints() {
		f.Port(r).LID = 0
		break
	}
	cg, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	d := &Deployer{}
	_, _, err = d.generation(genRef{dir: h.gen2, mem: &memGen{g: cg, r: h.repaired, dump: h.cutDump}})
	if !errors.Is(err, ErrUndeliverable) {
		t.Fatalf("missing LID: %v, want ErrUndeliverable", err)
	}
	// The daemon's graph has every LID (it numbers the missing ones); the
	// count it hands over refuses the generation all the same.
	_, _, err = d.generation(genRef{dir: h.gen2, mem: &memGen{g: g, r: h.repaired, dump: h.cutDump, assigned: 1}})
	if !errors.Is(err, ErrUndeliverable) || !strings.Contains(err.Error(), "1 endpoints have no LID") {
		t.Fatalf("LIDs the daemon assigned: %v, want ErrUndeliverable", err)
	}
	if _, _, err = d.generation(genRef{dir: h.gen2, mem: &memGen{g: g, r: h.repaired, dump: h.cutDump}}); err != nil {
		t.Fatalf("every LID from OpenSM: %v", err)
	}
}

// TestHandoffNewestWins: Handoff queues the generation in memory for
// Run, replacing an older one waiting (from disk or memory).
func TestHandoffNewestWins(t *testing.T) {
	d := &Deployer{gens: make(chan genRef, 1)}
	d.Publish(1, "gen-000001")
	ch := make(chan error, 1)
	g := &fabric.Graph{}
	d.Handoff(sm.Handoff{Gen: 2, Dir: "gen-000002", Graph: g, Published: ch})
	ref := <-d.gens
	if ref.gen != 2 || ref.dir != "gen-000002" || ref.mem == nil || ref.mem.g != g || ref.mem.published != (<-chan error)(ch) {
		t.Fatalf("queued %+v", ref)
	}
	select {
	case r := <-d.gens:
		t.Fatalf("an older generation still waits: %+v", r)
	default:
	}
}

// TestNewerWaitsForPublication: a rollout is left at a step boundary for
// a generation handed over in memory only once its publication is
// confirmed; one not confirmed yet goes back to Run when the rollout
// ends, one that failed is dropped.
func TestNewerWaitsForPublication(t *testing.T) {
	d := &Deployer{gens: make(chan genRef, 1), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ch := make(chan error, 1)
	d.Handoff(sm.Handoff{Gen: 4, Published: ch})
	if d.newer() {
		t.Fatal("newer before the publication was confirmed")
	}
	if d.pending == nil || d.pending.gen != 4 {
		t.Fatal("the unconfirmed generation was not kept")
	}
	ch <- nil
	if !d.newer() {
		t.Fatal("not newer once published")
	}
	d.requeuePending()
	if g := <-d.gens; g.gen != 4 {
		t.Fatalf("requeued generation %d", g.gen)
	}
	failed := make(chan error, 1)
	failed <- errors.New("disk full")
	d.Handoff(sm.Handoff{Gen: 5, Published: failed})
	if d.newer() || d.pending != nil {
		t.Fatal("a generation whose publication failed interrupts the rollout or stays pending")
	}
	// A newer one waiting is not replaced by the requeued one.
	d.Handoff(sm.Handoff{Gen: 6, Published: make(chan error, 1)})
	_ = d.newer()
	d.Publish(7, "gen-000007")
	d.requeuePending()
	if g := <-d.gens; g.gen != 7 {
		t.Fatalf("generation %d waits, want the newest (7)", g.gen)
	}
}
