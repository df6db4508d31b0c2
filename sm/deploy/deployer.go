// Package deploy rolls the daemon's published tables out to the switches
// through a running OpenSM, step by step, and finds fabric changes
// without a person (docs/deploy.md is the operator's guide).
//
// OpenSM stays the subnet manager; its file routing engine loads the LFT
// file the deployer stages at a stable path, its SA serves the path SLs of
// the QoS policy staged beside it, and its QoS options program the SL2VL
// tables. A heavy sweep (SIGHUP) re-reads all three; light sweeps do not.
//
// Each published generation is rolled out with a consistent update plan
// (package plan) built from what the switches hold, read back with
// dump_fts (after a step: the switches it writes, with ibroute). OpenSM cannot stop hosts injecting, so the plans have no
// pauses (plan.BuildLive): every state is proven with every destination
// live. For every write step the deployer stages that step's tables,
// sends SIGHUP, waits until OpenSM logs that the file engine configured
// the switches and the switches read back equal to the step, verifies the
// state read back (no loop, no CDG cycle, every destination live), and
// samples the SLs OpenSM's SA serves and the SL2VL tables it programmed;
// barriers wait for the packets in flight. A step that does not take within its timeout
// stops the rollout with the switches' state read back and reported; a
// later try re-plans from that state and never skips a step. The state
// machine is persisted in state.json beside the stable files, and a
// restart first completes a staged step (OpenSM may apply it at any heavy
// sweep), then re-plans from what the switches hold.
//
// All programs run without a shell, bounded in time and output, in a
// process group of their own that a timeout kills.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/internal/umad"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/sm"
)

// Status is the deployer's part of the daemon's /status.
type Status struct {
	Phase      string      `json:"phase"`
	Target     int         `json:"target_generation"`
	Deployed   int         `json:"deployed_generation"`
	Step       int         `json:"step"`
	Steps      int         `json:"steps"`
	StepNote   string      `json:"step_note,omitempty"`
	Error      string      `json:"error,omitempty"`
	Updated    time.Time   `json:"updated"`
	Held       *HeldStatus `json:"held,omitempty"`
	Discovery  *Discovery  `json:"discovery,omitempty"`
	LFTsFile   string      `json:"lfts_file"`
	QoSPolicy  string      `json:"qos_policy_file"`
	LastPlan   *PlanInfo   `json:"last_plan,omitempty"`
	StepTimout string      `json:"step_timeout"`
}

// HeldStatus is what the switches were last read to hold.
type HeldStatus struct {
	ReadAt      time.Time `json:"read_at"`
	Generation  int       `json:"generation"` // generation whose fabric it was read against
	Matches     string    `json:"matches"`    // "step N of generation G", "generation G", or "unknown"
	Safe        bool      `json:"safe"`       // no loop, no CDG cycle
	Loops       int64     `json:"loops"`
	Cycle       string    `json:"cycle,omitempty"`
	Undelivered int64     `json:"undelivered_pairs"`
	Pairs       int64     `json:"pairs"`
	Missing     []string  `json:"missing_switches,omitempty"`
}

// PlanInfo summarises the plan being executed: its stages (plan.Stage)
// and their steps.
type PlanInfo struct {
	Generation   int    `json:"generation"`
	Stages       int    `json:"stages"`
	Steps        int    `json:"steps"`
	Writes       int    `json:"lft_writes"`
	Blackout     int    `json:"blackout_destinations"` // unrouted, then written: their changed pairs are dropped meanwhile
	ChangedPairs int64  `json:"changed_pairs"`
	LostPairs    int64  `json:"lost_pairs"`
	Note         string `json:"note,omitempty"`
}

// Discovery is what the fabric watcher last did.
type Discovery struct {
	LastRun     time.Time `json:"last_run"`
	LastChange  time.Time `json:"last_change,omitempty"`
	LastError   string    `json:"last_error,omitempty"`
	Runs        int64     `json:"runs"`
	Changes     int64     `json:"changes"`
	LastTrigger string    `json:"last_trigger"`
}

