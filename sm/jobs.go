package sm

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
)

// jobPoller asks the job source in a goroutine of its own, every poll
// interval and when poked, each query under slurm.timeout, and keeps the
// last good answer. Reroutes take that answer and never wait for SLURM:
// a hung squeue delays no fabric change.
type jobPoller struct {
	src      JobSource
	interval time.Duration // <= 0: only when poked
	timeout  time.Duration
	pokes    chan string // reasons to reroute after the answer ("" : none)
	// answered is called after each query with the reasons poked for it
	// and the query's error.
	answered func(reasons []string, err error)

	mu   sync.Mutex
	last JobSet // the last good answer (nil: none yet)
}

func newJobPoller(src JobSource, c SLURMConfig, answered func([]string, error)) *jobPoller {
	return &jobPoller{src: src, interval: c.Poll.Duration, timeout: c.Timeout.Duration,
		pokes: make(chan string, 16), answered: answered}
}

// poke asks for a query; reason, when not empty, is rerouted for after it.
func (p *jobPoller) poke(reason string) {
	select {
	case p.pokes <- reason:
	default: // queries are pending: one of them answers this too
	}
}

// answer returns the last good answer (nil: none yet).
func (p *jobPoller) answer() JobSet {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// run queries until ctx ends.
func (p *jobPoller) run(ctx context.Context) {
	var tick <-chan time.Time
	if p.interval > 0 {
		t := time.NewTicker(p.interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		var reasons []string
		select {
		case <-ctx.Done():
			return
		case r := <-p.pokes:
			reasons = p.drain(r)
		case <-tick:
		}
		qctx, cancel := context.WithTimeout(ctx, p.timeout)
		set, err := p.src.Fetch(qctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			p.mu.Lock()
			p.last = set
			p.mu.Unlock()
		}
		p.answered(reasons, err)
	}
}

// drain collects the reasons of every pending poke.
func (p *jobPoller) drain(first string) []string {
	var reasons []string
	add := func(r string) {
		if r != "" {
			reasons = append(reasons, r)
		}
	}
	add(first)
	for {
		select {
		case r := <-p.pokes:
			add(r)
		default:
			return reasons
		}
	}
}

// jobsAnswered records a query of the job source: the SLURM status, and
// the reroutes to run: the poked reasons, or "slurm-jobs-changed" when
// the jobs on the last routed fabric differ from those it was routed for.
func (s *Server) jobsAnswered(reasons []string, err error) {
	if err != nil {
		s.metrics.slurmErrors.Inc()
		s.setStatus(func(st *Status) { st.SLURM = "error: " + err.Error() })
		s.log.Warn("SLURM query failed; reroutes keep the last known jobs", "err", err)
	} else {
		now := time.Now()
		s.setStatus(func(st *Status) { st.SLURM, st.SLURMAnswered = "ok", now })
	}
	for _, r := range reasons {
		s.queue(r)
	}
	if len(reasons) == 0 && err == nil && s.jobsChanged() {
		// Not Trigger: it would ask SLURM again, and again while the
		// reroute runs.
		s.metrics.countTrigger("slurm-jobs-changed")
		s.queue("slurm-jobs-changed")
	}
}

// jobsChanged reports whether the last answer maps to other jobs on the
// last routed fabric than the jobs it was routed for.
func (s *Server) jobsChanged() bool {
	g, last := s.lastGraph.Load(), s.lastJobs.Load()
	if g == nil || last == nil {
		return false // nothing routed yet: the first reroute takes the answer
	}
	jobs, _, err := s.poller.answer().Map(g)
	return err == nil && jobFingerprint(jobs) != *last
}

// currentJobs returns the last answer of the job source mapped onto g
// (phase "jobs"): none without a source or before its first answer. It
// never waits for the source.
func (s *Server) currentJobs(g *fabric.Graph) ([]routing.Job, []JobStatus) {
	var jobs []routing.Job
	var jobStatus []JobStatus
	if s.poller != nil {
		jobStatus = []JobStatus{} // routed without jobs unless an answer maps
		_ = s.phase("jobs", func() error {
			set := s.poller.answer()
			if set == nil {
				return nil
			}
			j, js, err := set.Map(g)
			if err != nil {
				s.log.Warn("SLURM jobs do not map onto the fabric; routing without them", "err", err)
				return err
			}
			jobs, jobStatus = j, js
			if jobStatus == nil {
				jobStatus = []JobStatus{}
			}
			s.noteUnknownHosts(set, g)
			return nil
		})
	}
	fp := jobFingerprint(jobs)
	s.lastJobs.Store(&fp)
	s.metrics.jobs.Set(float64(len(jobs)))
	return jobs, jobStatus
}

// maxUnknownHostsShown bounds the hosts /status lists (the gauge counts
// them all).
const maxUnknownHostsShown = 20

// noteUnknownHosts puts the hosts of SLURM's running jobs that are not on
// g into /status and nuesm_slurm_unknown_hosts, and logs them when they
// change: a job on them is routed as if they were idle (or left out), and
// the operator needs to see why.
func (s *Server) noteUnknownHosts(set JobSet, g *fabric.Graph) {
	u, ok := set.(interface{ UnknownHosts(*fabric.Graph) []string })
	if !ok {
		return
	}
	hosts := u.UnknownHosts(g)
	s.metrics.unknownHosts.Set(float64(len(hosts)))
	var shown []string // nil when none: omitted from /status
	if len(hosts) > 0 {
		shown = hosts[:min(len(hosts), maxUnknownHostsShown)]
	}
	changed := false
	s.setStatus(func(st *Status) {
		changed = !slices.Equal(st.SLURMUnknownHosts, shown)
		st.SLURMUnknownHosts = slices.Clone(shown)
	})
	if changed && len(hosts) > 0 {
		s.log.Warn("SLURM jobs run on hosts not on the fabric (not the first word of any CA node description; see slurm.host_map)",
			"hosts", len(hosts), "first", shown)
	}
}
