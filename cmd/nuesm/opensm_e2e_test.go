package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/sm/deploy"
	"github.com/nuesm/nuesm/topo"
)

// checkDeployed reads the switches back and compares them with published
// generation gen: every LFT entry, a sample of the path SLs OpenSM's SA
// serves (saquery), and the SL2VL tables of sampled ports (smpquery).
// pairs bounds the SA queries. The generation keeps its LFTs as
// nuesm.lft only (opensm_dump "auto" with the deployer); OpenSM's text
// dump is the stable lfts_file, holding the generation's tables.
func (b *osmBed) checkDeployed(gen, pairs int) {
	b.t.Helper()
	g, want := b.published(gen)
	dir := filepath.Join(b.out, fmt.Sprintf("gen-%06d", gen))
	if _, err := os.Stat(filepath.Join(dir, lft.CompactLFTsFile)); err != nil {
		b.t.Errorf("generation %d: %v", gen, err)
	}
	if _, err := os.Stat(filepath.Join(dir, lft.LFTsFile)); err == nil {
		b.t.Errorf("generation %d holds %s: with the deployer OpenSM reads the stable lfts_file only", gen, lft.LFTsFile)
	}
	stable := filepath.Join(b.state, lft.LFTsFile)
	if f, err := os.ReadFile(stable); err != nil || lft.IsCompactLFTs(f) {
		b.t.Errorf("the stable lfts_file %s is no OpenSM text dump (%v)", stable, err)
	} else if staged, err := lft.ReadOpenSMLFTs(bytes.NewReader(f), stable, g); err != nil {
		b.t.Errorf("the stable lfts_file: %v", err)
	} else if d := lftDiff(g, staged, want); d != "" {
		b.t.Errorf("generation %d: the stable lfts_file differs from the published tables: %s", gen, d)
	}
	got := b.readKnown(g, want)
	if got == nil {
		return
	}
	if d := lftDiff(g, got, want); d != "" {
		b.t.Errorf("generation %d: switches differ from the published tables: %s", gen, d)
	}
	b.checkSLs(g, want, pairs)
	b.checkSL2VL(g, want)
}

var saSL = regexp.MustCompile(`(?m)^\s*sl\.+0x([0-9a-fA-F]+)\s*$`)

// checkSLs asks the SA for the SL of sampled paths (every source switch
// is represented; destinations spread over all LIDs) and compares with
// the routing's SL of that path.
func (b *osmBed) checkSLs(g *fabric.Graph, r *lft.Routing, pairs int) {
	b.t.Helper()
	var srcs []int
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if g.TermOff[s] < g.TermOff[s+1] {
			srcs = append(srcs, int(g.Terms[g.TermAt[g.TermOff[s]]].LID))
		}
	}
	per := max(1, pairs/max(1, len(srcs)))
	nonzero, asked := 0, 0
	for i, slid := range srcs {
		sw, term := g.Owner(slid)
		if term >= 0 {
			sw = g.Terms[term].Switch
		}
		for k := 0; k < per; k++ {
			dlid := 1 + (i*7+k*(g.MaxLID()/per+1))%g.MaxLID()
			if dlid == slid {
				continue
			}
			if _, t := g.Owner(dlid); t < 0 {
				if s, _ := g.Owner(dlid); s < 0 {
					continue
				}
			}
			out, err := b.saquery(slid, dlid)
			if err != nil {
				b.t.Errorf("saquery %d:%d: %v", slid, dlid, err)
				continue
			}
			m := saSL.FindSubmatch(out)
			if m == nil {
				b.t.Errorf("saquery %d:%d: no SL in %q", slid, dlid, out)
				continue
			}
			v, _ := strconv.ParseUint(string(m[1]), 16, 8)
			want := r.SL.Of(sw, slid, dlid)
			if uint8(v) != want {
				b.t.Errorf("path %d -> %d: OpenSM's SA gives SL %d, nuesm.sl has %d", slid, dlid, v, want)
			}
			asked++
			if want != 0 {
				nonzero++
			}
		}
	}
	if r.NumVLs > 1 && nonzero == 0 {
		b.t.Errorf("%d sampled paths all have SL 0 in a %d-VL routing: the sample proves nothing", asked, r.NumVLs)
	}
	b.t.Logf("SLs: %d paths asked, %d with SL > 0, all as nuesm.sl says", asked, nonzero)
}

