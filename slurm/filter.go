package slurm

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// DefaultMinTimeLimit is the SAR filter's lower bound on a job's time
// limit: rerouting for a job that ends within minutes does not pay.
const DefaultMinTimeLimit = 10 * time.Minute

// DefaultExcludePartitions returns the SAR filter's excluded partitions:
// every partition whose name contains "debug".
func DefaultExcludePartitions() []string { return []string{"*debug*"} }

// FilterOptions configure Filter. The zero value keeps every running job
// on at least two switches; DefaultFilterOptions gives the SAR filter's
// settings (seed 001 §3).
type FilterOptions struct {
	// MinTimeLimit drops jobs whose time limit is known and shorter.
	// 0 keeps all; jobs without a known limit (Job.TimeLimit == 0) and
	// unlimited ones are always kept.
	MinTimeLimit time.Duration
	// ExcludePartitions drops jobs in a partition matching one of these
	// patterns: path.Match syntax ("debug", "*debug*", "test?"), compared
	// case-insensitively. A job listing several partitions is dropped if
	// any matches.
	ExcludePartitions []string
	// MinSwitches is the number of distinct switches a job's endpoints
	// must be attached to (0 means 2: multi-switch jobs).
	MinSwitches int
}

// DefaultFilterOptions returns the SAR filter's settings: jobs shorter
// than 10 minutes and partitions named like "debug" are excluded; jobs
// must span two switches.
func DefaultFilterOptions() FilterOptions {
	return FilterOptions{
		MinTimeLimit:      DefaultMinTimeLimit,
		ExcludePartitions: DefaultExcludePartitions(),
		MinSwitches:       2,
	}
}

// Validate rejects negative values and malformed patterns.
func (o FilterOptions) Validate() error {
	var errs []error
	if o.MinTimeLimit < 0 {
		errs = append(errs, fmt.Errorf("slurm filter: min time limit %v, expected >= 0", o.MinTimeLimit))
	}
	if o.MinSwitches < 0 {
		errs = append(errs, fmt.Errorf("slurm filter: min switches %d, expected >= 0", o.MinSwitches))
	}
	for _, p := range o.ExcludePartitions {
		if _, err := path.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("slurm filter: partition pattern %q: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// DropReason says why Filter dropped a job.
type DropReason string

// The reasons, in the order Filter checks them.
const (
	DropNotRunning DropReason = "not running"
	DropPartition  DropReason = "excluded partition"
	DropShort      DropReason = "time limit below the minimum"
	DropOffFabric  DropReason = "no host on the fabric"
	DropSwitches   DropReason = "too few switches"
)

// Dropped is a job Filter did not keep, and why.
type Dropped struct {
	ID     string
	Reason DropReason
}

// MappedJob is a job Filter kept, with its place on the fabric.
type MappedJob struct {
	Job
	// Endpoints are the endpoint ids of its hosts, sorted and unique.
	Endpoints []int32
	// Switches are the distinct switches those endpoints hang off, sorted.
	Switches []int32
	// Unknown are its hosts the HostMap does not know, in job order.
	Unknown []string
}

// Selection is what Filter returns; the caller owns it.
type Selection struct {
	// Jobs are the kept jobs, sorted by ID (CompareJobIDs).
	Jobs []MappedJob
	// Dropped are the other jobs, sorted by ID.
	Dropped []Dropped
	// UnknownHosts are the hosts of running jobs that the HostMap does
	// not know, sorted and unique. A kept job may have some (they are
	// then also in its Unknown); a job with only unknown hosts is
	// dropped as DropOffFabric.
	UnknownHosts []string
}

// Filter keeps the jobs that scheduling-aware routing should know about:
// state RUNNING or CONFIGURING (Allocated), partition not excluded,
// time limit not below the minimum, and endpoints on at least MinSwitches
// switches (hosts are mapped with m; endpoints without a switch do not
// count). The output does not depend on the order of jobs. Filter fails only on invalid
// options.
func Filter(jobs []Job, m *HostMap, opt FilterOptions) (*Selection, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	minSw := opt.MinSwitches
	if minSw == 0 {
		minSw = 2
	}
	patterns := make([]string, len(opt.ExcludePartitions))
	for i, p := range opt.ExcludePartitions {
		patterns[i] = strings.ToLower(p)
	}
	sorted := slices.Clone(jobs)
	SortJobs(sorted)
	sel := &Selection{}
	unknown := make(map[string]bool)
	for _, j := range sorted {
		if !Allocated(j.State) {
			sel.Dropped = append(sel.Dropped, Dropped{j.ID, DropNotRunning})
			continue
		}
		mj := mapJob(j, m)
		for _, h := range mj.Unknown {
			unknown[h] = true
		}
		var reason DropReason
		switch {
		case excluded(j.Partition, patterns):
			reason = DropPartition
		case opt.MinTimeLimit > 0 && j.TimeLimit > 0 && j.TimeLimit < opt.MinTimeLimit:
			reason = DropShort
		case len(mj.Endpoints) == 0:
			reason = DropOffFabric
		case len(mj.Switches) < minSw:
			reason = DropSwitches
		}
		if reason != "" {
			sel.Dropped = append(sel.Dropped, Dropped{j.ID, reason})
			continue
		}
		sel.Jobs = append(sel.Jobs, mj)
	}
	for h := range unknown {
		sel.UnknownHosts = append(sel.UnknownHosts, h)
	}
	slices.Sort(sel.UnknownHosts)
	return sel, nil
}

// excluded reports whether one of the (comma-separated) partitions
// matches one of the lower-cased patterns.
func excluded(partitions string, patterns []string) bool {
	if len(patterns) == 0 {
		return false
	}
	for _, p := range strings.Split(strings.ToLower(partitions), ",") {
		p = strings.TrimSpace(p)
		for _, pat := range patterns {
			if ok, _ := path.Match(pat, p); ok {
				return true
			}
		}
	}
	return false
}

// mapJob maps j's hosts onto endpoints and switches.
func mapJob(j Job, m *HostMap) MappedJob {
	mj := MappedJob{Job: j}
	seenHost := make(map[string]bool, len(j.Nodes))
	for _, h := range j.Nodes {
		if seenHost[h] {
			continue
		}
		seenHost[h] = true
		ids := m.Lookup(h)
		if len(ids) == 0 {
			mj.Unknown = append(mj.Unknown, h)
			continue
		}
		mj.Endpoints = append(mj.Endpoints, ids...)
	}
	slices.Sort(mj.Endpoints)
	mj.Endpoints = slices.Compact(mj.Endpoints)
	for _, id := range mj.Endpoints {
		if sw := m.Endpoint(id).Switch; sw >= 0 {
			mj.Switches = append(mj.Switches, sw)
		}
	}
	slices.Sort(mj.Switches)
	mj.Switches = slices.Compact(mj.Switches)
	return mj
}
