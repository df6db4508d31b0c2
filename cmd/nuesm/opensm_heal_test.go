package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/sm/deploy"
	"github.com/nuesm/nuesm/topo"
)

// healResult is what the switches did after a cable failed, sampled by
// reading every switch back (lftReader) one sample after the other.
type healResult struct {
	Healed time.Duration // from the failure to the end of the first read of a state delivering every connected pair
	// After is when the last read that found pairs undelivered began (0
	// when the first read found every pair delivered): the switches
	// healed in (After, Healed].
	After       time.Duration
	ReadMean    time.Duration // mean duration of one read of every switch
	PairSeconds float64       // connected pairs not delivered, integrated over time
	States      int           // samples taken
	Distinct    int           // states read: samples that differ from the one before (the first counts)
	Unsafe      int           // states read with a forwarding loop or a CDG cycle
	Cycles      bool          // whether CDG cycles were checked (the SLs known)
	Worst       string        // the first unsafe state's fault
	// NotHealed: the observation window ended with Lost pairs still not
	// delivered (Healed is then the window).
	NotHealed bool
	Lost      int64
}

// healWatch is what measureHeal watches: the fabric g after the failure,
// the simulator's environment (for the reader's SMP agent), the SL tables to check a state with (nil: loops
// only), and an observation window (> 0: the sampling ends after that
// long with NotHealed, a benchmark row for a subnet manager that never
// heals; 0: the test fails at its deadline instead).
type healWatch struct {
	sim    *ibtest.Sim // its exit fails the test at once
	env    []string
	g      *fabric.Graph
	sls    func(*lft.Routing)
	window time.Duration
}

// measureHeal calls fail (which fails a part of the fabric and returns
// when) and samples the switches with an lftReader from then until a
// state delivers every pair of g (an lftReader's doc says what a sample
// means while switches change). The reader (its agent, the routes to the
// switches) is ready before fail is called, so that the first sample
// begins at once.
func measureHeal(t *testing.T, w healWatch, fail func() time.Time) (res healResult) {
	t.Helper()
	env, g, sls, window := w.env, w.g, w.sls, w.window
	rd := newLFTReader(t, env, g)
	t0 := fail()
	res = healResult{Cycles: sls != nil}
	deadline := time.Now().Add(budget(t, 0.2))
	if window > 0 {
		deadline = t0.Add(min(window, budget(t, 0.2)))
	}
	last, lastLost := t0, int64(-1)
	var reading time.Duration
	defer func() {
		if res.States > 0 {
			res.ReadMean = reading / time.Duration(res.States)
		}
	}()
	var prev *lft.Routing // the last state verified
	var rep *cdg.Report
	lastErr := ""
	for {
		began := time.Now()
		r, err := rd.read(context.Background())
		now := time.Now()
		if err != nil && w.sim != nil && w.sim.Exited() {
			words := strings.Split(strings.TrimSpace(w.sim.Log()), "\n")
			t.Fatalf("ibsim exited during the heal (read-back: %v); its last words:\n%s", err, strings.Join(words[max(0, len(words)-3):], "\n"))
		}
		if err != nil {
			if err.Error() != lastErr {
				t.Logf("read-back failed (counted as nothing healed): %v", err)
			}
			lastErr = err.Error()
		} else {
			lastErr = ""
			reading += now.Sub(began)
			if sls != nil {
				sls(r)
			}
			if prev == nil || !lft.Equal(prev, r) {
				// Most samples repeat the state before: verified once.
				if rep, _ = cdg.Verify(g, r, cdg.Options{}); rep == nil {
					t.Fatal("verifier gave no report")
				}
				prev = r
				res.Distinct++
				if rep.Loops > 0 || (sls != nil && rep.Cycle != nil) {
					res.Unsafe++
					if res.Worst == "" {
						res.Worst = fmt.Sprintf("%d loops, cycle %v", rep.Loops, rep.Cycle)
					}
				}
			}
			lost := rep.Pairs - rep.Delivered
			if lastLost < 0 {
				lastLost = lost // the first sample stands for the time before it
			}
			res.PairSeconds += float64(lastLost) * now.Sub(last).Seconds()
			last, lastLost = now, lost
			res.States++
			if lost == 0 {
				res.Healed = now.Sub(t0)
				return res
			}
			res.After = began.Sub(t0)
		}
		if now.After(deadline) && window > 0 {
			res.NotHealed, res.Healed, res.Lost = true, now.Sub(t0), lastLost
			return res
		}
		if now.After(deadline) {
			t.Fatalf("not healed within %v: %d states read, %.1f pair-seconds", now.Sub(t0), res.States, res.PairSeconds)
		}
	}
}

