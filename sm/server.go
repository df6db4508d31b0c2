package sm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/routing"
)

// Status is GET /status: the published generation and the daemon's state.
type Status struct {
	Published   *PublishedStatus `json:"published"`
	State       string           `json:"state"` // idle, rerouting
	LastReroute time.Time        `json:"last_reroute"`
	LastResult  string           `json:"last_result"` // published, unchanged, failed
	LastError   string           `json:"last_error,omitempty"`
	LastTrigger string           `json:"last_trigger"`
	Reroutes    int64            `json:"reroutes"`
	Failures    int64            `json:"failures"`
	// Problems are why /healthz fails besides "nothing published": a
	// reroute past its deadline, a missing dump or output directory,
	// published files changed after publishing.
	Problems      []string    `json:"problems,omitempty"`
	Engine        string      `json:"engine_chain"`
	MaxVLs        int         `json:"max_vls"`
	Fabric        string      `json:"fabric"`
	Jobs          []JobStatus `json:"jobs"`
	SLURM         string      `json:"slurm"` // disabled, ok, error: …
	SLURMAnswered time.Time   `json:"slurm_answered,omitzero"`
	// SLURMUnknownHosts are hosts of running jobs not on the fabric
	// (the first 20, sorted; nuesm_slurm_unknown_hosts counts them).
	SLURMUnknownHosts []string  `json:"slurm_unknown_hosts,omitempty"`
	StartedAt         time.Time `json:"started_at"`
	OutputCurrent     string    `json:"output_current"`
	// Deploy is the deployer's state (rollout to the switches), when one
	// is configured.
	Deploy any `json:"deploy,omitempty"`
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithMetrics sets the metrics (default: a private registry nobody serves).
func WithMetrics(m *Metrics) Option { return func(s *Server) { s.metrics = m } }

// WithPlanner sets the update planner (default: none; plan.json then
// says no plan was computed).
func WithPlanner(p Planner) Option { return func(s *Server) { s.planner = p } }

// WithJobSource sets the SLURM job source (default: none).
func WithJobSource(j JobSource) Option { return func(s *Server) { s.jobs = j } }

// WithDeployer sets the deployer that rolls each published generation
// out to the switches (default: none; tables stay files).
func WithDeployer(d Deployer) Option { return func(s *Server) { s.deployer = d } }

// WithHTTPLimits sets the HTTP server's timeouts and size limits (zero
// fields: DefaultHTTPLimits).
func WithHTTPLimits(l HTTPLimits) Option { return func(s *Server) { s.limits = l } }

// WithDefaultFabric supplies the dump to route when Config.Fabric is
// empty (the embedded default fabric).
func WithDefaultFabric(name, text string) Option {
	return func(s *Server) { s.defaultName, s.defaultText = name, text }
}

// Server is the daemon. Create it with New, then Run it.
type Server struct {
	cfg         Config
	log         *slog.Logger
	metrics     *Metrics
	planner     Planner
	jobs        JobSource
	deployer    Deployer
	poller      *jobPoller // asks jobs, off the reroute path (nil without jobs)
	pub         *publisher
	engines     []routing.Engine // the configured chain
	token       string           // Config.Token or the contents of Config.TokenFile
	limits      HTTPLimits
	defaultName string
	defaultText string

	trig     chan string // reroute requests (reason); buffered 1: coalesce
	statusMu sync.Mutex  // serialises status updates
	status   atomic.Pointer[Status]
	problems map[string]string // by source; guarded by statusMu
	started  time.Time

	// publishBackoff is the wait before the next publish retry (the
	// reroute goroutine's: reroutes run one at a time).
	publishBackoff time.Duration

	// The fabric of the last reroute and the fingerprint of the jobs it
	// routed for: the job poller compares new answers with them.
	lastGraph atomic.Pointer[fabric.Graph]
	lastJobs  atomic.Pointer[string]
	// The verifier's State of the published tables (nil: none kept), from
	// which a repair of them is verified incrementally.
	verified atomic.Pointer[cdg.State]
	// The fabric of the published tables (nil after a restart, until the
	// first reroute publishes or keeps tables; publishedGraph then reads
	// the published dump's): a fabric within it keeps tables that need no
	// change.
	pubGraph atomic.Pointer[fabric.Graph]
	// The SHA-256 of the dump text the last reroute published or kept
	// tables for (pubGraph's text).
	pubText atomic.Pointer[string]
	// The last full routing published for no job, which a returned cable
	// or switch is repaired from (nil: none).
	base atomic.Pointer[baseRouting]
	// The published generation's dump (publishedDump; nil: not read yet).
	pubDump atomic.Pointer[publishedDump]

	// Why the published generation New found is damaged (nil: intact):
	// it is not handed to the deployer.
	damaged error

	// owned by the Run goroutine
	fabricSeen fileStamp
	// phases times the running reroute's phases for its log line (one
	// reroute runs at a time; written by its goroutine only).
	phases []string
	// routedJobs is how many jobs the running reroute routes for.
	routedJobs int

	mu       sync.Mutex // guards httpAddr
	httpAddr string
}

// chainError names the setting a bad engine chain comes from: engines
// itself, or else the file's [params] (the entry's line when it has one
// entry; the error names the parameter).
func chainError(cfg Config, err error) error {
	_, plain := routing.NewChain(cfg.Engines, nil)
	switch {
	case plain != nil && cfg.from != nil && cfg.from.lines["engines"] > 0:
		return cfg.settingError("engines", err)
	case plain == nil && len(cfg.Params) > 0 && cfg.from != nil:
		line := 0
		for k := range cfg.Params {
			if cfg.from.lines["params."+k] == 0 {
				return fmt.Errorf("sm: %w", err) // a --param among them
			}
			if len(cfg.Params) == 1 {
				line = cfg.from.lines["params."+k]
			}
		}
		return &SettingError{Key: "params", File: cfg.from.file, Line: line, Err: err}
	}
	return fmt.Errorf("sm: %w", err)
}

// New validates the configuration and the engine chain, cleans up after
// a crashed publish and loads the published status.
func New(cfg Config, opts ...Option) (*Server, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	engines, err := routing.NewChain(cfg.Engines, cfg.Params)
	if err != nil {
		return nil, chainError(cfg, err)
	}
	s := &Server{cfg: cfg, engines: engines, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		trig: make(chan string, 1), started: time.Now(), problems: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	s.limits = s.limits.withDefaults()
	if cfg.Fabric == "" && s.defaultText == "" {
		return nil, errors.New("sm: no fabric: set fabric in the configuration")
	}
	if s.token, err = readToken(cfg); err != nil {
		return nil, err
	}
	s.pub = &publisher{dir: cfg.Output, keep: cfg.Keep}
	if err := s.pub.cleanup(); err != nil {
		return nil, fmt.Errorf("sm: output %s: %w", cfg.Output, err)
	}
	cur, err := s.pub.current()
	if err != nil {
		// A damaged status must not stop the daemon: the next reroute
		// publishes a new generation.
		s.log.Warn("published status unreadable", "err", err)
	}
	slurm := "disabled"
	if s.jobs != nil {
		slurm = "not queried yet"
		s.poller = newJobPoller(s.jobs, cfg.SLURM, s.jobsAnswered)
	}
	st := &Status{Published: cur, State: "idle", Engine: cfg.Engines, MaxVLs: cfg.MaxVLs, Fabric: s.fabricName(),
		SLURM: slurm, StartedAt: s.started, OutputCurrent: s.pub.currentPath("")}
	s.status.Store(st)
	if cur != nil {
		s.metrics.generation.Set(float64(cur.Generation))
		if s.damaged = s.pub.check(cur.Generation); s.damaged != nil {
			s.log.Warn("published generation damaged; a reroute publishes afresh", "generation", cur.Generation, "err", s.damaged)
			// A problem from the start, in watch's words (so that its
			// first idle check does not trigger again), not only
			// after the first reroute, which may be long.
			s.setProblem("output", s.damaged.Error())
		}
	}
	return s, nil
}

// readToken returns the token for POST /reroute: Config.Token, or the
// first line of Config.TokenFile.
func readToken(cfg Config) (string, error) {
	if cfg.TokenFile == "" {
		return cfg.Token, nil
	}
	b, err := os.ReadFile(cfg.TokenFile)
	if err != nil {
		return "", fmt.Errorf("sm: token_file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", fmt.Errorf("sm: token_file %s is empty", cfg.TokenFile)
	}
	return tok, nil
}

func (s *Server) fabricName() string {
	if s.cfg.Fabric != "" {
		return s.cfg.Fabric
	}
	return s.defaultName
}

// Status returns the current status snapshot (safe for concurrent use).
func (s *Server) Status() Status {
	st := *s.status.Load()
	if s.deployer != nil {
		st.Deploy = s.deployer.Status()
	}
	return st
}

// Trigger asks for a reroute now; requests during a reroute coalesce
// into one. With a job source the jobs are asked again too: a change
// triggers one more reroute.
func (s *Server) Trigger(reason string) {
	s.metrics.countTrigger(reason)
	s.queue(reason)
	if s.poller != nil {
		s.poller.poke("")
	}
}

// request is a reroute asked for over HTTP: with a job source, the
// reroute waits for SLURM's answer (at most slurm.timeout), so that it
// routes for the jobs the hooks announce; never for the fabric's sake.
func (s *Server) request(reason string) {
	if s.poller == nil {
		s.Trigger(reason)
		return
	}
	s.metrics.countTrigger(reason)
	s.poller.poke(reason)
}

// queue queues a reroute without counting it.
func (s *Server) queue(reason string) {
	select {
	case s.trig <- reason:
	default: // one is pending already
	}
}

// Addr returns the HTTP listen address once Run has bound it.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpAddr
}

// Run serves HTTP, watches the fabric, the published files and the job
// source, and reroutes until ctx ends. It reroutes once at start (with a
// job source, once SLURM answered or its query timed out).
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("sm: listen: %w", err)
	}
	s.mu.Lock()
	s.httpAddr = ln.Addr().String()
	s.mu.Unlock()
	srv := s.httpServer()
	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	s.log.Info("serving", "http", s.httpAddr, "fabric", s.fabricName(), "output", s.cfg.Output)
	s.fabricSeen, _ = stampOf(s.cfg.Fabric)
	if s.deployer != nil {
		if cur := s.status.Load().Published; cur != nil && s.damaged == nil {
			s.deployer.Publish(cur.Generation, s.pub.genDir(cur.Generation))
		}
		go func() {
			if err := s.deployer.Run(ctx, s.Trigger); err != nil {
				s.log.Error("deployer stopped", "err", err)
			}
		}()
	}
	switch {
	case s.awaitsDiscovery():
		// Not a failed reroute: the discovery's trigger routes it.
		s.log.Info("no fabric dump yet: routing once the deployer's discovery writes it", "fabric", s.cfg.Fabric)
		if s.poller != nil {
			go s.poller.run(ctx)
		}
	case s.poller != nil:
		go s.poller.run(ctx)
		s.metrics.countTrigger("start")
		s.poller.poke("start")
	default:
		s.Trigger("start")
	}
	return s.loop(ctx, httpErr)
}

