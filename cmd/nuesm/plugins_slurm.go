package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/slurm"
	"github.com/nuesm/nuesm/sm"
)

// slurmPlugin returns the daemon option installing the SLURM job source
// (none when SLURM is disabled). Bad settings and an unreadable host map
// fail here, at start, not at the first poll.
func slurmPlugin(cfg sm.Config) ([]sm.Option, error) {
	if !cfg.SLURM.Enabled {
		return nil, nil
	}
	src, err := newSLURMJobs(cfg.Defaults().SLURM)
	if err != nil {
		return nil, err
	}
	return []sm.Option{sm.WithJobSource(src)}, nil
}

// slurmJobs is the daemon's sm.JobSource: the running jobs of a
// slurm.Source, mapped onto the fabric's terminals by CA node description
// (and the host map file), filtered as the SAR filter did. Source errors
// are returned as they are, so the daemon counts them and keeps its last
// good tables. Safe for concurrent use.
type slurmJobs struct {
	src       slurm.Source
	filter    slurm.FilterOptions
	overrides []slurm.HostOverride

	mu sync.Mutex
	g  *fabric.Graph // the graph hm describes: polls reuse the last reroute's
	hm *slurm.HostMap
}

// newSLURMJobs builds the source from a configuration with defaults
// applied (sm.Config.Defaults).
func newSLURMJobs(c sm.SLURMConfig) (*slurmJobs, error) {
	s := &slurmJobs{filter: slurm.FilterOptions{
		MinTimeLimit:      max(c.MinTimeLimit.Duration, 0), // "off" is -1
		ExcludePartitions: c.ExcludePartitions,
		MinSwitches:       2,
	}}
	if err := s.filter.Validate(); err != nil {
		return nil, err
	}
	switch c.Source {
	case "", "squeue":
		s.src = &slurm.Squeue{Path: c.Squeue, Timeout: c.Timeout.Duration}
	case "rest":
		if c.RestToken != "" && c.RestUser == "" {
			return nil, fmt.Errorf("slurm.rest_token needs slurm.rest_user (the user the token was made for)")
		}
		s.src = &slurm.REST{URL: c.RestURL, User: c.RestUser, Token: c.RestToken, Timeout: c.Timeout.Duration}
	default:
		return nil, fmt.Errorf("slurm.source %q, expected squeue or rest", c.Source)
	}
	if c.HostMap != "" {
		o, err := slurm.LoadHostMap(c.HostMap)
		if err != nil {
			return nil, err
		}
		s.overrides = o
	}
	return s, nil
}

// Jobs implements sm.JobSource. Statuses are in the order of the jobs.
func (s *slurmJobs) Jobs(ctx context.Context, g *fabric.Graph) ([]routing.Job, []sm.JobStatus, error) {
	running, err := s.src.RunningJobs(ctx)
	if err != nil {
		return nil, nil, err
	}
	sel, err := slurm.Filter(running, s.hostMap(g), s.filter)
	if err != nil {
		return nil, nil, err
	}
	jobs, status := slurmSelected(sel)
	return jobs, status, nil
}

// hostMap returns the host map of g, built once per graph.
func (s *slurmJobs) hostMap(g *fabric.Graph) *slurm.HostMap {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.g != g {
		s.g, s.hm = g, slurm.NewHostMap(slurmEndpoints(g), s.overrides)
	}
	return s.hm
}

