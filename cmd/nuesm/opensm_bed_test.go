package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// osmBed is a simulated fabric (ibsim with its console) with the real
// OpenSM as master SM, configured as docs/deploy.md says: file engine
// without fallback on the deployer's stable LFT file, QoS on with the
// deployer's policy file. sweep_on_trap keeps OpenSM's default (TRUE),
// the harder case for the deployer, unless a test passes the guide's
// FALSE.
type osmBed struct {
	t       *testing.T
	sim     *ibtest.Sim
	osm     *ibtest.OpenSM
	dir     string // the test's directory: out/, fabric.topo, state
	osmDir  string // OpenSM's directory (kept across restarts)
	conf    []string
	pidFile string
	fabric  string // the daemon's fabric dump (discovery writes it)
	out     string // the daemon's output directory
	state   string // the deployer's state directory (stable files)

	mu       sync.Mutex
	checked  int // write steps read back and verified by the test
	stepLogs []string
	proven   map[int]time.Time // generation -> when its last write step read back so far
	last     *lft.Routing      // the test's last read-back (a routing of lastG)
	lastG    *fabric.Graph
	onStep   func(deploy.StepEvent) // called after each checked step (fault injection)
	// beforeStage is the deployer's BeforeStage (fault injection).
	beforeStage func(deploy.StepEvent)
	// noStepCheck leaves the deployer without the test's read-back after
	// each step, as in production (heal times; the reader samples states).
	noStepCheck bool
}

// envRunMain makes the test binary run nuesm's main (TestMain): the
// deployer starts it as its SMP agent ("smp-agent"), with the diags'
// environment, since the simulator's LD_PRELOAD library must be loaded
// when the process starts.
const envRunMain = "NUESM_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// budget returns frac of the time left before the test's deadline
// (10 minutes when there is none).
func budget(t testing.TB, frac float64) time.Duration {
	left := 10 * time.Minute
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dl.Deadline(); ok {
			left = time.Until(d)
		}
	}
	return time.Duration(float64(left) * frac)
}