// Deployer executes published generations through OpenSM. Create it with
// New; Run owns all of its mutable state, Publish and Status are safe for
// concurrent use.
type Deployer struct {
	cfg Config
	log *slog.Logger
	run *runner
	osm *openSM
	met *metrics

	gens   chan genRef // latest published generation; buffered 1, newest wins
	status atomic.Pointer[Status]

	mu   sync.Mutex // guards disc
	disc Discovery

	// owned by Run
	st      state
	held    *HeldStatus
	plan    *PlanInfo
	pending *genRef // a generation that arrived during a rollout
	// operVLsOK is the VL count the ports were seen to operate (read once:
	// a port's operational VLs change only when OpenSM's max_op_vls does).
	operVLsOK int
	// lastRead is the last state read back (on lastG): the entries
	// dump_fts misses are read again only where a step writes them.
	lastG    *fabric.Graph
	lastRead *lft.Routing
	// paths holds the switches' directed routes by node GUID, as the
	// last reads found them.
	paths map[uint64]string
	// pathSnap is a copy of paths for the fabric watcher.
	pathSnap atomic.Pointer[map[uint64]string]
	// local is the node GUID the diags run from (0: unknown), from the
	// generation's dump; localPaths are the directed routes on localG.
	local      uint64
	localG     *fabric.Graph
	localPaths map[uint64]string
	// pathsG is the fabric the paths were found on.
	pathsG *fabric.Graph
	// staged, when set, says the last read found the staged tables.
	staged *stagedRead
	// logWatch wakes a step's wait when OpenSM writes its log.
	logWatch *watcher
	// agent sends the SMPs of Apply "smp"; sweeps follows OpenSM's
	// heavy sweeps in its log.
	agent  *umad.Agent
	sweeps sweepTracker
	// lftMark is where sweeps stood when the LFT file was last synced
	// (writesBeforeStage).
	lftMark fileMark
	// smpPending says SMPs wrote blocks OpenSM has not loaded from the
	// file since (catchUp).
	smpPending bool
	// trapOwed says OpenSM skipped the heavy sweep of a link's trap
	// (oweTrapSweep); owed signals Run.
	trapOwed atomic.Bool
	owed     chan struct{}
	// superseded counts the scans in a row not adopted because a link's
	// trap came during them (trapDuringScan).
	superseded atomic.Int32
}

// read reads the switches back; entries dump_fts misses that no step
// wrote since the last read (want agrees with it; nil: any) are taken
// from that read. With want, only the switches where want differs from
// the last read are read (readWritten) when that can be done.
func (d *Deployer) read(ctx context.Context, g *fabric.Graph, want *lft.Routing) (*lft.Routing, []string, error) {
	var known Known
	switch {
	case d.lastRead != nil && want != nil:
		known = KnownUnchanged(d.lastG, d.lastRead, g, want)
	case d.lastRead != nil:
		known = KnownUnchanged(d.lastG, d.lastRead, d.lastG, d.lastRead)
	}
	if d.paths == nil {
		d.paths = map[uint64]string{}
	}
	if paths := d.routesOn(g); want != nil && paths != nil {
		r, n, err := readWritten(ctx, d.run, g, known, paths)
		if err == nil {
			d.log.Debug("read back the switches written", "switches", n, "of", g.NumSwitches())
			d.lastG, d.lastRead = g, r
			return r, nil, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err != errReadAll {
			d.log.Debug("reading every switch", "why", err)
		}
	}
	r, missing, err := readLFTs(ctx, d.run, g, known, d.paths)
	if err == nil && len(missing) == 0 {
		d.lastG, d.lastRead, d.pathsG = g, r, g
		snap := maps.Clone(d.paths)
		d.pathSnap.Store(&snap)
	}
	return r, missing, err
}

// routesOn returns directed routes to the switches of g: computed on g
// from the node the diags run on (the dump's header names it), else the
// ones the last full read found when g's cables are those of the fabric
// they were found on; nil when neither is known.
func (d *Deployer) routesOn(g *fabric.Graph) map[uint64]string {
	if d.local != 0 {
		if d.localG != g {
			d.localG, d.localPaths = g, DRPaths(g, d.local)
		}
		if d.localPaths != nil {
			return d.localPaths
		}
	}
	if d.pathsG == nil {
		return nil
	}
	if d.pathsG != g && !sameCables(d.pathsG, g) {
		return nil
	}
	d.pathsG = g
	return d.paths
}

// sameCables reports whether two fabrics have the same cables (ends named
// by node GUID and port).
func sameCables(a, b *fabric.Graph) bool {
	set := func(g *fabric.Graph) map[[4]uint64]bool {
		m := map[[4]uint64]bool{}
		for _, l := range g.F.Links() {
			k := [4]uint64{g.F.Nodes[l.A.Node].GUID, uint64(l.A.Port), g.F.Nodes[l.B.Node].GUID, uint64(l.B.Port)}
			if k[2] < k[0] || (k[2] == k[0] && k[3] < k[1]) {
				k = [4]uint64{k[2], k[3], k[0], k[1]}
			}
			m[k] = true
		}
		return m
	}
	x, y := set(a), set(b)
	if len(x) != len(y) {
		return false
	}
	for k := range x {
		if !y[k] {
			return false
		}
	}
	return true
}

type genRef struct {
	gen int
	dir string
	at  time.Time // when it was handed over
	mem *memGen   // the generation in memory, before it is published (nil: read dir)
}

// memGen is a generation handed over in memory (Handoff). Its tables
// reach the switches only once the daemon says it is published.
type memGen struct {
	g         *fabric.Graph
	r         *lft.Routing
	dump      []byte
	assigned  int // endpoints the dump gave no LID (the daemon numbered them)
	published <-chan error
	// settled, err: the publication's outcome once received.
	settled bool
	err     error
}

// errNotPublished stops the rollout of a generation handed over in
// memory whose publication failed: nothing of it was written, and the
// daemon keeps the last good generation published.
var errNotPublished = errors.New("the generation was not published")

// awaitPublished waits until a generation handed over in memory is
// published (nil at once for one read from disk).
func (d *Deployer) awaitPublished(ctx context.Context, ref genRef) error {
	m := ref.mem
	if m == nil {
		return nil
	}
	if !m.settled {
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-m.published:
			m.settled, m.err = true, err
		}
		if w := time.Since(t0); w > time.Millisecond {
			d.log.Debug("waited for the generation's publication", "generation", ref.gen, "seconds", w.Seconds())
		}
	}
	if m.err != nil {
		d.log.Warn("generation handed over not published: not rolled out", "generation", ref.gen, "err", m.err)
		return fmt.Errorf("%w: generation %d: %w", errNotPublished, ref.gen, m.err)
	}
	return nil
}