// awaitsDiscovery reports whether the dump does not exist yet and the
// deployer's discovery writes it.
func (s *Server) awaitsDiscovery() bool {
	if s.deployer == nil || !s.cfg.DiscoveryWritesFabric() {
		return false
	}
	_, err := os.Stat(s.cfg.Fabric)
	return errors.Is(err, fs.ErrNotExist)
}

// inflight is a reroute running in its own goroutine.
type inflight struct {
	done     chan struct{}
	deadline *time.Timer
	reason   string
	started  time.Time
	retry    time.Duration // a failed publication's retry wait; read after done
}

// loop runs reroutes one at a time, each in a goroutine of its own under
// its deadline, and watches between them. A reroute never blocks the
// loop: shutdown, health checks and fabric watching go on.
func (s *Server) loop(ctx context.Context, httpErr <-chan error) error {
	tick := time.NewTicker(s.cfg.FabricPoll.Duration)
	defer tick.Stop()
	var run *inflight
	var retry <-chan time.Time // a publish retry, armed while idle
	for {
		var trig <-chan string
		var done <-chan struct{}
		var overdue <-chan time.Time
		if run == nil {
			trig = s.trig
		} else {
			done, overdue = run.done, run.deadline.C
		}
		select {
		case <-ctx.Done():
			s.awaitShutdown(run)
			return nil
		case err := <-httpErr:
			return fmt.Errorf("sm: http: %w", err)
		case reason := <-trig:
			retry = nil // this reroute publishes or schedules its own retry
			run = s.startReroute(ctx, reason)
		case <-done:
			run.deadline.Stop()
			if run.retry > 0 {
				retry = time.After(run.retry)
			}
			run = nil
			s.setProblem("reroute", "")
		case <-retry:
			retry = nil
			s.Trigger("publish-retry")
		case <-overdue:
			msg := fmt.Sprintf("reroute (trigger %s) running past its deadline of %s since %s", run.reason,
				s.cfg.RerouteTimeout.Duration, run.started.Format(time.RFC3339))
			s.log.Error(msg)
			s.setProblem("reroute", msg)
		case <-tick.C:
			s.watch(run == nil)
		}
	}
}

