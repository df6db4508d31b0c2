package sm

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// hangingJobs answers like flakyJobs until hang is set, then hangs until
// released (or its query's deadline passes).
type hangingJobs struct {
	hang    atomic.Bool
	hanging atomic.Int32
	release chan struct{}
}

func (h *hangingJobs) Fetch(ctx context.Context) (JobSet, error) {
	if h.hang.Load() {
		h.hanging.Add(1)
		defer h.hanging.Add(-1)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return mapFunc(twoSwitchJob), nil
}

// TestSLURMHangDoesNotDelayFabric: with squeue hanging, a cable change is
// published while the query still hangs, for the last known job mapped
// onto the new fabric; a hook's POST /reroute is answered at once.
func TestSLURMHangDoesNotDelayFabric(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	ft, err := topo.FatTree(4, 2, 0)
	writeFabric(t, fab, ft, err)
	src := &hangingJobs{release: make(chan struct{})}
	defer close(src.release)
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "sar-nue",
		SLURM: SLURMConfig{Enabled: true, Poll: Duration{time.Second}, Timeout: Duration{time.Hour}}}, WithJobSource(src))
	st := waitFor(t, s, "publish with the job", func(st Status) bool { return st.LastResult == resultPublished })
	if len(st.Published.Jobs) != 1 {
		t.Fatalf("jobs %+v", st.Published.Jobs)
	}

	src.hang.Store(true)
	poll(t, "a hanging SLURM query", func() bool { return src.hanging.Load() > 0 })
	if got := postReroute(s, "127.0.0.1:1", "application/json", "", "?reason=prolog", nil); got != 202 {
		t.Fatalf("POST /reroute while SLURM hangs: %d", got)
	}
	ft2, err := topo.FatTree(4, 3, 0) // the fabric grows a level
	writeFabric(t, fab, ft2, err)
	st = waitFor(t, s, "the cable change published", func(st Status) bool { return st.Published.Generation == 2 })
	if src.hanging.Load() == 0 {
		t.Fatal("the SLURM query ended before the publish: the test proves nothing")
	}
	if st.LastTrigger != "fabric-changed" || len(st.Published.Jobs) != 1 || st.Published.Jobs[0].ID != "42" {
		t.Fatalf("published after %s for jobs %+v", st.LastTrigger, st.Published.Jobs)
	}
}

// TestDumpReadBounded: a named pipe, a device and a dump beyond
// max_dump_bytes fail the reroute at once with an error that says so;
// nothing hangs and the daemon stops when asked.
func TestDumpReadBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.topo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.topo")
	tp, err := topo.Torus([]int{3, 3}, 1, false)
	writeFabric(t, big, tp, err)
	for _, c := range []struct {
		path  string
		limit int64
		want  string
	}{
		{fifo, 0, "not a regular file"},
		{"/dev/zero", 0, "not a regular file"},
		{big, 1000, "max_dump_bytes"},
	} {
		s := start(t, Config{Fabric: c.path, Output: filepath.Join(t.TempDir(), "out"), MaxDumpBytes: c.limit})
		st := waitFor(t, s, "failure on "+c.path, func(st Status) bool { return st.LastResult == resultFailed })
		if !containsAll(st.LastError, c.path, c.want) {
			t.Errorf("%s: %q, want %q", c.path, st.LastError, c.want)
		}
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// countingJobs answers with a new job set on every query and counts
// the queries.
type countingJobs struct{ queries atomic.Int32 }

func (c *countingJobs) Fetch(context.Context) (JobSet, error) {
	n := c.queries.Add(1)
	return mapFunc(func(g *fabric.Graph) ([]routing.Job, []JobStatus, error) {
		jobs, st, err := twoSwitchJob(g)
		for i := range jobs {
			jobs[i].ID = fmt.Sprint(n)
			st[i].ID = jobs[i].ID
		}
		return jobs, st, err
	}), nil
}

// TestJobChangesDoNotHammerSLURM: while a reroute runs, changed jobs
// queue one more reroute; they do not make the daemon ask SLURM in a
// loop.
func TestJobChangesDoNotHammerSLURM(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	ft, err := topo.FatTree(4, 2, 0)
	writeFabric(t, fab, ft, err)
	name, g := newGate(t)
	src := &countingJobs{}
	s := start(t, Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: name,
		SLURM: SLURMConfig{Enabled: true, Poll: Duration{time.Second}, Timeout: Duration{time.Minute}}}, WithJobSource(src))
	waitFor(t, s, "first publish", func(st Status) bool { return st.LastResult == resultPublished })
	g.close(false)
	s.Trigger("test")
	g.awaitHeld(t)
	n := src.queries.Load()
	time.Sleep(1500 * time.Millisecond) // about one poll interval
	if q := src.queries.Load() - n; q > 3 {
		t.Fatalf("%d SLURM queries during one held reroute (poll 1s)", q)
	}
	g.reopen()
}