// New validates cfg (after Defaults) and prepares the state directory.
// Metrics are registered on reg (nil: not exported).
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Deployer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("opensm state directory: %w", err)
	}
	d := &Deployer{
		cfg:  cfg,
		log:  log.With("part", "deploy"),
		run:  &runner{dir: cfg.ToolsDir, work: cfg.ToolWorkDir, env: cfg.ToolEnv, timeout: cfg.ToolTimeout, limit: cfg.ToolOutputLimit},
		osm:  &openSM{pidFile: cfg.PIDFile, logFile: cfg.LogFile, procDir: "/proc"},
		met:  newMetrics(reg),
		gens: make(chan genRef, 1),
		owed: make(chan struct{}, 1),
		agent: &umad.Agent{Bin: cfg.SMPAgent, Env: cfg.ToolEnv, Dir: cfg.ToolWorkDir,
			Args: []string{"smp-agent", "--device", cfg.SMPDevice, "--mkey", strconv.FormatUint(cfg.MKey, 10)}},
	}
	st, err := d.loadState()
	if err != nil {
		d.log.Warn("rollout state unreadable; starting from what the switches hold", "err", err)
	}
	d.st = st
	d.publishStatus()
	return d, nil
}

// Publish hands over a published generation (its directory). Only the
// newest one waiting counts.
func (d *Deployer) Publish(gen int, dir string) {
	d.offer(genRef{gen: gen, dir: dir, at: time.Now()})
}

// offer queues ref for Run, replacing an older one waiting.
func (d *Deployer) offer(ref genRef) {
	for {
		select {
		case d.gens <- ref:
			return
		default:
		}
		select {
		case <-d.gens: // drop the older one
		default:
		}
	}
}

// Handoff hands over a generation in memory before it is published
// (sm.Handoff): the rollout prepares from it while the daemon writes
// the files and writes nothing to the switches or to state.json before
// the publication is confirmed. Only the newest one waiting counts.
func (d *Deployer) Handoff(h sm.Handoff) {
	d.offer(genRef{gen: h.Gen, dir: h.Dir, at: time.Now(),
		mem: &memGen{g: h.Graph, r: h.Routing, dump: h.Fabric, assigned: h.AssignedLIDs, published: h.Published}})
}

// Status returns the deployer's status (safe for concurrent use).
func (d *Deployer) Status() Status {
	s := *d.status.Load()
	d.mu.Lock()
	disc := d.disc
	d.mu.Unlock()
	if d.cfg.Discover {
		s.Discovery = &disc
	}
	return s
}

// Problem says what is wrong with the rollout ("" when nothing is): a
// rollout stuck, refused or without OpenSM, or switches read back in an
// unsafe state. Safe for concurrent use.
func (d *Deployer) Problem() string {
	s := d.status.Load()
	switch s.Phase {
	case PhaseStuck, PhaseRefused, PhaseNoOpenSM:
		return fmt.Sprintf("rollout of generation %d %s: %s", s.Target, s.Phase, s.Error)
	}
	if h := s.Held; h != nil && !h.Safe {
		return fmt.Sprintf("the switches hold an unsafe state (%s): %d looping pairs, cycle %s", h.Matches, h.Loops, h.Cycle)
	}
	return ""
}