// startReroute runs a reroute in a goroutine under the reroute deadline.
func (s *Server) startReroute(ctx context.Context, reason string) *inflight {
	// The reroute reads the dump as it is now or newer: a change the
	// watch has not seen yet (discovery writes the dump, then triggers)
	// needs no reroute of its own.
	if s.cfg.Fabric != "" {
		if st, err := stampOf(s.cfg.Fabric); err == nil {
			s.fabricSeen = st
		}
	}
	d := s.cfg.RerouteTimeout.Duration
	rctx, cancel := context.WithTimeout(ctx, d)
	run := &inflight{done: make(chan struct{}), deadline: time.NewTimer(d), reason: reason, started: time.Now()}
	go func() {
		defer close(run.done)
		defer cancel()
		run.retry = s.reroute(rctx, reason)
	}()
	return run
}

// shutdownGrace is how long shutdown waits for a cancelled reroute.
const shutdownGrace = 2 * time.Second

// awaitShutdown gives a cancelled reroute a moment to end, so that it
// does not write after Run returned; one that ignores cancellation is
// left behind (the process is ending).
func (s *Server) awaitShutdown(run *inflight) {
	if run == nil {
		return
	}
	select {
	case <-run.done:
	case <-time.After(shutdownGrace):
		s.log.Warn("reroute still running at shutdown", "trigger", run.reason)
	}
}

