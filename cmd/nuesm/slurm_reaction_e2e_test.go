package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/slurmtest"
	"github.com/nuesm/nuesm/slurm"
	"github.com/nuesm/nuesm/sm"
)

// BenchmarkSLURMReaction_FatTree3_k12 measures the daemon's reaction
// time on the 3-level fat tree k=12 (1,728 hosts, 432 switches): a job
// starts on real SLURM, nuesm's prolog hook pokes `nuesm serve` (sar-nue,
// polling off), and the tables routed for the job are published. 72 fake
// nodes (4 hosts on every 8th leaf) stand in for the cluster; each job
// takes 24 of them (6 leaves). Reported: ns/op from sbatch returning to
// the published generation listing the job; prolog-ms from SLURM starting
// the hook (job allocated) to the same; reroute-s, the daemon's mean
// reroute time (parse, squeue, route, verify, diff, publish). Between
// operations the job is cancelled and the daemon reroutes without it
// (not timed). One operation takes about a second or two: run it with
// -benchtime=5x for five samples.
func BenchmarkSLURMReaction_FatTree3_k12(b *testing.B) {
	const k, leafHosts, everyLeaf, perLeaf, jobNodes = 12, 12, 8, 4, 24
	dump, g := e2eFabric(b, k, 3)
	var names []string
	for leaf := 0; leaf*leafHosts < len(g.Terms); leaf += everyLeaf {
		for h := 1; h <= perLeaf; h++ {
			names = append(names, fmt.Sprintf("node%04d", leaf*leafHosts+h))
		}
	}
	dir := b.TempDir()
	addrFile := filepath.Join(dir, "nuesm.addr")
	c := slurmtest.Start(b, slurmtest.Config{
		Nodes:           slurm.Compress(names),
		PrologSlurmctld: e2eHookWrapper(b, dir, "prolog", addrFile),
		EpilogSlurmctld: e2eHookWrapper(b, dir, "epilog", addrFile),
	})
	b.Setenv("SLURM_CONF", c.Conf)
	srv, _, addr := e2eSLURMDaemon(b, dump, dir, addrFile)
	e2eWaitStatus(b, srv, "published at start", func(st sm.Status) bool { return st.Published != nil })

	var prolog time.Duration
	var reroutes, rerouteSec float64
	phases := []string{"parse", "jobs", "route", "verify", "diff", "publish"}
	phaseSec := make([]float64, len(phases))
	phaseN := make([]float64, len(phases))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m0 := e2eScrape(b, addr)
		t0 := time.Now()
		id := c.Submit(b, slurmtest.JobSpec{Nodes: jobNodes, TimeLimit: "60"})
		t1 := time.Now()
		st := e2eWaitStatus(b, srv, "routed for job "+id, func(st sm.Status) bool {
			return st.Published != nil && slices.Equal(e2eJobIDs(st.Published.Jobs), []string{id})
		})
		seen := time.Now()
		b.StopTimer()
		m1 := e2eScrape(b, addr)
		reroutes += m1["nuesm_reroute_duration_seconds_count"] - m0["nuesm_reroute_duration_seconds_count"]
		rerouteSec += m1["nuesm_reroute_duration_seconds_sum"] - m0["nuesm_reroute_duration_seconds_sum"]
		for j, ph := range phases {
			key := `nuesm_reroute_phase_duration_seconds_%s{phase="` + ph + `"}`
			phaseSec[j] += m1[fmt.Sprintf(key, "sum")] - m0[fmt.Sprintf(key, "sum")]
			phaseN[j] += m1[fmt.Sprintf(key, "count")] - m0[fmt.Sprintf(key, "count")]
		}
		if at, ok := e2eHookTime(filepath.Join(dir, "prolog.log"), id); ok {
			prolog += seen.Sub(at)
		} else {
			b.Fatalf("job %s: no prolog start recorded", id)
		}
		if i == 0 {
			b.Logf("job %s on %d terminals: sbatch %v, published %v after it (generation %d)",
				id, st.Published.Jobs[0].Terminals, t1.Sub(t0).Round(time.Millisecond), seen.Sub(t1).Round(time.Millisecond), st.Published.Generation)
		}
		c.Cancel(b, id)
		e2eWaitStatus(b, srv, "rerouted without job "+id, func(st sm.Status) bool {
			return st.Published != nil && len(st.Published.Jobs) == 0 && len(st.Jobs) == 0
		})
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(prolog.Milliseconds())/float64(b.N), "prolog-ms")
	if reroutes > 0 {
		b.ReportMetric(rerouteSec/reroutes, "reroute-s")
	}
	var parts []string
	for j, ph := range phases {
		if phaseN[j] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f ms", ph, 1000*phaseSec[j]/phaseN[j]))
		}
	}
	b.Logf("mean reroute phases over %d ops: %s", b.N, strings.Join(parts, ", "))
}

// e2eHookTime returns when the hook started for job id, from the wrapper's
// log ("JOBID UNIXTIME" lines).
func e2eHookTime(log, id string) (time.Time, bool) {
	b, err := os.ReadFile(log)
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != id {
			continue
		}
		sec, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.Unix(0, int64(sec*1e9)), true
	}
	return time.Time{}, false
}
