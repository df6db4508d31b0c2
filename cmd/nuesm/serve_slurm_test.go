package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/topo"
)

// TestServeCountsSLURMErrors: the daemon with the squeue adapter and a
// failing squeue still publishes, and says so in status and metrics.
func TestServeCountsSLURMErrors(t *testing.T) {
	dump, _ := e2eFabric(t, 4, 3)
	squeue := filepath.Join(t.TempDir(), "squeue")
	script := "#!/bin/sh\necho 'squeue: error: slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1\n"
	if err := os.WriteFile(squeue, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := sm.Config{Fabric: dump, Output: filepath.Join(t.TempDir(), "out"), Engines: "sar-nue", Listen: "127.0.0.1:0",
		SLURM: sm.SLURMConfig{Enabled: true, Squeue: squeue, Poll: sm.Duration{Duration: -1}}}
	srv, addr := e2eServe(t, cfg)
	st := e2eWaitStatus(t, srv, "published", func(st sm.Status) bool { return st.Published != nil })
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
