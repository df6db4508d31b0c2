package sm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// handoffDeployer records what the daemon hands over: generations in
// memory (with what was on disk when their publication was confirmed)
// and generations from disk.
type handoffDeployer struct {
	mu        sync.Mutex
	handoffs  []handoffSeen
	published []int
}

type handoffSeen struct {
	h Handoff
	// outcome of the publication; onDisk says status.json was in h.Dir
	// and "current" pointed there when it arrived.
	err    error
	onDisk bool
}

func (d *handoffDeployer) Run(ctx context.Context, trigger func(string)) error {
	<-ctx.Done()
	return nil
}
func (d *handoffDeployer) Publish(gen int, dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.published = append(d.published, gen)
}
func (d *handoffDeployer) Status() any   { return nil }
func (d *handoffDeployer) Deployed() int { return 0 }

func (d *handoffDeployer) Handoff(h Handoff) {
	go func() {
		err := <-h.Published
		_, serr := os.Stat(filepath.Join(h.Dir, "status.json"))
		cur, _ := os.Readlink(filepath.Join(filepath.Dir(h.Dir), currentLink))
		d.mu.Lock()
		defer d.mu.Unlock()
		d.handoffs = append(d.handoffs, handoffSeen{h: h, err: err, onDisk: serr == nil && cur == filepath.Base(h.Dir)})
	}()
}

func (d *handoffDeployer) seen() ([]handoffSeen, []int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]handoffSeen(nil), d.handoffs...), append([]int(nil), d.published...)
}

// failingPlanner fails while fail is set (a publication that does not
// happen), and plans as NewPlanner otherwise.
type failingPlanner struct {
	fail atomic.Bool
	pl   Planner
}

func (p *failingPlanner) Plan(ctx context.Context, g *fabric.Graph, old, new *lft.Routing) (*PlanResult, error) {
	if p.fail.Load() {
		return nil, errors.New("planner down")
	}
	return p.pl.Plan(ctx, g, old, new)
}

// TestHandoffBeforePublication: a deployer that takes generations in
// memory gets each one with its tables before it is published and then
// exactly one outcome: nil only once the generation's files are on disk
// and current, the error when the publication failed; the daemon does
// not hand the same generation over from disk as well.
func TestHandoffBeforePublication(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.FatTree(4, 2, 0)
	writeFabric(t, fab, tp, err)
	out := filepath.Join(dir, "out")
	dep := &handoffDeployer{}
	pl := &failingPlanner{pl: NewPlanner(0)}
	s := start(t, Config{Fabric: fab, Output: out, Engines: "nue", MaxVLs: 4}, WithDeployer(dep), WithPlanner(pl))
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 })
	deadline := testDeadline(t)
	var hs []handoffSeen
	for time.Now().Before(deadline) {
		if hs, _ = dep.seen(); len(hs) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(hs) != 1 {
		t.Fatalf("%d handoffs for the first generation", len(hs))
	}
	h := hs[0]
	if h.err != nil || !h.onDisk || h.h.Gen != 1 || h.h.Dir != s.pub.genDir(1) {
		t.Fatalf("first handoff: gen %d dir %s outcome %v, on disk %v", h.h.Gen, h.h.Dir, h.err, h.onDisk)
	}
	if h.h.Graph == nil || h.h.Routing == nil || len(h.h.Fabric) == 0 {
		t.Fatal("the handoff lacks the fabric or the tables")
	}
	_, r := readGen(t, out, 1)
	if !lft.Equal(r, h.h.Routing) {
		t.Error("the tables handed over differ from the published ones")
	}

	// A failed publication: the outcome is its error, nothing published.
	pl.fail.Store(true)
	tp2, err := topo.FatTree(4, 2, 0)
	if err == nil {
		tp2.Fabric, _, err = topo.InjectFailures(tp2.Fabric, topo.FailureSpec{LinkFraction: 0.05, Seed: 3, SkipCritical: true})
	}
	writeFabric(t, fab, tp2, err)
	waitFor(t, s, "failed reroute", func(st Status) bool { return st.Failures > 0 })
	for time.Now().Before(deadline) {
		if hs, _ = dep.seen(); len(hs) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(hs) != 2 || hs[1].err == nil || hs[1].onDisk {
		t.Fatalf("failed publication: %d handoffs, last %+v", len(hs), hs[len(hs)-1])
	}
	if _, pubs := dep.seen(); len(pubs) != 0 {
		t.Errorf("generations handed over from disk as well: %v", pubs)
	}
	if g := s.Status().Published.Generation; g != 1 {
		t.Errorf("published generation %d after a failed publication", g)
	}
}

// TestHandoffCountsAssignedLIDs: the daemon numbers endpoints a dump
// gives no LID (discovered before OpenSM assigned them); the handoff
// says how many, since its graph has none without a LID left.
func TestHandoffCountsAssignedLIDs(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	bare := tp.Fabric.Clone()
	for _, r := range bare.Endpoints() {
		bare.Port(r).LID = 0
	}
	writeFabric(t, fab, &topo.Topology{Fabric: bare}, nil)
	dep := &handoffDeployer{}
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "nue", MaxVLs: 4}, WithDeployer(dep))
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 1 })
	tp2, err := topo.FatTree(4, 2, 0)
	if err == nil {
		tp2.Fabric, _, err = topo.InjectFailures(tp2.Fabric, topo.FailureSpec{Links: 1, Seed: 3, SkipCritical: true})
	}
	writeFabric(t, fab, tp2, err)
	waitFor(t, s, "publish", func(st Status) bool { return st.Published != nil && st.Published.Generation == 2 })
	var hs []handoffSeen
	for deadline := testDeadline(t); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if hs, _ = dep.seen(); len(hs) == 2 {
			break
		}
	}
	if len(hs) != 2 {
		t.Fatalf("%d handoffs for two generations", len(hs))
	}
	if n := len(tp.Fabric.Endpoints()); hs[0].h.AssignedLIDs != n || hs[1].h.AssignedLIDs != 0 {
		t.Errorf("assigned LIDs handed over: %d and %d, want %d (a dump without LIDs) and 0", hs[0].h.AssignedLIDs, hs[1].h.AssignedLIDs, n)
	}
}