// watch checks the dump (a change triggers a reroute; a missing dump is a
// problem) and, between reroutes (idle), the published files: a missing
// output directory or "current", or a changed file, is a problem and
// triggers a reroute that publishes afresh.
func (s *Server) watch(idle bool) {
	if s.cfg.Fabric != "" {
		st, err := stampOf(s.cfg.Fabric)
		switch {
		case err != nil:
			s.setProblem("fabric", fmt.Sprintf("fabric dump %s: %v", s.cfg.Fabric, errors.Unwrap(err)))
		case st != s.fabricSeen:
			s.setProblem("fabric", "")
			s.fabricSeen = st
			s.Trigger("fabric-changed")
		default:
			s.setProblem("fabric", "")
		}
	}
	if !idle {
		return
	}
	gen := 0
	if p := s.Status().Published; p != nil {
		gen = p.Generation
	}
	err := s.pub.check(gen)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if s.setProblem("output", msg) && err != nil {
		s.log.Error("published tables damaged; publishing afresh", "err", err)
		s.Trigger("output-repair")
	}
}

// setProblem sets (msg non-empty) or clears the problem of a source and
// reports whether it changed.
func (s *Server) setProblem(source, msg string) bool {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if s.problems[source] == msg {
		return false
	}
	if msg == "" {
		delete(s.problems, source)
	} else {
		s.problems[source] = msg
	}
	var list []string
	for _, k := range slices.Sorted(maps.Keys(s.problems)) {
		list = append(list, s.problems[k])
	}
	cur := *s.status.Load()
	cur.Problems = list
	s.status.Store(&cur)
	return true
}

// fileStamp identifies a version of a file cheaply.
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func stampOf(path string) (fileStamp, error) {
	if path == "" {
		return fileStamp{}, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi)}, nil
}

func (s *Server) setStatus(f func(*Status)) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	cur := *s.status.Load()
	f(&cur)
	s.status.Store(&cur)
}

// httpServer is the HTTP server with the configured limits.
func (s *Server) httpServer() *http.Server {
	l := s.limits
	return &http.Server{Handler: s.handler(), ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read,
		WriteTimeout: l.Write, IdleTimeout: l.Idle, MaxHeaderBytes: l.MaxHeaderBytes}
}

// DryRunResult is what a dry run loaded.
type DryRunResult struct {
	Fabric       string
	Switches     int
	Terminals    int
	AssignedLIDs int // endpoints the dump gives no LID
	Engines      []string
}

// DryRun does what a reroute does before routing, routing nothing: it
// reads the dump (within max_dump_bytes), parses and loads it and checks
// the routing options; New already built the engine chain with its
// parameters. It fails where the first reroute would fail before routing.
func (s *Server) DryRun() (*DryRunResult, error) {
	text, name, err := s.readFabric()
	if err != nil {
		return nil, err
	}
	l, err := ibnetdiscover.Load(text, name)
	if err != nil {
		return nil, err
	}
	if err := (routing.Options{MaxVLs: s.cfg.MaxVLs, Seed: s.cfg.Seed}).Validate(); err != nil {
		return nil, err
	}
	res := &DryRunResult{Fabric: name, Switches: l.Graph.NumSwitches(), Terminals: len(l.Graph.Terms), AssignedLIDs: l.AssignedLIDs}
	for _, e := range s.engines {
		res.Engines = append(res.Engines, e.Name())
	}
	return res, nil
}