// saquery asks for one path record; an SM that has just come up may not
// answer yet, so a failed query is repeated within a deadline.
func (b *osmBed) saquery(slid, dlid int) ([]byte, error) {
	deadline := time.Now().Add(budget(b.t, 0.05))
	for {
		out, err := b.sim.Run(budget(b.t, 0.02), "saquery", "-p", "--src-to-dst", fmt.Sprintf("%d:%d", slid, dlid))
		if err == nil || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var sl2vlRow = regexp.MustCompile(`(?m)^ports: in\s+(\d+), out\s+(\d+):((?:\s*\|\s*\d+)+)\s*\|`)

// checkSL2VL reads the SL2VL tables of a few switch ports and of one CA
// and compares the SLs the routing uses with its map.
func (b *osmBed) checkSL2VL(g *fabric.Graph, r *lft.Routing) {
	b.t.Helper()
	var used [lft.NumSLs]bool
	for _, sl := range r.SL.ByDest {
		used[sl] = true
	}
	for _, sl := range r.SL.BySrc {
		used[sl] = true
	}
	type q struct{ lid, port int }
	var qs []q
	for s := int32(0); int(s) < g.NumSwitches(); s += int32(max(1, g.NumSwitches()/3)) {
		qs = append(qs, q{int(g.F.Nodes[g.Switches[s]].Ports[0].LID), int(g.OutPort[g.Off[s]])})
	}
	qs = append(qs, q{int(g.Terms[0].LID), -1})
	for _, x := range qs {
		args := []string{"sl2vl", strconv.Itoa(x.lid)}
		if x.port >= 0 {
			args = append(args, strconv.Itoa(x.port))
		}
		out, err := b.sim.Run(budget(b.t, 0.02), "smpquery", args...)
		if err != nil {
			b.t.Error(err)
			continue
		}
		rows := sl2vlRow.FindAllSubmatch(out, -1)
		if len(rows) == 0 {
			b.t.Errorf("smpquery %v: no table in %q", args, out)
		}
		for _, m := range rows {
			f := strings.FieldsFunc(string(m[3]), func(c rune) bool { return c == '|' || c == ' ' })
			for sl, v := range f {
				n, _ := strconv.Atoi(v)
				if sl < lft.NumSLs && used[sl] && uint8(n) != r.SL2VL.Default[sl] {
					b.t.Errorf("smpquery %v, in %s out %s: SL %d -> VL %d, the routing maps it to VL %d", args, m[1], m[2], sl, n, r.SL2VL.Default[sl])
				}
			}
		}
	}
}

// interSwitchPort returns the ibsim name of a switch and one of its ports
// cabled to another switch.
func interSwitchPort(t *testing.T, tp *topo.Topology) (string, int) {
	f := tp.Fabric
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if n.Kind != fabric.Switch {
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			if n.Ports[p].Cabled() && f.Nodes[n.Ports[p].Peer.Node].Kind == fabric.Switch {
				return fmt.Sprintf("S-%016x", n.GUID), p
			}
		}
	}
	t.Fatal("no switch-to-switch cable")
	return "", 0
}

// TestOpenSMRolloutFatTree: serve with Nue (4 VLs) and the deployer next
// to the real OpenSM on a simulated 3-level fat tree k=4: the initial
// tables roll out; a switch-to-switch cable fails (ibsim Unlink) and is
// repaired (ReLink); discovery notices each change through OpenSM's heavy
// sweep, the daemon reroutes (Nue in full: no minimal repair exists for
// this cable, and none is needed after the ReLink), and the deployer
// rolls every new generation out step by step. After each write step the
// test reads every switch back (dump_fts) and requires the step's tables
// and a state without loops or CDG cycles with every destination live;
// after each change the published tables, SA path SLs and SL2VL tables.
func TestOpenSMRolloutFatTree(t *testing.T) { rolloutFatTree(t, deploy.ApplySIGHUP) }

// TestOpenSMRolloutFatTreeSMP is TestOpenSMRolloutFatTree with the
// deployer writing the LFT blocks itself (apply = "smp").
func TestOpenSMRolloutFatTreeSMP(t *testing.T) { rolloutFatTree(t, deploy.ApplySMP) }

func rolloutFatTree(t *testing.T, apply string) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, srv, st := deployed(t, tp, "nue", 4, true, func(c *sm.Config) { c.OpenSM.Apply = apply })
	b.checkDeployed(st.Published.Generation, 96)

	name, port := interSwitchPort(t, tp)
	for i, cmd := range []string{fmt.Sprintf("Unlink %q[%d]", name, port), fmt.Sprintf("ReLink %q[%d]", name, port)} {
		gen, seen := st.Published.Generation, changes(srv)
		out, err := b.sim.Console(budget(t, 0.05), cmd)
		if err != nil || strings.Contains(out, "#") {
			t.Fatalf("ibsim %s: %v %s", cmd, err, out)
		}
		st = b.waitSettled(srv, seen, cmd)
		if i == 0 && st.Published.Generation == gen {
			t.Fatalf("%s: no new generation published", cmd)
		}
		g, _ := b.published(st.Published.Generation)
		t.Logf("%s: generation %d deployed (%d switch-to-switch channels)", cmd, st.Published.Generation, g.NumChannels())
		b.checkDeployed(st.Published.Generation, 48)
	}
	if b.steps() < 2 {
		t.Errorf("only %d write steps were read back; expected the initial and the failure rollouts", b.steps())
	}
	t.Logf("%d write steps read back and verified:\n%s", b.steps(), strings.Join(b.stepLogs, "\n"))
}