func (d *Deployer) publishStatus() {
	s := &Status{Phase: d.st.Phase, Target: d.st.Target, Deployed: d.st.Deployed, Step: d.st.Step, Steps: d.st.Steps,
		Error: d.st.Error, Updated: d.st.Updated, Held: d.held, LFTsFile: d.cfg.LFTsFile, QoSPolicy: d.cfg.QoSPolicyFile,
		LastPlan: d.plan, StepTimout: d.cfg.StepTimeout.String()}
	d.status.Store(s)
	m := d.met
	m.setPhase(d.st.Phase)
	m.target.Set(float64(d.st.Target))
	m.deployed.Set(float64(d.st.Deployed))
	m.step.Set(float64(d.st.Step))
	m.steps.Set(float64(d.st.Steps))
}

// Run rolls generations out until ctx ends. trigger asks the daemon for
// a reroute (discovery found a change).
func (d *Deployer) Run(ctx context.Context, trigger func(reason string)) error {
	d.snapshot(ctx)
	d.logWatch = watchDirs(ctx, filepath.Dir(d.cfg.LogFile))
	d.sweeps = sweepTracker{off: d.osm.logOffset()}
	defer d.agent.Close()
	if d.cfg.Discover {
		go d.watchFabric(ctx, trigger)
	}
	// good is the last generation known published: a generation handed
	// over whose publication fails leaves the daemon with it, so its
	// rollout goes on (it may have stopped, or wait for a retry).
	var cur, good *genRef
	var retry, owed <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case g := <-d.gens:
			cur = &g
		case <-retry:
		case <-d.owed:
			owed = time.After(trapSweepGrace)
			continue
		case <-owed:
			owed = nil
			d.payTrapSweep(ctx)
			continue
		}
		retry = nil
		if cur == nil {
			continue
		}
		err := d.rollout(ctx, *cur)
		for errors.Is(err, errNewer) || (errors.Is(err, errNotPublished) && good != nil) {
			if errors.Is(err, errNewer) {
				good, cur = cur, d.pending
				d.pending = nil
				d.met.rollouts.WithLabelValues("replanned").Inc()
			} else {
				cur = good
			}
			err = d.rollout(ctx, *cur)
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errNotPublished) {
			cur, err = nil, nil // nothing published before: nothing to go on with
		}
		if cur != nil {
			good = cur
		}
		d.requeuePending()
		if err != nil {
			retry = time.After(d.cfg.Retry)
		}
	}
}

// payTrapSweep sends the owed trap sweep no rollout sent.
func (d *Deployer) payTrapSweep(ctx context.Context) {
	if !d.trapOwed.Load() {
		return
	}
	if err := d.catchUp(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("the heavy sweep owed for a link's trap did not end", "err", err)
	}
}

// requeuePending hands a generation taken by newer but not acted on
// (its publication was not confirmed yet) back to Run, unless a newer
// one waits.
func (d *Deployer) requeuePending() {
	if d.pending == nil {
		return
	}
	select {
	case d.gens <- *d.pending:
	default:
	}
	d.pending = nil
}

// errNewer stops a rollout when a newer generation was published: at a
// step boundary, or during a step whose switches do not answer.
var errNewer = errors.New("a newer generation was published")

// newer takes a newer generation, if one is waiting, and reports
// whether it is published: a rollout is left for a generation handed
// over in memory only once its publication is confirmed (one that fails
// is dropped, one not confirmed yet waits in pending).
func (d *Deployer) newer() bool {
	select {
	case g := <-d.gens:
		d.pending = &g
	default:
	}
	if d.pending == nil {
		return false
	}
	if m := d.pending.mem; m != nil && !m.settled {
		select {
		case err := <-m.published:
			m.settled, m.err = true, err
		default:
			return false
		}
	}
	if m := d.pending.mem; m != nil && m.err != nil {
		d.log.Warn("generation handed over not published: the rollout goes on", "generation", d.pending.gen, "err", m.err)
		d.pending = nil
		return false
	}
	return true
}

// snapshot stages what the switches hold when there is no LFT file yet,
// so that OpenSM's first load of the file engine changes nothing (its
// file engine reads dump_fts output as it reads its own dumps).
func (d *Deployer) snapshot(ctx context.Context) {
	if _, err := os.Stat(d.cfg.LFTsFile); err == nil {
		return
	}
	out, err := d.run.run(ctx, "dump_fts", "-n")
	if err != nil {
		d.log.Warn("no LFT file and the switches could not be read; OpenSM's file engine has nothing to load until the first rollout", "err", err)
		return
	}
	if err := atomicfile.WriteFile(d.cfg.LFTsFile, func(w io.Writer) error { _, err := w.Write(out); return err }, 0o644); err != nil {
		d.log.Warn("cannot write the LFT file", "err", err)
	}
}
