package sm

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// flakyJobs answers with one job over the first terminals of two
// switches until down is set, then fails like an unreachable slurmctld.
type flakyJobs struct{ down atomic.Bool }

func (f *flakyJobs) Fetch(context.Context) (JobSet, error) {
	if f.down.Load() {
		return nil, errors.New("slurmctld: connection refused")
	}
	return mapFunc(twoSwitchJob), nil
}

// mapFunc is a JobSet.
type mapFunc func(g *fabric.Graph) ([]routing.Job, []JobStatus, error)

func (m mapFunc) Map(g *fabric.Graph) ([]routing.Job, []JobStatus, error) { return m(g) }

// twoSwitchJob is job 42 on the first terminals of two switches.
func twoSwitchJob(g *fabric.Graph) ([]routing.Job, []JobStatus, error) {
	var terms []int32
	seen := map[int32]bool{}
	for i, t := range g.Terms {
		if !seen[t.Switch] && len(terms) < 2 {
			seen[t.Switch] = true
			terms = append(terms, int32(i))
		}
	}
	return []routing.Job{{ID: "42", Terms: terms}}, []JobStatus{{ID: "42", Hosts: 2, Terminals: 2}}, nil
}

// TestSLURMOutageKeepsJobs: while SLURM is down the daemon keeps the jobs
// it last heard of (so the published SAR tables stay: "unchanged"), and
// maps them onto a changed fabric by host, as it does every answer.
func TestSLURMOutageKeepsJobs(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	ft, err := topo.FatTree(4, 2, 0)
	writeFabric(t, fab, ft, err)
	src := &flakyJobs{}
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "sar-nue",
		SLURM: SLURMConfig{Enabled: true, Poll: Duration{-1}, Timeout: Duration{time.Second}}}, WithJobSource(src))
	st := waitFor(t, s, "publish with the job", func(st Status) bool { return st.LastResult == resultPublished })
	if len(st.Jobs) != 1 || st.Published.Generation != 1 {
		t.Fatalf("jobs %+v, generation %d; want job 42 in generation 1", st.Jobs, st.Published.Generation)
	}

	src.down.Store(true)
	n := st.Reroutes
	s.Trigger("test")
	st = waitFor(t, s, "reroute during the outage", func(st Status) bool {
		return st.Reroutes > n && st.State == "idle" && strings.HasPrefix(st.SLURM, "error")
	})
	if st.LastResult != resultUnchanged || st.Published.Generation != 1 {
		t.Fatalf("outage on the same fabric: result %q, generation %d; want unchanged, 1", st.LastResult, st.Published.Generation)
	}
	if len(st.Jobs) != 1 || st.Jobs[0].ID != "42" || !strings.HasPrefix(st.SLURM, "error") {
		t.Fatalf("outage: jobs %+v, SLURM %q; want the last known job and the error", st.Jobs, st.SLURM)
	}

	// A changed fabric is followed without SLURM, for the last known
	// jobs mapped onto it.
	ft2, err := topo.FatTree(4, 3, 0)
	writeFabric(t, fab, ft2, err)
	st = waitFor(t, s, "publish on the new fabric", func(st Status) bool { return st.Published.Generation == 2 })
	if len(st.Published.Jobs) != 1 || st.Published.Jobs[0].ID != "42" || st.Published.Switches != 48 {
		t.Fatalf("new fabric during the outage: published %d switches for jobs %+v, want 48 for job 42", st.Published.Switches, st.Published.Jobs)
	}
}
