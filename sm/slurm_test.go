package sm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/slurm"
	"github.com/nuesm/nuesm/topo"
)

// fatTreeGraph is topo.FatTree(4, 3): 64 hosts node0001…node0064, four a
// leaf.
func fatTreeGraph(t *testing.T) *fabric.Graph {
	t.Helper()
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fakeSqueue writes a script standing in for squeue that runs body.
func fakeSqueueScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "squeue")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// squeueLines are running jobs on topo.FatTree(4, 3): four hosts a leaf.
const squeueLines = `1|RUNNING|node[0001-0002,0005]|1:00:00|batch
2|RUNNING|node[0003-0004]|1:00:00|batch
3|CONFIGURING|node[0009,0013,0017]|UNLIMITED|batch
4|RUNNING|node[0021,0025]|5:00|batch
5|RUNNING|node[0029,0033]|1:00:00|debug
6|RUNNING|node0037,login1|1:00:00|batch
7|RUNNING|node0041,login2,node0045|1:00:00|batch`

func TestSLURMJobSource(t *testing.T) {
	g := fatTreeGraph(t)
	ctx := context.Background()
	jobsWith := func(c SLURMConfig) ([]string, []JobStatus) {
		t.Helper()
		c.Squeue = fakeSqueueScript(t, "cat <<'EOF'\n"+squeueLines+"\nEOF")
		cfg := Config{SLURM: c}
		src, err := NewSLURMJobs(cfg.Defaults().SLURM)
		if err != nil {
			t.Fatal(err)
		}
		jobs, status, err := QueryJobs(ctx, src, g)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i, j := range jobs {
			ids = append(ids, j.ID)
			if status[i].ID != j.ID || status[i].Terminals != len(j.Terms) {
				t.Errorf("status %+v does not describe job %+v", status[i], j)
			}
		}
		return ids, status
	}
	// defaults: 10 min, no "debug"; job 2 is on one leaf, job 6 has one known host
	ids, status := jobsWith(SLURMConfig{})
	if want := []string{"1", "3", "7"}; !slices.Equal(ids, want) {
		t.Errorf("defaults: jobs %v, want %v", ids, want)
	}
	if status[2].Hosts != 3 || status[2].Terminals != 2 {
		t.Errorf("job 7 (one host off the fabric): %+v", status[2])
	}
	ids, _ = jobsWith(SLURMConfig{MinTimeLimit: Duration{Duration: -1}, ExcludePartitions: []string{}})
	if want := []string{"1", "3", "4", "5", "7"}; !slices.Equal(ids, want) {
		t.Errorf("no time limit, no excluded partition: jobs %v, want %v", ids, want)
	}
	// the host map gives login1 node0044's CA: job 6 spans two leaves
	hm := filepath.Join(t.TempDir(), "hosts.map")
	if err := os.WriteFile(hm, []byte("login1 \"node0044 HCA-1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ids, _ = jobsWith(SLURMConfig{HostMap: hm})
	if want := []string{"1", "3", "6", "7"}; !slices.Equal(ids, want) {
		t.Errorf("with the host map: jobs %v, want %v", ids, want)
	}
}

// TestSLURMJobSourceErrors: failures reach the daemon (which counts
// them and keeps its tables); bad settings fail at start.
func TestSLURMJobSourceErrors(t *testing.T) {
	g := fatTreeGraph(t)
	ctx := context.Background()
	for name, body := range map[string]string{
		"exit 1":    "echo 'squeue: error: Unable to contact slurm controller' >&2; exit 1",
		"malformed": "echo '1|RUNNING|node[1-|1:00:00|batch'",
		"hangs":     "exec sleep 30",
	} {
		cfg := Config{SLURM: SLURMConfig{Squeue: fakeSqueueScript(t, body), Timeout: Duration{Duration: 300 * time.Millisecond}}}
		src, err := NewSLURMJobs(cfg.Defaults().SLURM)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _, err := QueryJobs(ctx, src, g)
		if err == nil || jobs != nil {
			t.Errorf("%s: jobs %v, error %v", name, jobs, err)
		}
		if name == "malformed" && !errors.Is(err, slurm.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]SLURMConfig{
		"bad pattern":        {ExcludePartitions: []string{"[a-"}},
		"missing host map":   {HostMap: filepath.Join(t.TempDir(), "none")},
		"token without user": {Source: "rest", RestURL: "http://127.0.0.1:1", RestToken: "x"},
		"unknown source":     {Source: "sinfo"},
	} {
		if _, err := NewSLURMJobs((Config{SLURM: c}).Defaults().SLURM); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSLURMAnswerLimits: slurm.max_answer_bytes bounds squeue's answer,
// and a slurmrestd token over plain http:// is refused unless
// rest_allow_http_token says so.
func TestSLURMAnswerLimits(t *testing.T) {
	g := fatTreeGraph(t)
	ctx := context.Background()
	cfg := Config{SLURM: SLURMConfig{Squeue: fakeSqueueScript(t, "echo '"+squeueLines+"'"), MaxAnswerBytes: 64}}
	src, err := NewSLURMJobs(cfg.Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := QueryJobs(ctx, src, g); !errors.Is(err, slurm.ErrTooLarge) {
		t.Errorf("squeue answer over 64 bytes: %v, want ErrTooLarge", err)
	}
	rest := SLURMConfig{Source: "rest", RestURL: "http://127.0.0.1:1", RestUser: "u", RestToken: "x"}
	src, err = NewSLURMJobs((Config{SLURM: rest}).Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := QueryJobs(ctx, src, g); !errors.Is(err, slurm.ErrHTTPToken) {
		t.Errorf("token over http://: %v, want ErrHTTPToken", err)
	}
	rest.RestAllowHTTPToken = true
	src, err = NewSLURMJobs((Config{SLURM: rest}).Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := QueryJobs(ctx, src, g); err == nil || errors.Is(err, slurm.ErrHTTPToken) {
		t.Errorf("token over http:// allowed: %v, want a connection error (nothing listens on port 1)", err)
	}
}

// TestSLURMUnknownHosts: hosts of running jobs that are not on the fabric
// are listed in /status and counted by nuesm_slurm_unknown_hosts (a job
// on them is routed without them, or left out), and go when the jobs end;
// the reroute's log line says how many jobs it routed for.
func TestSLURMUnknownHosts(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.FatTree(4, 3, 0)
	writeFabric(t, fab, tp, err)
	answer := filepath.Join(dir, "squeue.out")
	if err := os.WriteFile(answer, []byte(squeueLines+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "sar-nue",
		SLURM: SLURMConfig{Squeue: fakeSqueueScript(t, "cat '"+answer+"'"), Poll: Duration{Duration: -1}}}
	src, err := NewSLURMJobs(cfg.Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	var log logBuffer
	s := start(t, cfg, WithJobSource(src), WithMetrics(m), WithLogger(log.logger()))
	st := waitFor(t, s, "published with the jobs", func(st Status) bool { return st.Published != nil && len(st.Jobs) > 0 })
	if want := []string{"login1", "login2"}; !slices.Equal(st.SLURMUnknownHosts, want) {
		t.Errorf("unknown hosts %v, want %v", st.SLURMUnknownHosts, want)
	}
	if v := metricValue(t, m, "nuesm_slurm_unknown_hosts"); v != 2 {
		t.Errorf("nuesm_slurm_unknown_hosts %v, want 2", v)
	}

	if err := os.WriteFile(answer, []byte("1|RUNNING|node[0001-0002,0005]|1:00:00|batch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Trigger("test")
	st = waitFor(t, s, "rerouted for one job", func(st Status) bool { return len(st.Jobs) == 1 && st.State == "idle" })
	poll(t, "the reroute's log line", func() bool { return strings.Count(log.String(), `msg="reroute done"`) == int(st.Reroutes) })
	if last := log.String()[strings.LastIndex(log.String(), `msg="reroute done"`):]; !strings.Contains(last, " jobs_routed=1 ") {
		t.Errorf("reroute for one job logged %q", strings.TrimSpace(last))
	}
	if st.SLURMUnknownHosts != nil || metricValue(t, m, "nuesm_slurm_unknown_hosts") != 0 {
		t.Errorf("after the jobs on unknown hosts ended: %v, gauge %v", st.SLURMUnknownHosts, metricValue(t, m, "nuesm_slurm_unknown_hosts"))
	}
}

// metricValue returns the value of the label-free gauge name.
func metricValue(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// stuckDeployer is a deployer whose rollouts never take (OpenSM down).
type stuckDeployer struct{}

func (stuckDeployer) Run(ctx context.Context, _ func(string)) error { <-ctx.Done(); return nil }
func (stuckDeployer) Publish(int, string)                           {}
func (stuckDeployer) Status() any                                   { return nil }
func (stuckDeployer) Deployed() int                                 { return 0 }

// TestDeployedJobLeftOut: GET /deployed?job=ID, which the prolog polls
// with NUESM_PROLOG_WAIT, answers 200 at once for a running job the SAR
// filter leaves out (it needs no tables of its own), and 503 for a job
// routed for but not deployed and for a job SLURM has not reported.
func TestDeployedJobLeftOut(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	tp, err := topo.FatTree(4, 3, 0)
	writeFabric(t, fab, tp, err)
	cfg := Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "sar-nue",
		SLURM: SLURMConfig{Squeue: fakeSqueueScript(t, "cat <<'EOF'\n"+squeueLines+"\nEOF"), Poll: Duration{Duration: -1}}}
	src, err := NewSLURMJobs(cfg.Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, cfg, WithJobSource(src), WithDeployer(stuckDeployer{}))
	waitFor(t, s, "published with the jobs", func(st Status) bool { return st.Published != nil && len(st.Published.Jobs) > 0 })
	for _, c := range []struct {
		job  string
		code int
		want string
	}{
		{"1", http.StatusServiceUnavailable, "0 deployed"},                 // routed for, never deployed
		{"2", http.StatusOK, "job 2 is not routed for (too few switches)"}, // one leaf
		{"4", http.StatusOK, "(time limit below the minimum)"},             // 5 minutes
		{"5", http.StatusOK, "(excluded partition)"},                       // debug
		{"77", http.StatusServiceUnavailable, "not routed for job 77"},     // unknown to SLURM
	} {
		resp, err := http.Get("http://" + s.Addr() + "/deployed?job=" + c.job)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("job %s: %d %q, want %d with %q", c.job, resp.StatusCode, body, c.code, c.want)
		}
	}
}