// newOSMBed starts ibsim with tp and OpenSM as master SM with its file
// engine on the bed's files (osmConf: more lines for opensm.conf).
func newOSMBed(t *testing.T, tp *topo.Topology, osmConf ...string) *osmBed {
	t.Helper()
	ibtest.Require(t, "ibsim", "opensm", "ibnetdiscover", "iblinkinfo", "dump_fts", "ibroute", "saquery", "smpquery")
	b := &osmBed{t: t, dir: t.TempDir(), osmDir: t.TempDir()}
	net := filepath.Join(b.dir, "fabric.net")
	if err := ibnetdiscover.WriteIBSimFile(net, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	b.sim = ibtest.StartSim(t, net, ibtest.SimConfig{Console: true, Start: budget(t, 0.1)})
	b.out = filepath.Join(b.dir, "out")
	b.state = filepath.Join(b.out, "opensm")
	b.fabric = filepath.Join(b.dir, "fabric.topo")
	b.pidFile = filepath.Join(b.dir, "opensm.pid")
	if err := os.MkdirAll(b.state, 0o755); err != nil {
		t.Fatal(err)
	}
	// A fresh fabric: an empty LFT file (no routes) lets OpenSM come up
	// with its file engine; the first rollout is the initial plan.
	if err := os.WriteFile(filepath.Join(b.state, "opensm-lfts.dump"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.conf = []string{
		"routing_engine file,no_fallback",
		"lfts_file " + filepath.Join(b.state, "opensm-lfts.dump"),
		"qos TRUE",
		"qos_policy_file " + filepath.Join(b.state, "qos-policy.conf"),
	}
	b.conf = append(b.conf, osmConf...)
	b.startOpenSM()
	return b
}

// startOpenSM (re)starts OpenSM in the bed's directory and writes its pid.
func (b *osmBed) startOpenSM() {
	b.t.Helper()
	osm, err := ibtest.StartOpenSM(b.t, b.sim, ibtest.OpenSMConfig{Conf: b.conf, Dir: b.osmDir, Timeout: budget(b.t, 0.1)})
	if err != nil {
		b.t.Fatal(err)
	}
	b.osm = osm
	if err := os.WriteFile(b.pidFile, []byte(strconv.Itoa(osm.Pid())+"\n"), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// empty makes OpenSM clear every switch's unicast table (an empty LFT
// file, then a heavy sweep), as on a fabric nuesm has not routed yet.
func (b *osmBed) empty() {
	b.t.Helper()
	if err := os.WriteFile(filepath.Join(b.state, "opensm-lfts.dump"), nil, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if err := syscall.Kill(b.osm.Pid(), syscall.SIGHUP); err != nil {
		b.t.Fatal(err)
	}
	deadline := time.Now().Add(budget(b.t, 0.1))
	for {
		res, err := ibnetdiscover.ParseFile(b.fabric)
		if err != nil {
			b.t.Fatal(err)
		}
		g, err := fabric.Compile(res.Fabric)
		if err != nil {
			b.t.Fatal(err)
		}
		if r := b.readBack(g, nil); r != nil && r.Entries() == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatal("the switches kept their tables after OpenSM loaded an empty LFT file")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// toolEnv is what the diags need to reach the simulator.
func (b *osmBed) toolEnv() []string {
	lib, err := ibtest.UMAD2Sim()
	if err != nil {
		b.t.Fatal(err)
	}
	return []string{"IBSIM_SOCKNAME=" + b.sim.SockName, "LD_PRELOAD=" + lib, envRunMain + "=1"}
}

// config returns a daemon configuration with the deployer on (applying
// steps with SIGHUP; the SMP tests set apply = "smp"); the test checks
// every proven write step itself.
func (b *osmBed) config(engine string, vls int) sm.Config {
	return sm.Config{
		Fabric: b.fabric, Output: b.out, Engines: engine, MaxVLs: vls, Listen: "127.0.0.1:0",
		FabricPoll: sm.Duration{Duration: 100 * time.Millisecond},
		OpenSM: sm.OpenSMConfig{
			Enabled: true, StateDir: b.state, Conf: filepath.Join(b.osmDir, "opensm.conf"), LogFile: b.osm.LogFile, DumpDir: b.osm.DumpDir,
			PIDFile: b.pidFile, ToolEnv: b.toolEnv(), Discover: true,
			StepTimeout: sm.Duration{Duration: budget(b.t, 0.05)}, Drain: sm.Duration{Duration: 20 * time.Millisecond},
			Retry: sm.Duration{Duration: 500 * time.Millisecond}, Rediscover: sm.Duration{Duration: -1},
			DiscoverPoll: sm.Duration{Duration: 50 * time.Millisecond},
			Apply:        deploy.ApplySIGHUP, SMPAgent: os.Args[0],
		},
	}
}

// server builds the daemon with the planner and the deployer, the
// deployer's AfterStep reading the switches back.
func (b *osmBed) server(cfg sm.Config, extra ...sm.Option) *sm.Server {
	b.t.Helper()
	plain := cfg
	plain.OpenSM.Enabled = false // the test installs its own deployer, with AfterStep
	opts, err := serveOptions(plain, slog.New(slog.NewTextHandler(b.t.Output(), nil)))
	if err != nil {
		b.t.Fatal(err)
	}
	dc, err := deploy.ConfigFrom(cfg)
	if err != nil {
		b.t.Fatal(err)
	}
	if !b.noStepCheck {
		dc.AfterStep = b.checkStep
	}
	dc.ToolWorkDir = b.dir
	dc.BeforeStage = b.beforeStage
	m := sm.NewMetrics()
	d, err := deploy.New(*dc, slog.New(slog.NewTextHandler(b.t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})), m.Registry)
	if err != nil {
		b.t.Fatal(err)
	}
	opts = append(opts, sm.WithMetrics(m), sm.WithDeployer(deploy.Adapter{D: d}))
	srv, err := sm.New(cfg, append(opts, extra...)...)
	if err != nil {
		b.t.Fatal(err)
	}
	return srv
}

// readBack reads every switch's table with dump_fts over directed routes
// (and, where dump_fts misses the top LID's block, with smpdump unless
// known gives the entry) and remembers it as the test's last read.
func (b *osmBed) readBack(g *fabric.Graph, known deploy.Known) *lft.Routing {
	b.t.Helper()
	r, err := deploy.ReadSwitches(context.Background(), b.toolEnv(), b.dir, budget(b.t, 0.05), g, known)
	if err != nil {
		b.t.Errorf("reading the switches back: %v", err)
		return nil
	}
	b.mu.Lock()
	b.last, b.lastG = r.Clone(), g
	b.mu.Unlock()
	return r
}

// readKnown reads the switches back expecting want (a routing of g):
// the entries dump_fts misses are read again only where want differs
// from the test's last read.
func (b *osmBed) readKnown(g *fabric.Graph, want *lft.Routing) *lft.Routing {
	b.mu.Lock()
	known := deploy.KnownUnchanged(b.lastG, b.last, g, want)
	b.mu.Unlock()
	return b.readBack(g, known)
}

// checkStep is the deployer's AfterStep: the test's own read-back must
// equal the step's tables and verify (no loop, no CDG cycle).
func (b *osmBed) checkStep(ev deploy.StepEvent) {
	// The entries dump_fts misses are read again only where the step
	// changed them since the test's last read.
	b.mu.Lock()
	known := deploy.KnownUnchanged(b.lastG, b.last, ev.Graph, ev.Tables)
	b.mu.Unlock()
	got := b.readBack(ev.Graph, known)
	if got == nil {
		return
	}
	if n := lftDiff(ev.Graph, got, ev.Tables); n != "" {
		b.t.Errorf("generation %d step %d/%d: switches differ from the step's tables: %s", ev.Generation, ev.Step, ev.Steps, n)
	}
	got.SL, got.SL2VL, got.NumVLs = ev.Tables.SL, ev.Tables.SL2VL, ev.Tables.NumVLs
	// Every destination is live: OpenSM cannot stop hosts injecting.
	rep, _ := cdg.Verify(ev.Graph, got, cdg.Options{})
	if rep == nil || rep.Loops > 0 || rep.Cycle != nil {
		b.t.Errorf("generation %d step %d/%d: the state read back has a forwarding loop or a CDG cycle: %v", ev.Generation, ev.Step, ev.Steps, rep.Err())
		return
	}
	b.mu.Lock()
	if b.proven == nil {
		b.proven = map[int]time.Time{}
	}
	b.proven[ev.Generation] = time.Now()
	b.checked++
	b.stepLogs = append(b.stepLogs, fmt.Sprintf("gen %d step %d/%d: %d of %d pairs delivered", ev.Generation, ev.Step, ev.Steps, rep.Delivered, rep.Pairs))
	hook := b.onStep
	b.mu.Unlock()
	if hook != nil {
		hook(ev)
	}
}

func (b *osmBed) steps() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.checked
}

// lftDiff describes differing entries for LIDs 1..MaxLID ("" if none).
func lftDiff(g *fabric.Graph, a, b *lft.Routing) string {
	var sb strings.Builder
	n := 0
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for lid := 1; lid <= g.MaxLID(); lid++ {
			if x, y := a.Port(s, lid), b.Port(s, lid); x != y {
				if n++; n <= 5 {
					fmt.Fprintf(&sb, "%s LID %d: %d vs %d; ", g.SwitchName(s), lid, x, y)
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d entries (%s)", n, sb.String())
}

// discover writes the fabric as ibnetdiscover sees it (OpenSM's LIDs).
func (b *osmBed) discover() {
	b.t.Helper()
	out, err := b.sim.Run(budget(b.t, 0.05), "ibnetdiscover")
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(b.fabric, out, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// deployStatus returns the deployer's status from the daemon's.
func deployStatus(st sm.Status) deploy.Status {
	if d, ok := st.Deploy.(deploy.Status); ok {
		return d
	}
	return deploy.Status{}
}

// waitIdle waits until the daemon is idle, the deployer holds the
// published generation, and ok holds; it returns the daemon's status.
func (b *osmBed) waitIdle(srv *sm.Server, what string, ok func(sm.Status, deploy.Status) bool) sm.Status {
	b.t.Helper()
	deadline := time.Now().Add(budget(b.t, 0.3))
	for {
		st := srv.Status()
		d := deployStatus(st)
		if st.State == "idle" && st.Published != nil && d.Deployed == st.Published.Generation && d.Phase == deploy.PhaseIdle && ok(st, d) {
			return st
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not deployed: daemon %s (%s %s), deploy %+v", what, st.State, st.LastResult, st.LastError, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDeployed waits until the deployer has rolled out the published
// generation (newer than after) and returns the daemon's status.
func (b *osmBed) waitDeployed(srv *sm.Server, after int, what string) sm.Status {
	b.t.Helper()
	return b.waitIdle(srv, fmt.Sprintf("%s (generation after %d)", what, after), func(st sm.Status, _ deploy.Status) bool {
		return st.Published.Generation > after
	})
}

// deployed starts the bed's daemon with engine and vls on tp (cfg, when
// set, adjusts the configuration; stepCheck reads every write step back)
// and waits for the initial rollout.
func deployed(t *testing.T, tp *topo.Topology, engine string, vls int, stepCheck bool, cfg func(*sm.Config)) (*osmBed, *sm.Server, sm.Status) {
	t.Helper()
	return deployedOn(newOSMBed(t, tp), engine, vls, stepCheck, cfg)
}

// deployedOn is deployed on a bed already made.
func deployedOn(b *osmBed, engine string, vls int, stepCheck bool, cfg func(*sm.Config)) (*osmBed, *sm.Server, sm.Status) {
	t := b.t
	t.Helper()
	b.noStepCheck = !stepCheck
	b.discover()
	c := b.config(engine, vls)
	if cfg != nil {
		cfg(&c)
	}
	srv := b.server(c)
	runDaemon(t, srv)
	return b, srv, b.waitDeployed(srv, 0, "initial rollout")
}

// changes returns how many fabric changes discovery has seen.
func changes(srv *sm.Server) int64 {
	if d := deployStatus(srv.Status()).Discovery; d != nil {
		return d.Changes
	}
	return 0
}

// waitSettled waits until discovery has seen more than seen fabric
// changes, the daemon rerouted after the last of them, and the deployer
// holds the published generation (a new one or, when the reroute left
// the tables as they were, the same).
func (b *osmBed) waitSettled(srv *sm.Server, seen int64, what string) sm.Status {
	b.t.Helper()
	return b.waitIdle(srv, what, func(st sm.Status, d deploy.Status) bool {
		return d.Discovery != nil && d.Discovery.Changes > seen && st.LastReroute.After(d.Discovery.LastChange)
	})
}

// published reads a published generation's fabric and tables.
func (b *osmBed) published(gen int) (*fabric.Graph, *lft.Routing) {
	b.t.Helper()
	dir := filepath.Join(b.out, fmt.Sprintf("gen-%06d", gen))
	res, err := ibnetdiscover.ParseFile(filepath.Join(dir, "fabric.topo"))
	if err != nil {
		b.t.Fatal(err)
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		b.t.Fatal(err)
	}
	r, err := lft.ReadTableSet(dir, g, lft.ReadOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	return g, r
}