// unlink returns a function that fails what (ibsim's Unlink of a switch,
// "S-<guid>", or of its cable at one port, "S-<guid>"[port]) and returns
// when.
func unlink(t *testing.T, sim *ibtest.Sim, what string) func() time.Time {
	return func() time.Time {
		t0 := time.Now()
		if out, err := sim.Console(budget(t, 0.05), "Unlink "+what); err != nil || strings.Contains(out, "#") {
			t.Fatalf("Unlink %s: %v %s", what, err, out)
		}
		t.Logf("Unlink at %s", t0.UTC().Format("15:04:05.000"))
		return t0
	}
}

// switchNode returns the node of f that ibsim names name ("S-<guid>").
func switchNode(t *testing.T, f *fabric.Fabric, name string) fabric.NodeID {
	t.Helper()
	var guid uint64
	if _, err := fmt.Sscanf(name, "S-%x", &guid); err != nil {
		t.Fatalf("switch name %q: %v", name, err)
	}
	id, ok := f.NodeByGUID(guid)
	if !ok || f.Nodes[id].Kind != fabric.Switch {
		t.Fatalf("ibnetdiscover shows no switch %s", name)
	}
	return id
}

// withoutCable returns the fabric as ibnetdiscover sees it now, with the
// cable at port of switch name cut: the fabric after that cable fails,
// known before it fails, so that the reader starts at once (LIDs stay when
// a cable fails). checkCut compares it with a discovery after the failure.
func withoutCable(t *testing.T, sim *ibtest.Sim, name string, port int) *fabric.Graph {
	t.Helper()
	f := discoveredFabric(t, sim)
	id := switchNode(t, f, name)
	if port >= len(f.Nodes[id].Ports) || !f.Nodes[id].Ports[port].Cabled() {
		t.Fatalf("ibnetdiscover shows no cable at %s port %d", name, port)
	}
	peer := f.Nodes[id].Ports[port].Peer
	f.Nodes[id].Ports[port].Peer = fabric.NoPeer
	f.Port(peer).Peer = fabric.NoPeer
	return compiled(t, f)
}

// withoutSwitch returns the fabric as ibnetdiscover sees it now, without
// switch name: the fabric after all the switch's cables fail (discovery
// no longer reaches it), known before they fail, as withoutCable.
func withoutSwitch(t *testing.T, sim *ibtest.Sim, name string) *fabric.Graph {
	t.Helper()
	f := discoveredFabric(t, sim)
	gone := switchNode(t, f, name)
	kept := &fabric.Fabric{Header: f.Header}
	ids := make([]fabric.NodeID, len(f.Nodes)) // old id -> new id
	for i := range f.Nodes {
		ids[i] = fabric.NoNode
		if fabric.NodeID(i) != gone {
			ids[i] = fabric.NodeID(len(kept.Nodes))
			kept.Nodes = append(kept.Nodes, f.Nodes[i])
		}
	}
	for i := range kept.Nodes {
		ports := slices.Clone(kept.Nodes[i].Ports)
		for p := range ports {
			if ports[p].Cabled() {
				if ports[p].Peer.Node = ids[ports[p].Peer.Node]; ports[p].Peer.Node == fabric.NoNode {
					ports[p].Peer = fabric.NoPeer
				}
			}
		}
		kept.Nodes[i].Ports = ports
	}
	return compiled(t, kept)
}

