package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/internal/slurmtest"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/topo"
)

// e2eFabric writes topo.FatTree(k, n) as an ibnetdiscover dump (CA
// descriptions "node0001 HCA-1"…) and returns its path and the graph the
// daemon will build from it (same parse, same LIDs).
func e2eFabric(t testing.TB, k, n int) (string, *fabric.Graph) {
	t.Helper()
	tp, err := topo.FatTree(k, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("fattree-k%d-n%d.topo", k, n))
	if err := ibnetdiscover.WriteFile(path, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	res, err := ibnetdiscover.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Fabric.AssignLIDs(0); err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return path, g
}

// e2eHookWrapper writes a PrologSlurmctld/EpilogSlurmctld wrapper around
// contrib/slurm/nuesm-<kind>.sh: slurmctld runs hooks with a bare
// environment, and the daemon's port is known only once it runs, so the
// wrapper reads it from addrFile. It appends "JOBID UNIXTIME" to
// dir/<kind>.log first (when SLURM started the hook).
func e2eHookWrapper(t testing.TB, dir, kind, addrFile string) string {
	t.Helper()
	hook, err := filepath.Abs(filepath.Join("..", "..", "contrib", "slurm", "nuesm-"+kind+".sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hook); err != nil {
		t.Fatalf("the %s hook: %v", kind, err)
	}
	path := filepath.Join(dir, kind+".sh")
	script := "#!/bin/sh\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nexport PATH\n" +
		"echo \"$SLURM_JOB_ID $(date +%s.%N)\" >>" + filepath.Join(dir, kind+".log") + "\n" +
		"NUESM_ADDR=$(cat " + addrFile + " 2>/dev/null) exec " + hook + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// e2eDaemon runs srv until the test ends and returns its HTTP address.
func e2eDaemon(t testing.TB, srv *sm.Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	ibtest.WaitFor(t, "the daemon listens", func() (bool, error) { return srv.Addr() != "", nil })
	return srv.Addr()
}

// e2eWaitStatus polls the daemon's status until ok holds for an idle
// daemon, up to the test's deadline. It polls every 20 ms, not with
// WaitFor's back-off, because the reaction benchmarks time these waits.
func e2eWaitStatus(t testing.TB, srv *sm.Server, what string, ok func(sm.Status) bool) sm.Status {
	t.Helper()
	start, deadline := time.Now(), ibtest.Deadline(t)
	for {
		st := srv.Status()
		if st.State == "idle" && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon: not %s after %v (the test's deadline is near): state %s, last result %s (%s), slurm %q, jobs %+v",
				what, time.Since(start).Round(time.Millisecond), st.State, st.LastResult, st.LastError, st.SLURM, st.Jobs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// e2eScrape returns the value of each sample of /metrics, keyed by its
// name with labels ("nuesm_sar_jobs", `nuesm_reroutes_total{result="published"}`).
func e2eScrape(t testing.TB, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

func e2eJobIDs(js []sm.JobStatus) []string {
	var ids []string
	for _, j := range js {
		ids = append(ids, j.ID)
	}
	return ids
}

// TestSLURMEndToEnd: a real SLURM cluster whose 64 nodes are the CAs of a
// 3-level fat tree (k=4, n=3), with nuesm's own PrologSlurmctld and
// EpilogSlurmctld hooks installed; the daemon wired as `nuesm serve
// --slurm` wires it (serveOptions), engine sar-nue, polling off so that
// only the hooks trigger reroutes; the slurmrestd source is checked to
// see the same jobs. Three jobs spanning several leaf
// switches start: the daemon republishes, /status lists them, /metrics
// counts them, and their effective EFI is no worse per job and better in
// total than plain Nue's for the same jobs. scancel: the epilog hook makes
// it reroute again without them.
func TestSLURMEndToEnd(t *testing.T) {
	t0 := time.Now()
	dump, g := e2eFabric(t, 4, 3)
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "nuesm.addr")
	c := slurmtest.Start(t, slurmtest.Config{
		Nodes:           "node[0001-0064]",
		REST:            true,
		PrologSlurmctld: e2eHookWrapper(t, dir, "prolog", addrFile),
		EpilogSlurmctld: e2eHookWrapper(t, dir, "epilog", addrFile),
	})
	t.Setenv("SLURM_CONF", c.Conf) // the daemon's squeue finds the cluster so

	srv, cfg, addr := e2eSLURMDaemon(t, dump, dir, addrFile)
	st := e2eWaitStatus(t, srv, "published at start", func(st sm.Status) bool {
		return st.Published != nil && st.LastTrigger == "start"
	})
	if st.SLURM != "ok" || len(st.Jobs) != 0 {
		t.Fatalf("at start: slurm %q, jobs %+v", st.SLURM, st.Jobs)
	}
	gen0 := st.Published.Generation

	specs := []string{"node[0001-0002,0005-0006,0017]", "node[0003-0004,0033-0036]", "node[0021,0025,0049,0053,0057,0061]"}
	var ids []string
	for _, nl := range specs {
		ids = append(ids, c.Submit(t, slurmtest.JobSpec{NodeList: nl, TimeLimit: "60"}))
	}
	single := c.Submit(t, slurmtest.JobSpec{NodeList: "node[0041-0042]", TimeLimit: "60"}) // one leaf: filtered out
	c.WaitRunning(t, 30*time.Second, append(slices.Clone(ids), single)...)
	tJobs := time.Now()

	st = e2eWaitStatus(t, srv, "routed for the jobs", func(st sm.Status) bool {
		// later hooks may find nothing new ("unchanged"): look at what is published
		return slices.Equal(e2eJobIDs(st.Jobs), ids) && slices.Equal(e2eJobIDs(st.Published.Jobs), ids)
	})
	t.Logf("jobs %v running; tables with them published %v later (generation %d, trigger %s)",
		ids, time.Since(tJobs).Round(time.Millisecond), st.Published.Generation, st.LastTrigger)
	pub := st.Published
	if pub.Generation <= gen0 || pub.Engine != "sar-nue" || !pub.Verified {
		t.Errorf("published generation %d (was %d), engine %s, verified %v", pub.Generation, gen0, pub.Engine, pub.Verified)
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, "current", "opensm-lfts.dump")); err != nil {
		t.Error(err)
	}
	for i, j := range pub.Jobs {
		want := []int{5, 6, 6}[i]
		if j.Hosts != want || j.Terminals != want {
			t.Errorf("job %s: %d hosts, %d terminals; want %d", j.ID, j.Hosts, j.Terminals, want)
		}
	}

	checkSARAgainstNue(t, cfg, c, g, pub, ids)
	checkJobMetrics(t, addr, pub)

	// scancel: the epilog hook reroutes without the jobs
	c.Cancel(t, append(slices.Clone(ids), single)...)
	st = e2eWaitStatus(t, srv, "rerouted without the jobs", func(st sm.Status) bool {
		return st.Jobs != nil && len(st.Jobs) == 0 && st.Published.Generation > pub.Generation && len(st.Published.Jobs) == 0
	})
	if st.Published.EffectiveEFI != 0 || st.Published.Engine != "sar-nue" || !st.Published.Verified {
		t.Errorf("after scancel: published %+v", st.Published)
	}
	m := e2eScrape(t, addr)
	if m["nuesm_sar_jobs"] != 0 || m[`nuesm_reroute_triggers_total{source="http-epilog"}`] < 1 {
		t.Errorf("after scancel: metrics jobs %v, epilog triggers %v", m["nuesm_sar_jobs"], m[`nuesm_reroute_triggers_total{source="http-epilog"}`])
	}
	t.Logf("end to end in %v", time.Since(t0).Round(time.Millisecond))
}

// e2eSLURMDaemon starts the daemon of TestSLURMEndToEnd on dump (output
// under dir) as `nuesm serve --slurm` wires it, polling off, and writes
// its address to addrFile for the hooks.
func e2eSLURMDaemon(t testing.TB, dump, dir, addrFile string) (*sm.Server, sm.Config, string) {
	t.Helper()
	cfg := sm.Config{Fabric: dump, Output: filepath.Join(dir, "out"), Engines: "sar-nue", Listen: "127.0.0.1:0",
		SLURM: sm.SLURMConfig{Enabled: true, Poll: sm.Duration{Duration: -1}}}
	srv, addr := e2eServe(t, cfg)
	if err := os.WriteFile(addrFile, []byte(addr), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, cfg, addr
}

// e2eServe runs the daemon on cfg as `nuesm serve` wires it
// (serveOptions) until the test ends, and returns it with its HTTP
// address.
func e2eServe(t testing.TB, cfg sm.Config) (*sm.Server, string) {
	t.Helper()
	opts, err := serveOptions(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sm.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return srv, e2eDaemon(t, srv)
}

// checkSARAgainstNue routes the running jobs (squeue's, which the
// slurmrestd source must see alike) with plain Nue and checks that the
// published sar-nue tables' effective EFI is no worse per job and
// better in total.
func checkSARAgainstNue(t *testing.T, cfg sm.Config, c *slurmtest.Cluster, g *fabric.Graph, pub *sm.PublishedStatus, ids []string) {
	t.Helper()
	src, err := sm.NewSLURMJobs(cfg.Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := sm.QueryJobs(context.Background(), src, g)
	if err != nil {
		t.Fatal(err)
	}
	// the slurmrestd source sees the same jobs
	rest, err := sm.NewSLURMJobs((sm.Config{SLURM: sm.SLURMConfig{Source: "rest", RestURL: "unix://" + c.RESTSocket}}).Defaults().SLURM)
	if err != nil {
		t.Fatal(err)
	}
	if rjobs, rstatus, err := sm.QueryJobs(context.Background(), rest, g); err != nil || !reflect.DeepEqual(rjobs, jobs) || !slices.Equal(e2eJobIDs(rstatus), ids) {
		t.Errorf("slurmrestd source: %+v %v\nsqueue source: %+v", rjobs, err, jobs)
	}
	res, err := routing.RouteChain(context.Background(), g, e2eChain(t, "nue"), routing.Options{MaxVLs: 8, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	plain := res.Routing
	pm, err := sar.Measure(g, plain, jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range pub.Jobs {
		if j.EffectiveEFI > pm.Jobs[i].EffectiveEFI {
			t.Errorf("job %s: effective EFI %d with sar-nue, %d with nue", j.ID, j.EffectiveEFI, pm.Jobs[i].EffectiveEFI)
		}
	}
	if pub.EffectiveEFI >= pm.EffectiveEFI {
		t.Errorf("effective EFI of all jobs %d with sar-nue, not better than nue's %d", pub.EffectiveEFI, pm.EffectiveEFI)
	}
	t.Logf("effective EFI: sar-nue %d, nue %d; dark fiber: sar-nue %.1f%%, nue %.1f%%", pub.EffectiveEFI, pm.EffectiveEFI, pub.DarkFiber, pm.DarkFiber)

}

// checkJobMetrics checks /metrics for the three jobs routed: their
// count, the effective EFI published, no poll error, a prolog trigger.
func checkJobMetrics(t *testing.T, addr string, pub *sm.PublishedStatus) {
	t.Helper()
	m := e2eScrape(t, addr)
	if m["nuesm_sar_jobs"] != 3 || m["nuesm_sar_effective_efi_paths"] != float64(pub.EffectiveEFI) || m["nuesm_slurm_poll_errors_total"] != 0 {
		t.Errorf("metrics: jobs %v, effective EFI %v (status %d), poll errors %v",
			m["nuesm_sar_jobs"], m["nuesm_sar_effective_efi_paths"], pub.EffectiveEFI, m["nuesm_slurm_poll_errors_total"])
	}
	if m[`nuesm_reroute_triggers_total{source="http-prolog"}`] < 1 {
		t.Errorf("no reroute triggered by the prolog hook: %v", m[`nuesm_reroute_triggers_total{source="http-prolog"}`])
	}
}

func e2eChain(t testing.TB, chain string) []routing.Engine {
	t.Helper()
	e, err := routing.ParseChain(chain)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
