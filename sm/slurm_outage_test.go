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

func (f *flakyJobs) Jobs(_ context.Context, g *fabric.Graph) ([]routing.Job, []JobStatus, error) {
	if f.down.Load() {
		return nil, nil, errors.New("slurmctld: connection refused")
	}
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
// it last heard of on an unchanged fabric (so the published SAR tables
// stay: "unchanged"), and routes without jobs once the fabric changes.
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
	st = waitFor(t, s, "reroute during the outage", func(st Status) bool { return st.Reroutes > n })
	if st.LastResult != resultUnchanged || st.Published.Generation != 1 {
		t.Fatalf("outage on the same fabric: result %q, generation %d; want unchanged, 1", st.LastResult, st.Published.Generation)
	}
	if len(st.Jobs) != 1 || st.Jobs[0].ID != "42" || !strings.HasPrefix(st.SLURM, "error") {
		t.Fatalf("outage: jobs %+v, SLURM %q; want the last known job and the error", st.Jobs, st.SLURM)
	}

	// A changed fabric must be followed even without SLURM: routed
	// without jobs.
	ft2, err := topo.FatTree(4, 3, 0)
	writeFabric(t, fab, ft2, err)
	st = waitFor(t, s, "publish on the new fabric", func(st Status) bool { return st.Published.Generation == 2 })
	if len(st.Jobs) != 0 {
		t.Fatalf("new fabric during the outage: jobs %+v, want none", st.Jobs)
	}
}
