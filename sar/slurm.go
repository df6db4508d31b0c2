package sar

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/slurm"
)

// This file maps SLURM's running jobs onto a fabric's terminals: the jobs
// SAR routes for (seed 001 §3). Package slurm knows hosts and hostlists
// only; the mapping onto fabric.Graph terminals is here.

// Endpoints describes g's terminals for package slurm: endpoint i is
// g.Terms[i], so endpoint ids are routing.Job.Terms.
func Endpoints(g *fabric.Graph) []slurm.Endpoint {
	eps := make([]slurm.Endpoint, len(g.Terms))
	for i, tm := range g.Terms {
		n := g.F.Node(tm.Node)
		var pg uint64
		if int(tm.Port) < len(n.Ports) {
			pg = n.Ports[tm.Port].GUID
		}
		eps[i] = slurm.Endpoint{Desc: n.Desc, NodeGUID: n.GUID, PortGUID: pg, Switch: tm.Switch}
	}
	return eps
}

// SelectedJob is a job the filter kept, as SAR routes it.
type SelectedJob struct {
	routing.Job
	Hosts int // distinct hosts of the job on the fabric and off it
}

// Selected turns the filter's kept jobs into routing jobs, in order.
func Selected(sel *slurm.Selection) []SelectedJob {
	out := make([]SelectedJob, 0, len(sel.Jobs))
	for _, mj := range sel.Jobs {
		hosts := slices.Clone(mj.Nodes)
		slices.Sort(hosts)
		out = append(out, SelectedJob{Job: routing.Job{ID: mj.ID, Terms: mj.Endpoints}, Hosts: len(slices.Compact(hosts))})
	}
	return out
}

// Jobs returns the routing jobs of selected jobs.
func Jobs(sel []SelectedJob) []routing.Job {
	jobs := make([]routing.Job, len(sel))
	for i, s := range sel {
		jobs[i] = s.Job
	}
	return jobs
}

// SLURMJobs maps the running jobs of a slurm.Source onto a fabric's
// terminals by CA node description (and the host overrides), filtered by
// Filter. Source errors are returned as they are. Safe for concurrent
// use.
type SLURMJobs struct {
	Source    slurm.Source
	Filter    slurm.FilterOptions
	Overrides []slurm.HostOverride

	mu sync.Mutex
	g  *fabric.Graph // the graph hm describes: polls reuse the last one's
	hm *slurm.HostMap
}

// Jobs asks the source and returns the jobs kept on g, in the source's
// order.
func (s *SLURMJobs) Jobs(ctx context.Context, g *fabric.Graph) ([]SelectedJob, error) {
	running, err := s.Source.RunningJobs(ctx)
	if err != nil {
		return nil, err
	}
	return s.Select(running, g)
}

// Select returns the jobs of running (an answer of the source) kept on
// g: the mapping alone, without asking the source.
func (s *SLURMJobs) Select(running []slurm.Job, g *fabric.Graph) ([]SelectedJob, error) {
	sel, err := s.Selection(running, g)
	if err != nil {
		return nil, err
	}
	return Selected(sel), nil
}

// Selection returns the filter's whole answer for running on g: the
// jobs kept, those dropped and why, and the hosts not on g.
func (s *SLURMJobs) Selection(running []slurm.Job, g *fabric.Graph) (*slurm.Selection, error) {
	return slurm.Filter(running, s.hostMap(g), s.Filter)
}

// hostMap returns the host map of g, built once per graph.
func (s *SLURMJobs) hostMap(g *fabric.Graph) *slurm.HostMap {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.g != g {
		s.g, s.hm = g, slurm.NewHostMap(Endpoints(g), s.Overrides)
	}
	return s.hm
}

// JobsRequest says where nuesm route takes its jobs from: a jobs file
// (every host must be on the fabric) or squeue (the SAR filter).
type JobsRequest struct {
	File    string // a jobs file of "jobid hostlist" lines
	SLURM   bool   // ask squeue
	HostMap string // a file overriding the host -> CA mapping
}

// LoadJobs returns the jobs a request names on g (nil when it names
// none), and notes on what was left out: jobs on fewer than two
// switches, SLURM hosts not on the fabric.
func LoadJobs(ctx context.Context, g *fabric.Graph, req JobsRequest) ([]routing.Job, []string, error) {
	if req.File != "" && req.SLURM {
		return nil, nil, fmt.Errorf("give --jobs FILE or --slurm, not both")
	}
	if req.File == "" && !req.SLURM {
		return nil, nil, nil
	}
	var overrides []slurm.HostOverride
	if req.HostMap != "" {
		o, err := slurm.LoadHostMap(req.HostMap)
		if err != nil {
			return nil, nil, err
		}
		overrides = o
	}
	var (
		running []slurm.Job
		opt     = slurm.FilterOptions{MinSwitches: 2}
		err     error
	)
	if req.SLURM {
		running, err = (&slurm.Squeue{}).RunningJobs(ctx)
		opt = slurm.DefaultFilterOptions()
	} else {
		running, err = slurm.LoadJobsFile(req.File)
	}
	if err != nil {
		return nil, nil, err
	}
	sel, err := slurm.Filter(running, slurm.NewHostMap(Endpoints(g), overrides), opt)
	if err != nil {
		return nil, nil, err
	}
	if len(sel.UnknownHosts) > 0 && !req.SLURM {
		return nil, nil, unknownHostError(req.File, running, sel.UnknownHosts)
	}
	return jobsAndNotes(sel)
}

// unknownHostError names the first line of a jobs file with a host not
// on the fabric, and that line's unknown hosts.
func unknownHostError(file string, jobs []slurm.Job, unknown []string) error {
	for _, j := range jobs {
		var bad []string
		for _, h := range j.Nodes {
			if _, found := slices.BinarySearch(unknown, h); found && !slices.Contains(bad, h) {
				bad = append(bad, h)
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("jobs %s:%d: job %s: %s not on the fabric (not the first word of any CA node description; see --host-map)",
				file, j.Line, j.ID, hostsPhrase(bad, "host"))
		}
	}
	return fmt.Errorf("jobs %s: %s not on the fabric", file, hostsPhrase(unknown, "host"))
}

// jobsAndNotes notes the hosts of SLURM not on the fabric and the
// dropped jobs.
func jobsAndNotes(sel *slurm.Selection) ([]routing.Job, []string, error) {
	var notes []string
	if len(sel.UnknownHosts) > 0 {
		notes = append(notes, fmt.Sprintf("SLURM %s not on the fabric", hostsPhrase(sel.UnknownHosts, "host")))
	}
	for _, d := range sel.Dropped {
		notes = append(notes, fmt.Sprintf("job %s left out: %s", d.ID, d.Reason))
	}
	return Jobs(Selected(sel)), notes, nil
}

// hostsPhrase names up to five items: "host n1", "hosts n1, n2 and 3 more".
func hostsPhrase(items []string, noun string) string {
	if len(items) == 1 {
		return noun + " " + items[0]
	}
	shown := items[:min(len(items), 5)]
	s := noun + "s " + strings.Join(shown, ", ")
	if len(items) > len(shown) {
		s += fmt.Sprintf(" and %d more", len(items)-len(shown))
	}
	return s
}