func compiled(t *testing.T, f *fabric.Fabric) *fabric.Graph {
	t.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkCut fails the test unless ibnetdiscover now sees the fabric g
// (the same switches and links).
func checkCut(t *testing.T, sim *ibtest.Sim, g *fabric.Graph) {
	t.Helper()
	cables := func(f *fabric.Fabric) map[[4]uint64]bool {
		m := map[[4]uint64]bool{}
		for _, l := range f.Links() {
			m[[4]uint64{f.Nodes[l.A.Node].GUID, uint64(l.A.Port), f.Nodes[l.B.Node].GUID, uint64(l.B.Port)}] = true
			m[[4]uint64{f.Nodes[l.B.Node].GUID, uint64(l.B.Port), f.Nodes[l.A.Node].GUID, uint64(l.A.Port)}] = true
		}
		return m
	}
	seen := discoveredFabric(t, sim)
	a, b := cables(g.F), cables(seen)
	for c := range b {
		if !a[c] {
			t.Fatalf("after the failure ibnetdiscover sees a cable the bench's fabric lacks: %x", c)
		}
	}
	if len(a) != len(b) {
		t.Fatalf("after the failure ibnetdiscover sees %d cable ends, the bench's fabric has %d", len(b), len(a))
	}
	if n := seen.Count(fabric.Switch); n != g.NumSwitches() {
		t.Fatalf("after the failure ibnetdiscover sees %d switches, the bench's fabric has %d", n, g.NumSwitches())
	}
}

// discoveredFabric returns the fabric as ibnetdiscover sees it now.
func discoveredFabric(t *testing.T, sim *ibtest.Sim) *fabric.Fabric {
	t.Helper()
	out, err := sim.Run(budget(t, 0.05), "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ibnetdiscover.Parse(strings.NewReader(string(out)), "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	return res.Fabric
}

// stagedSLs evaluates states with the SLs the deployer has staged (what
// OpenSM's SA serves) at the time of the read.
func (b *osmBed) stagedSLs(g *fabric.Graph) func(*lft.Routing) {
	return func(r *lft.Routing) {
		if sl, n, err := lft.ReadSLFile(filepath.Join(b.state, "staged.sl"), g); err == nil {
			r.SL, r.NumVLs = sl, n
		}
		if m, err := lft.ReadSL2VLFile(filepath.Join(b.state, "staged.sl2vl"), g); err == nil {
			r.SL2VL = m
		}
	}
}

// healNuesm deploys Nue with the deployer, fails a switch-to-switch cable
// and measures the heal; then repairs it and waits for the rollout. The
// deployer runs as in production, without the test's read-back after each
// step: the measuring reader checks every state it samples.
func healNuesm(t *testing.T, tp *topo.Topology, vls int, drain time.Duration, apply string, osmConf ...string) healResult {
	b, srv, st := deployedOn(newOSMBed(t, tp, osmConf...), "nue", vls, false, func(c *sm.Config) { c.OpenSM.Drain.Duration, c.OpenSM.Apply = drain, apply })
	name, port := interSwitchPort(t, tp)
	g := withoutCable(t, b.sim, name, port)
	res := measureHeal(t, healWatch{sim: b.sim, env: b.toolEnv(), g: g, sls: b.stagedSLs(g)}, unlink(t, b.sim, fmt.Sprintf("%q[%d]", name, port)))
	checkCut(t, b.sim, g)
	b.waitDeployed(srv, st.Published.Generation, "after the failure")
	seen := changes(srv)
	if out, err := b.sim.Console(budget(t, 0.05), fmt.Sprintf("ReLink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("ReLink: %v %s", err, out)
	}
	b.waitSettled(srv, seen, "after the repair")
	return res
}

// openSMHealWindow is how long the bench watches OpenSM's own engines
// heal before it records the row as not healed (OpenSM's updn leaves
// pairs black-holed on some failures for good).
const openSMHealWindow = 2 * time.Minute

// healOpenSM runs OpenSM with one of its own engines, fails the same
// cable and measures OpenSM's own recovery.
func healOpenSM(t *testing.T, tp *topo.Topology, engine string) healResult {
	ibtest.Require(t, "ibsim", "opensm", "ibnetdiscover")
	net := filepath.Join(t.TempDir(), "fabric.net")
	if err := ibnetdiscover.WriteIBSimFile(net, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	sim := ibtest.StartSim(t, net, ibtest.SimConfig{Console: true, Start: budget(t, 0.1)})
	args := []string{"-R", engine}
	if engine == "dfsssp" {
		args = append(args, "-Q")
	}
	if _, err := ibtest.StartOpenSM(t, sim, ibtest.OpenSMConfig{Args: args, Timeout: budget(t, 0.1)}); err != nil {
		t.Fatal(err)
	}
	lib, _ := ibtest.UMAD2Sim()
	env := []string{"IBSIM_SOCKNAME=" + sim.SockName, "LD_PRELOAD=" + lib}
	name, port := interSwitchPort(t, tp)
	g := withoutCable(t, sim, name, port)
	var sls func(*lft.Routing)
	if engine != "dfsssp" { // one VL: SL 0 is the truth; dfsssp's SLs are not read
		sls = func(*lft.Routing) {}
	}
	res := measureHeal(t, healWatch{sim: sim, env: env, g: g, sls: sls, window: openSMHealWindow}, unlink(t, sim, fmt.Sprintf("%q[%d]", name, port)))
	checkCut(t, sim, g)
	return res
}

// TestOpenSMFailureHeal: a switch-to-switch cable of the k=4 fat tree
// fails under nuesm's deployer: every state read back until every pair is
// delivered again must be free of loops and CDG cycles; the time to
// healed and the pair-seconds black-holed are logged (bench/failover
// compares them with OpenSM's own engines).
func TestOpenSMFailureHeal(t *testing.T) { failureHeal(t, deploy.ApplySIGHUP) }

// TestOpenSMFailureHealSMP is TestOpenSMFailureHeal with the deployer
// writing the LFT blocks itself (apply = "smp").
func TestOpenSMFailureHealSMP(t *testing.T) { failureHeal(t, deploy.ApplySMP) }

func failureHeal(t *testing.T, apply string) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := healNuesm(t, tp, 4, 20*time.Millisecond, apply)
	if res.Unsafe > 0 {
		t.Errorf("%d of %d states read back were unsafe: %s", res.Unsafe, res.Distinct, res.Worst)
	}
	t.Logf("healed after %.3f s (the last read finding pairs undelivered began at %.3f s; one read %.1f ms), %.1f pair-seconds black-holed, %d samples of %d states, none unsafe",
		res.Healed.Seconds(), res.After.Seconds(), float64(res.ReadMean.Microseconds())/1000, res.PairSeconds, res.States, res.Distinct)
}

// TestFailoverBench is bench/failover (make bench-failover): the same
// cable failure on the fat tree k=4 n=3, the 4x4x4 torus and the 3-level
// fat tree k=8 (192 switches, 512 hosts: the largest fabric the shared
// machine's ibsim and OpenSM sweep within seconds), healed by nuesm's
// deployer and by OpenSM's own engines, side by side.
func TestFailoverBench(t *testing.T) {
	out := os.Getenv("NUESM_BENCH_FAILOVER")
	if out == "" {
		t.Skip("benchmark: make bench-failover (NUESM_BENCH_FAILOVER=<results file>)")
	}
	ft, _ := topo.FatTree(4, 3, 0)
	torus, _ := topo.Torus([]int{4, 4, 4}, 1, false)
	big, _ := topo.FatTree(8, 3, 0)
	var rows []string
	rows = append(rows, "| fabric | recovery | healed (s) | last unhealed sample began (s) | one sample (ms) | pair-seconds black-holed | samples (states) | unsafe states |",
		"|---|---|---|---|---|---|---|---|")
	for _, f := range []struct {
		name string
		tp   *topo.Topology
		vls  int
	}{{"fat tree k=4 n=3", ft, 4}, {"torus 4x4x4", torus, 8}, {"fat tree k=8 n=3", big, 4}} {
		add := func(who string, r healResult) {
			unsafe := fmt.Sprint(r.Unsafe)
			if !r.Cycles {
				unsafe += " (loops only: SLs not read)"
			}
			healed := fmt.Sprintf("%.3f", r.Healed.Seconds())
			if r.NotHealed {
				healed = fmt.Sprintf("not healed in %.0f s (%d pairs lost)", r.Healed.Seconds(), r.Lost)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %.3f | %.1f | %.1f | %d (%d) | %s |", f.name, who, healed, r.After.Seconds(), float64(r.ReadMean.Microseconds())/1000,
				r.PairSeconds, r.States, r.Distinct, unsafe))
			t.Log(rows[len(rows)-1])
			if r.Unsafe > 0 {
				t.Logf("%s, %s: the first unsafe state read: %s", f.name, who, r.Worst)
			}
		}
		for _, apply := range []string{deploy.ApplySMP, deploy.ApplySIGHUP} {
			t.Run(f.name+"/nuesm-"+apply, func(t *testing.T) {
				add("nuesm nue, "+apply+", drain 20 ms", healNuesm(t, f.tp, f.vls, 20*time.Millisecond, apply))
			})
			t.Run(f.name+"/nuesm-"+apply+"-drain", func(t *testing.T) {
				add("nuesm nue, "+apply+", drain 1.1 s", healNuesm(t, f.tp, f.vls, 1100*time.Millisecond, apply))
			})
		}
		t.Run(f.name+"/nuesm-smp-notrapsweep", func(t *testing.T) {
			add("nuesm nue, smp, drain 20 ms, sweep_on_trap FALSE", healNuesm(t, f.tp, f.vls, 20*time.Millisecond, deploy.ApplySMP, "sweep_on_trap FALSE"))
		})
		for _, e := range []string{"updn", "minhop", "dfsssp"} {
			t.Run(f.name+"/"+e, func(t *testing.T) { add("OpenSM "+e, healOpenSM(t, f.tp, e)) })
		}
	}
	if err := os.WriteFile(out, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// topSwitch returns the ibsim name of the first top-level switch of a
// fat tree (description "… L<top> …": no hosts, every port to a switch).
func topSwitch(t *testing.T, tp *topo.Topology, top int) string {
	t.Helper()
	for i := range tp.Fabric.Nodes {
		n := &tp.Fabric.Nodes[i]
		if n.Kind == fabric.Switch && strings.Contains(n.Desc, fmt.Sprintf(" L%d ", top)) {
			return fmt.Sprintf("S-%016x", n.GUID)
		}
	}
	t.Fatalf("no switch of level %d", top)
	return ""
}

// TestOpenSMSwitchFailure: a top switch of the k=4 fat tree fails (ibsim
// Unlink of all its cables) under nuesm's deployer: discovery loses the
// switch, the daemon reroutes, and every state read back until every
// pair is delivered again must be free of loops and CDG cycles, as must
// each write step's; the switch comes back (ReLink): the daemon settles
// and the switches hold the published tables.
func TestOpenSMSwitchFailure(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, srv, st := deployed(t, tp, "nue", 4, true, nil)
	sw := topSwitch(t, tp, 2)
	g := withoutSwitch(t, b.sim, sw)
	res := measureHeal(t, healWatch{sim: b.sim, env: b.toolEnv(), g: g, sls: b.stagedSLs(g)}, unlink(t, b.sim, fmt.Sprintf("%q", sw)))
	checkCut(t, b.sim, g) // 47 switches: discovery no longer reaches the failed one
	if res.Unsafe > 0 {
		t.Errorf("%d of %d states read back were unsafe: %s", res.Unsafe, res.Distinct, res.Worst)
	}
	st = b.waitDeployed(srv, st.Published.Generation, "after the switch failure")
	if got := st.Published.Switches; got != 47 {
		t.Errorf("published generation %d routes %d switches, expected 47", st.Published.Generation, got)
	}
	b.checkDeployed(st.Published.Generation, 24)
	t.Logf("switch failure healed after %.3f s, %.1f pair-seconds black-holed, %d samples of %d states, none unsafe", res.Healed.Seconds(), res.PairSeconds, res.States, res.Distinct)
	// A generation routed before discovery knew the switch was gone
	// writes to it; its step must yield to the newer generation, not
	// wait out the step timeout and stop stuck.
	if m := e2eScrape(t, srv.Addr()); m[`nuesm_deploy_rollouts_total{result="stuck"}`] != 0 {
		t.Errorf("%v rollouts stuck during the heal (steps superseded: %v)", m[`nuesm_deploy_rollouts_total{result="stuck"}`], m[`nuesm_deploy_steps_total{result="superseded"}`])
	}

	seen := changes(srv)
	if out, err := b.sim.Console(budget(t, 0.05), fmt.Sprintf("ReLink %q", sw)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("ReLink %s: %v %s", sw, err, out)
	}
	st = b.waitSettled(srv, seen, "after the switch came back")
	b.checkDeployed(st.Published.Generation, 24)
}
