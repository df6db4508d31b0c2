package sm

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/slurm"
)

// NewSLURMJobs returns the JobSource a SLURM configuration describes
// (Config.Defaults applied): squeue or slurmrestd, the SAR filter
// (min_time_limit, exclude_partitions, two switches or more) and the host
// map. Bad settings and an unreadable host map fail here, at start, not
// at the first poll.
func NewSLURMJobs(c SLURMConfig) (JobSource, error) {
	s := &slurmJobs{sar.SLURMJobs{Filter: slurm.FilterOptions{
		MinTimeLimit:      max(c.MinTimeLimit.Duration, 0), // "off" is -1
		ExcludePartitions: c.ExcludePartitions,
		MinSwitches:       2,
	}}}
	if err := s.Filter.Validate(); err != nil {
		return nil, err
	}
	switch c.Source {
	case "", "squeue":
		s.Source = &slurm.Squeue{Path: c.Squeue, Timeout: c.Timeout.Duration, MaxBytes: c.MaxAnswerBytes}
	case "rest":
		if c.RestToken != "" && c.RestUser == "" {
			return nil, fmt.Errorf("slurm.rest_token needs slurm.rest_user (the user the token was made for)")
		}
		s.Source = &slurm.REST{URL: c.RestURL, User: c.RestUser, Token: c.RestToken, Timeout: c.Timeout.Duration,
			AllowHTTPToken: c.RestAllowHTTPToken, MaxBytes: c.MaxAnswerBytes}
	default:
		return nil, fmt.Errorf("slurm.source %q, expected squeue or rest", c.Source)
	}
	if c.HostMap != "" {
		o, err := slurm.LoadHostMap(c.HostMap)
		if err != nil {
			return nil, err
		}
		s.Overrides = o
	}
	return s, nil
}

// slurmJobs is the daemon's JobSource over sar.SLURMJobs. Source errors
// are returned as they are, so the daemon counts them and keeps its last
// good answer.
type slurmJobs struct{ sar.SLURMJobs }

// Fetch implements JobSource.
func (s *slurmJobs) Fetch(ctx context.Context) (JobSet, error) {
	running, err := s.Source.RunningJobs(ctx)
	if err != nil {
		return nil, err
	}
	return slurmAnswer{s: s, running: running}, nil
}

// slurmAnswer is one answer of SLURM: the running jobs by host.
type slurmAnswer struct {
	s       *slurmJobs
	running []slurm.Job
}

// Map implements JobSet. Statuses are in the order of the jobs.
func (a slurmAnswer) Map(g *fabric.Graph) ([]routing.Job, []JobStatus, error) {
	sel, err := a.s.Select(a.running, g)
	if err != nil {
		return nil, nil, err
	}
	status := make([]JobStatus, len(sel))
	for i, j := range sel {
		status[i] = JobStatus{ID: j.ID, Hosts: j.Hosts, Terminals: len(j.Terms)}
	}
	return sar.Jobs(sel), status, nil
}

// UnknownHosts returns the hosts of the running jobs that are not on g
// (by node description or host map), sorted.
func (a slurmAnswer) UnknownHosts(g *fabric.Graph) []string {
	sel, err := a.s.Selection(a.running, g)
	if err != nil {
		return nil // Map reports it
	}
	return sel.UnknownHosts
}

// LeftOut reports whether job id is running and left out on g by the
// filter, and why (slurm.DropReason).
func (a slurmAnswer) LeftOut(g *fabric.Graph, id string) (string, bool) {
	sel, err := a.s.Selection(a.running, g)
	if err != nil {
		return "", false
	}
	for _, d := range sel.Dropped {
		if d.ID == id {
			return string(d.Reason), true
		}
	}
	return "", false
}
