package sm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
)

// Status is GET /status: the published generation and the daemon's state.
type Status struct {
	Published     *PublishedStatus `json:"published"`
	State         string           `json:"state"` // idle, rerouting
	LastReroute   time.Time        `json:"last_reroute"`
	LastResult    string           `json:"last_result"` // published, unchanged, failed
	LastError     string           `json:"last_error,omitempty"`
	LastTrigger   string           `json:"last_trigger"`
	Reroutes      int64            `json:"reroutes"`
	Failures      int64            `json:"failures"`
	Engine        string           `json:"engine_chain"`
	MaxVLs        int              `json:"max_vls"`
	Fabric        string           `json:"fabric"`
	Jobs          []JobStatus      `json:"jobs"`
	SLURM         string           `json:"slurm"` // disabled, ok, error: …
	StartedAt     time.Time        `json:"started_at"`
	OutputCurrent string           `json:"output_current"`
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
	pub         *publisher
	engines     []routing.Engine // the configured chain
	defaultName string
	defaultText string

	trig    chan string // reroute requests (reason); buffered 1: coalesce
	status  atomic.Pointer[Status]
	started time.Time

	// owned by the Run goroutine
	lastJobs string // job-set fingerprint of the last reroute
	// The last jobs SLURM answered with, and the hash of the fabric text
	// they were mapped on: kept through SLURM outages.
	goodJobs      []routing.Job
	goodJobStatus []JobStatus
	goodJobsHash  string
	lastGraph     *fabric.Graph // fabric of the last reroute (for job polls)
	fabricSeen    fileStamp
	mu            sync.Mutex // guards httpAddr
	httpAddr      string
}

// New validates the configuration, cleans up after a crashed publish and
// loads the published status.
func New(cfg Config, opts ...Option) (*Server, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	engines, err := routing.NewChain(cfg.Engines, cfg.Params)
	if err != nil {
		return nil, fmt.Errorf("sm: %w", err)
	}
	s := &Server{cfg: cfg, engines: engines, log: slog.New(slog.NewTextHandler(io.Discard, nil)), trig: make(chan string, 1), started: time.Now()}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if cfg.Fabric == "" && s.defaultText == "" {
		return nil, errors.New("sm: no fabric: set fabric in the configuration")
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
	}
	st := &Status{Published: cur, State: "idle", Engine: cfg.Engines, MaxVLs: cfg.MaxVLs, Fabric: s.fabricName(),
		SLURM: slurm, StartedAt: s.started, OutputCurrent: s.pub.currentPath("")}
	s.status.Store(st)
	if cur != nil {
		s.metrics.generation.Set(float64(cur.Generation))
	}
	return s, nil
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

// Trigger asks for a reroute; requests during a reroute coalesce into one.
func (s *Server) Trigger(reason string) {
	s.metrics.triggerCount.WithLabelValues(reason).Inc()
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

// Run serves HTTP, watches the fabric and the job source, and reroutes
// until ctx ends. It reroutes once at start.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("sm: listen: %w", err)
	}
	s.mu.Lock()
	s.httpAddr = ln.Addr().String()
	s.mu.Unlock()
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	s.log.Info("serving", "http", s.httpAddr, "fabric", s.fabricName(), "output", s.cfg.Output)

	fabricTick := time.NewTicker(s.cfg.FabricPoll.Duration)
	defer fabricTick.Stop()
	var slurmTick <-chan time.Time
	if s.jobs != nil && s.cfg.SLURM.Poll.Duration > 0 {
		t := time.NewTicker(s.cfg.SLURM.Poll.Duration)
		defer t.Stop()
		slurmTick = t.C
	}
	s.fabricSeen, _ = stampOf(s.cfg.Fabric)
	if s.deployer != nil {
		if cur := s.status.Load().Published; cur != nil {
			s.deployer.Publish(cur.Generation, s.pub.genDir(cur.Generation))
		}
		go func() {
			if err := s.deployer.Run(ctx, s.Trigger); err != nil {
				s.log.Error("deployer stopped", "err", err)
			}
		}()
	}
	s.Trigger("start")
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-httpErr:
			return fmt.Errorf("sm: http: %w", err)
		case reason := <-s.trig:
			s.reroute(ctx, reason)
		case <-fabricTick.C:
			if s.cfg.Fabric == "" {
				continue
			}
			if st, err := stampOf(s.cfg.Fabric); err == nil && st != s.fabricSeen {
				s.fabricSeen = st
				s.Trigger("fabric-changed")
			}
		case <-slurmTick:
			s.pollJobs(ctx)
		}
	}
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
	cur := *s.status.Load()
	f(&cur)
	s.status.Store(&cur)
}
