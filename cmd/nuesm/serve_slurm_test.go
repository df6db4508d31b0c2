package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/slurm"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/topo"
)

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
	_, g := e2eFabric(t, 4, 3)
	ctx := context.Background()
	jobsWith := func(c sm.SLURMConfig) ([]string, []sm.JobStatus) {
		t.Helper()
		c.Squeue = fakeSqueueScript(t, "cat <<'EOF'\n"+squeueLines+"\nEOF")
		cfg := sm.Config{SLURM: c}
		src, err := newSLURMJobs(cfg.Defaults().SLURM)
		if err != nil {
			t.Fatal(err)
		}
		jobs, status, err := src.Jobs(ctx, g)
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
	ids, status := jobsWith(sm.SLURMConfig{})
	if want := []string{"1", "3", "7"}; !slices.Equal(ids, want) {
		t.Errorf("defaults: jobs %v, want %v", ids, want)
	}
	if status[2].Hosts != 3 || status[2].Terminals != 2 {
		t.Errorf("job 7 (one host off the fabric): %+v", status[2])
	}
	ids, _ = jobsWith(sm.SLURMConfig{MinTimeLimit: sm.Duration{Duration: -1}, ExcludePartitions: []string{}})
	if want := []string{"1", "3", "4", "5", "7"}; !slices.Equal(ids, want) {
		t.Errorf("no time limit, no excluded partition: jobs %v, want %v", ids, want)
	}
	// the host map gives login1 node0044's CA: job 6 spans two leaves
	hm := filepath.Join(t.TempDir(), "hosts.map")
	if err := os.WriteFile(hm, []byte("login1 \"node0044 HCA-1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ids, _ = jobsWith(sm.SLURMConfig{HostMap: hm})
	if want := []string{"1", "3", "6", "7"}; !slices.Equal(ids, want) {
		t.Errorf("with the host map: jobs %v, want %v", ids, want)
	}
}

// TestSLURMJobSourceErrors: failures reach the daemon (which counts
// them and keeps its tables); bad settings fail at start.
func TestSLURMJobSourceErrors(t *testing.T) {
	_, g := e2eFabric(t, 4, 3)
	ctx := context.Background()
	for name, body := range map[string]string{
		"exit 1":    "echo 'squeue: error: Unable to contact slurm controller' >&2; exit 1",
		"malformed": "echo '1|RUNNING|node[1-|1:00:00|batch'",
		"hangs":     "exec sleep 30",
	} {
		cfg := sm.Config{SLURM: sm.SLURMConfig{Squeue: fakeSqueueScript(t, body), Timeout: sm.Duration{Duration: 300 * time.Millisecond}}}
		src, err := newSLURMJobs(cfg.Defaults().SLURM)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _, err := src.Jobs(ctx, g)
		if err == nil || jobs != nil {
			t.Errorf("%s: jobs %v, error %v", name, jobs, err)
		}
		if name == "malformed" && !errors.Is(err, slurm.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]sm.SLURMConfig{
		"bad pattern":        {ExcludePartitions: []string{"[a-"}},
		"missing host map":   {HostMap: filepath.Join(t.TempDir(), "none")},
		"token without user": {Source: "rest", RestURL: "http://127.0.0.1:1", RestToken: "x"},
		"unknown source":     {Source: "sinfo"},
	} {
		if _, err := newSLURMJobs((sm.Config{SLURM: c}).Defaults().SLURM); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if opts, err := slurmPlugin(sm.Config{}); err != nil || opts != nil {
		t.Errorf("SLURM disabled: %v, %v", opts, err)
	}
}

// TestServeCountsSLURMErrors: the daemon with the squeue adapter and a
// failing squeue still publishes, and says so in status and metrics.
func TestServeCountsSLURMErrors(t *testing.T) {
	dump, _ := e2eFabric(t, 4, 3)
	cfg := sm.Config{Fabric: dump, Output: filepath.Join(t.TempDir(), "out"), Engines: "sar-nue", Listen: "127.0.0.1:0",
		SLURM: sm.SLURMConfig{Enabled: true, Squeue: fakeSqueueScript(t, "echo 'squeue: error: slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1"),
			Poll: sm.Duration{Duration: -1}}}
	opts, err := servePlugins(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sm.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	addr := e2eDaemon(t, srv)
	st := e2eWaitStatus(t, srv, 20*time.Second, "published", func(st sm.Status) bool { return st.Published != nil })
	if !strings.Contains(st.SLURM, "Unable to contact slurm controller") {
		t.Errorf("status slurm %q", st.SLURM)
	}
	if m := e2eScrape(t, addr); m["nuesm_slurm_poll_errors_total"] != 1 {
		t.Errorf("nuesm_slurm_poll_errors_total %v, want 1", m["nuesm_slurm_poll_errors_total"])
	}
}

func TestRouteJobsFile(t *testing.T) {
	dir := t.TempDir()
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	fab := filepath.Join(dir, "ft.topo")
	if err := ibnetdiscover.WriteFile(fab, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jobs := write("jobs.txt", "# id hosts\n1 node[0001-0002,0005-0006,0017]\n2 node[0003-0004,0033-0036]\n"+
		"3 node[0021,0025,0049,0053,0057,0061]\n4 node[0041-0042]  # one leaf\n")
	figures := map[string]int64{}
	for _, e := range []string{"nue", "sar-nue"} {
		out := filepath.Join(dir, e)
		stdout, stderr, err := run(t, "route", fab, "--engine", e, "--jobs", jobs, "-o", out, "-q")
		if err != nil {
			t.Fatalf("%s: %v\n%s", e, err, stderr)
		}
		if !strings.Contains(stdout, "SAR: 3 jobs, effective EFI") || !strings.Contains(stdout, "dark fiber") ||
			!strings.Contains(stderr, "job 4 left out: too few switches") {
			t.Errorf("%s: output\n%s\n%s", e, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum routeSummary
		if err := json.Unmarshal(b, &sum); err != nil || sum.SAR == nil || len(sum.SAR.Jobs) != 3 || sum.SAR.Cables != 128 {
			t.Fatalf("%s: summary.json sar %+v, %v", e, sum.SAR, err)
		}
		figures[e] = sum.SAR.EffectiveEFI
	}
	if figures["sar-nue"] >= figures["nue"] {
		t.Errorf("effective EFI: sar-nue %d, nue %d", figures["sar-nue"], figures["nue"])
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--jobs", write("bad.txt", "1 node[0001-0002]\n2 node[1-\n")}, "bad.txt:2: invalid jobs file: job 2: hostlist"},
		{[]string{"--jobs", write("ghost.txt", "1 node[0001,0005],ghost1\n")}, "host ghost1 not on the fabric"},
		{[]string{"--jobs", jobs, "--slurm"}, "give --jobs FILE or --slurm, not both"},
		{[]string{"--jobs", filepath.Join(dir, "none.txt")}, "jobs file"},
	} {
		args := append([]string{"route", fab, "--engine", "sar-nue", "-o", filepath.Join(dir, "x"), "-q"}, tc.args...)
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