// staticJobs is a job source with fixed jobs (sar-nue routes for them).
type staticJobs struct{ jobs []routing.Job }

func (s staticJobs) Fetch(context.Context) (sm.JobSet, error) { return s, nil }

func (s staticJobs) Map(*fabric.Graph) ([]routing.Job, []sm.JobStatus, error) {
	var st []sm.JobStatus
	for _, j := range s.jobs {
		st = append(st, sm.JobStatus{ID: j.ID, Hosts: len(j.Terms), Terminals: len(j.Terms)})
	}
	return s.jobs, st, nil
}

// runDaemon runs srv until the returned stop is called (or the test ends).
func runDaemon(t *testing.T, srv *sm.Server) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// rolloutEngines runs the daemon with each engine in turn on the same
// OpenSM (a restart of nuesm each time): every generation rolls out from
// what the previous engine left on the switches (with fresh, from
// switches emptied first, into an output directory of its own: the
// initial plan), and the SA's path SLs and the SL2VL tables must be the
// new routing's. gen is the generation published before (0: none).
func rolloutEngines(t *testing.T, b *osmBed, vls, gen int, fresh bool, engines ...string) {
	b.discover()
	for i, e := range engines {
		if fresh && (i > 0 || gen > 0) {
			b.empty()
			// A new output: its generations count from 1, so the
			// rollout state of the last one goes too.
			b.out, gen = filepath.Join(t.TempDir(), "out"), 0
			if err := os.Remove(filepath.Join(b.state, "state.json")); err != nil {
				t.Fatal(err)
			}
		}
		var extra []sm.Option
		if e == "sar-nue" {
			l, err := ibnetdiscover.LoadFile(b.fabric)
			if err != nil {
				t.Fatal(err)
			}
			g := l.Graph
			var terms []int32
			for i := 0; i < len(g.Terms); i += max(1, len(g.Terms)/8) {
				terms = append(terms, int32(i))
			}
			extra = append(extra, sm.WithJobSource(staticJobs{[]routing.Job{{ID: "4711", Terms: terms}}}))
		}
		srv := b.server(b.config(e, vls), extra...)
		stop := runDaemon(t, srv)
		st := b.waitDeployed(srv, gen, e)
		gen = st.Published.Generation
		_, r := b.published(gen)
		t.Logf("%s: generation %d deployed (%d VLs, SLs per destination: %v, plan %+v)", e, gen, r.NumVLs, r.SL.PerDest(), deployStatus(st).LastPlan)
		b.checkDeployed(gen, 48)
		stop()
	}
	if b.steps() < len(engines) {
		t.Errorf("only %d write steps were read back for %d rollouts", b.steps(), len(engines))
	}
}

// TestOpenSMRolloutTorus: a 4×4×4 torus with 8 VLs. Nue's tables roll
// out; a switch-to-switch cable fails and the repaired tables roll out
// step by step, each step read back equal and verified with every
// destination live; then DFSSSP (SLs per source switch, served by QoS
// match rules with source groups) and sar-nue (for a job), each on
// switches emptied first, with the SA's path SLs and the SL2VL tables
// checked after each.
func TestOpenSMRolloutTorus(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4, 4}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	b := newOSMBed(t, tp)
	b.discover()
	srv := b.server(b.config("nue", 8))
	stop := runDaemon(t, srv)
	st := b.waitDeployed(srv, 0, "initial rollout")
	before := b.steps()
	name, port := interSwitchPort(t, tp)
	if out, err := b.sim.Console(budget(t, 0.05), fmt.Sprintf("Unlink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("Unlink: %v %s", err, out)
	}
	st = b.waitDeployed(srv, st.Published.Generation, "after the cable failure")
	d := deployStatus(st)
	t.Logf("cable failure: generation %d (%s) deployed: %+v", st.Published.Generation, st.Published.Engine, d.LastPlan)
	if b.steps()-before < 1 {
		t.Errorf("the failure's rollout wrote no step the test read back")
	}
	b.checkDeployed(st.Published.Generation, 32)
	stop()
	rolloutEngines(t, b, 8, st.Published.Generation, true, "dfsssp", "sar-nue")
}

// TestOpenSMRolloutLASH: LASH on a 6×6 torus needs 3 VLs with SLs per
// source switch; OpenSM's SA must serve them. Nue's tables are rolled
// out first, and LASH's replace them live: destinations no live round
// moves are blacked out, and every state read back is checked with every
// destination live.
func TestOpenSMRolloutLASH(t *testing.T) {
	tp, err := topo.Torus([]int{6, 6}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	rolloutEngines(t, newOSMBed(t, tp), 8, 0, false, "nue", "lash")
}