// slurmEndpoints describes g's terminals for package slurm: endpoint i is
// g.Terms[i], so endpoint ids are routing.Job.Terms.
func slurmEndpoints(g *fabric.Graph) []slurm.Endpoint {
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

// slurmSelected turns the filter's kept jobs into routing jobs and statuses.
func slurmSelected(sel *slurm.Selection) ([]routing.Job, []sm.JobStatus) {
	jobs := make([]routing.Job, 0, len(sel.Jobs))
	status := make([]sm.JobStatus, 0, len(sel.Jobs))
	for _, mj := range sel.Jobs {
		jobs = append(jobs, routing.Job{ID: mj.ID, Terms: mj.Endpoints})
		hosts := slices.Clone(mj.Nodes)
		slices.Sort(hosts)
		status = append(status, sm.JobStatus{ID: mj.ID, Hosts: len(slices.Compact(hosts)), Terminals: len(mj.Endpoints)})
	}
	return jobs, status
}

// routeJobs gives `nuesm route` its jobs: from a jobs file (every host
// must be on the fabric) or from SLURM's squeue (--slurm, SAR filter).
// Jobs on fewer than two switches are dropped, saying so on w.
func routeJobs(ctx context.Context, w io.Writer, g *fabric.Graph, jobsFile string, useSLURM bool, hostMap string) ([]routing.Job, error) {
	if jobsFile != "" && useSLURM {
		return nil, fmt.Errorf("give --jobs FILE or --slurm, not both")
	}
	if jobsFile == "" && !useSLURM {
		return nil, nil
	}
	var overrides []slurm.HostOverride
	if hostMap != "" {
		o, err := slurm.LoadHostMap(hostMap)
		if err != nil {
			return nil, err
		}
		overrides = o
	}
	hm := slurm.NewHostMap(slurmEndpoints(g), overrides)
	var (
		running []slurm.Job
		opt     = slurm.FilterOptions{MinSwitches: 2}
		err     error
	)
	if useSLURM {
		running, err = (&slurm.Squeue{}).RunningJobs(ctx)
		opt = slurm.DefaultFilterOptions()
	} else {
		running, err = slurm.LoadJobsFile(jobsFile)
	}
	if err != nil {
		return nil, err
	}
	sel, err := slurm.Filter(running, hm, opt)
	if err != nil {
		return nil, err
	}
	if jobsFile != "" && len(sel.UnknownHosts) > 0 {
		return nil, fmt.Errorf("jobs %s: %s not on the fabric (not the first word of any CA node description; see --host-map)",
			jobsFile, slurmHostsPhrase(sel.UnknownHosts, "host"))
	}
	if useSLURM && len(sel.UnknownHosts) > 0 {
		fmt.Fprintf(w, "note: SLURM %s not on the fabric\n", slurmHostsPhrase(sel.UnknownHosts, "host"))
	}
	for _, d := range sel.Dropped {
		fmt.Fprintf(w, "note: job %s left out: %s\n", d.ID, d.Reason)
	}
	jobs, _ := slurmSelected(sel)
	return jobs, nil
}

// slurmHostsPhrase names up to five items: "host n1", "hosts n1, n2 and 3 more".
func slurmHostsPhrase(items []string, noun string) string {
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

// sarSummary is summary.json's "sar" part.
type sarSummary struct {
	Jobs         []sarJobJSON `json:"jobs"`
	EffectiveEFI int64        `json:"effective_efi"`
	MaxJobEFI    int64        `json:"max_job_efi"`
	DarkFiberPct float64      `json:"dark_fiber_percent"`
	DarkCables   int          `json:"dark_cables"`
	Cables       int          `json:"cables"`
}

type sarJobJSON struct {
	ID           string `json:"id"`
	Terminals    int    `json:"terminals"`
	Paths        int64  `json:"paths"`
	EffectiveEFI int64  `json:"effective_efi"`
}

func newSARSummary(m *sar.Metrics) *sarSummary {
	s := &sarSummary{EffectiveEFI: m.EffectiveEFI, MaxJobEFI: m.MaxJobEFI, DarkFiberPct: m.DarkFiber,
		DarkCables: m.DarkCables, Cables: m.Cables, Jobs: []sarJobJSON{}}
	for _, j := range m.Jobs {
		s.Jobs = append(s.Jobs, sarJobJSON{ID: j.ID, Terminals: j.Terminals, Paths: j.Paths, EffectiveEFI: j.EffectiveEFI})
	}
	return s
}

// printSAR prints the SAR metrics of a routing for its jobs.
func printSAR(w io.Writer, m *sar.Metrics) {
	fmt.Fprintf(w, "SAR: %d jobs, effective EFI %d (largest of one job %d), dark fiber %.1f%% (%d of %d cables)\n",
		len(m.Jobs), m.EffectiveEFI, m.MaxJobEFI, m.DarkFiber, m.DarkCables, m.Cables)
	for _, j := range m.Jobs {
		fmt.Fprintf(w, "  job %-12s %4d terminals  effective EFI %d\n", j.ID, j.Terminals, j.EffectiveEFI)
	}
}
