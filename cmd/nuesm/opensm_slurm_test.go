package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/slurmtest"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/topo"
)

// prologWrapper writes a PrologSlurmctld wrapper around
// contrib/slurm/nuesm-prolog.sh that waits for the job's tables: the
// daemon's address and NUESM_PROLOG_WAIT are read from files (the test
// sets them once known), the hook's messages go to dir/hook.log, and
// "JOBID start|end UNIXTIME" lines to dir/prolog.log.
func prologWrapper(t *testing.T, dir, addrFile, waitFile string) string {
	t.Helper()
	hook, err := filepath.Abs(filepath.Join("..", "..", "contrib", "slurm", "nuesm-prolog.sh"))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "prolog.log")
	path := filepath.Join(dir, "prolog.sh")
	script := "#!/bin/sh\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nexport PATH\n" +
		"echo \"$SLURM_JOB_ID start $(date +%s.%N)\" >>" + log + "\n" +
		"NUESM_ADDR=$(cat " + addrFile + ") NUESM_PROLOG_WAIT=$(cat " + waitFile + ") NUESM_HOOK_LOG=" + filepath.Join(dir, "hook.log") + " " + hook + "\n" +
		"echo \"$SLURM_JOB_ID end $(date +%s.%N)\" >>" + log + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// stamp reads a "UNIXTIME" file (the job wrote it when it started),
// waiting for it until the budget ends.
func stamp(t *testing.T, path string) time.Time {
	t.Helper()
	deadline := time.Now().Add(budget(t, 0.2))
	for {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			sec, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s: %q", path, s)
			}
			return time.Unix(0, int64(sec*1e9))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written: the job did not start", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// prologTimes returns when the prolog of job id started and ended.
func prologTimes(t *testing.T, dir, id string) (start, end time.Time) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "prolog.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != id {
			continue
		}
		sec, _ := strconv.ParseFloat(f[2], 64)
		at := time.Unix(0, int64(sec*1e9))
		if f[1] == "start" {
			start = at
		} else {
			end = at
		}
	}
	if start.IsZero() || end.IsZero() {
		t.Fatalf("job %s: prolog start/end not logged:\n%s", id, b)
	}
	return start, end
}

// TestOpenSMSLURMProlog: real SLURM (slurmctld, slurmd) on the CAs of a
// fat tree k=4 that ibsim simulates under the real OpenSM; nuesm serve
// with sar-nue, its SLURM source and the deployer; nuesm's own prolog as
// PrologSlurmctld with NUESM_PROLOG_WAIT. A job on three leaf switches
// starts only after the generation routed for it was read back on the
// switches (its first command runs after the deployer's last step of that
// generation). With OpenSM stopped the next job's tables cannot reach the
// switches: its prolog gives up after NUESM_PROLOG_WAIT, logs that, and
// the job starts anyway.
func TestOpenSMSLURMProlog(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := newOSMBed(t, tp)
	b.discover()
	dir := t.TempDir()
	addrFile, waitFile := filepath.Join(dir, "addr"), filepath.Join(dir, "wait")
	wait := int(budget(t, 0.2).Seconds())
	if err := os.WriteFile(waitFile, []byte(strconv.Itoa(wait)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := slurmtest.Start(t, slurmtest.Config{Nodes: "node[0001-0064]", PrologSlurmctld: prologWrapper(t, dir, addrFile, waitFile)})
	t.Setenv("SLURM_CONF", c.Conf)
	cfg := b.config("sar-nue", 4)
	cfg.SLURM = sm.SLURMConfig{Enabled: true, Poll: sm.Duration{Duration: -1}}
	srv := b.server(cfg)
	addr := e2eDaemon(t, srv)
	if err := os.WriteFile(addrFile, []byte(addr), 0o644); err != nil {
		t.Fatal(err)
	}
	st := b.waitDeployed(srv, 0, "initial rollout")

	// A job on three leaf switches: it runs only on its own tables.
	started := filepath.Join(dir, "job1.start")
	id := c.Submit(t, slurmtest.JobSpec{NodeList: "node[0001,0005,0017]", TimeLimit: "60", Command: "date +%s.%N >" + started + "; sleep 600"})
	at := stamp(t, started)
	c.WaitRunning(t, budget(t, 0.1), id)
	st = srv.Status()
	gen := 0
	for g := st.Published.Generation; g > 0; g-- {
		if hasJobID(t, b, g, id) {
			gen = g
		}
	}
	if gen == 0 {
		t.Fatalf("job %s: no published generation was routed for it", id)
	}
	b.mu.Lock()
	proven, ok := b.proven[gen]
	b.mu.Unlock()
	pStart, pEnd := prologTimes(t, dir, id)
	if !ok || !at.After(proven) {
		t.Fatalf("job %s started at %s, but generation %d (routed for it) was read back on the switches at %s", id, at.Format("15:04:05.000"), gen, proven.Format("15:04:05.000"))
	}
	b.checkDeployed(gen, 24)
	t.Logf("job %s: prolog %s..%s (%.2f s), generation %d on the switches %.2f s before the job's first command",
		id, pStart.Format("15:04:05.000"), pEnd.Format("15:04:05.000"), pEnd.Sub(pStart).Seconds(), gen, at.Sub(proven).Seconds())
	if !strings.Contains(readFile(t, filepath.Join(dir, "hook.log")), "job "+id+": tables on the switches") {
		t.Errorf("hook log does not say job %s's tables were on the switches:\n%s", id, readFile(t, filepath.Join(dir, "hook.log")))
	}

	// OpenSM stopped: the next job's tables never take; the prolog gives
	// up after NUESM_PROLOG_WAIT and the job starts anyway.
	b.osm.Stop()
	const giveUp = 2
	if err := os.WriteFile(waitFile, []byte(strconv.Itoa(giveUp)), 0o644); err != nil {
		t.Fatal(err)
	}
	started2 := filepath.Join(dir, "job2.start")
	id2 := c.Submit(t, slurmtest.JobSpec{NodeList: "node[0033,0049]", TimeLimit: "60", Command: "date +%s.%N >" + started2 + "; sleep 600"})
	at2 := stamp(t, started2)
	pStart2, _ := prologTimes(t, dir, id2)
	if at2.Sub(pStart2) < giveUp*time.Second {
		t.Errorf("job %s started %.2f s after its prolog began, before NUESM_PROLOG_WAIT=%d s", id2, at2.Sub(pStart2).Seconds(), giveUp)
	}
	want := fmt.Sprintf("job %s: its tables were not on the switches after %ds; starting it anyway", id2, giveUp)
	if log := readFile(t, filepath.Join(dir, "hook.log")); !strings.Contains(log, want) {
		t.Errorf("hook log lacks %q:\n%s", want, log)
	}
	if d := deployStatus(srv.Status()); d.Deployed >= srv.Status().Published.Generation {
		t.Errorf("with OpenSM stopped the deployer reports generation %d deployed (published %d)", d.Deployed, srv.Status().Published.Generation)
	}
	c.Cancel(t, id, id2)
}

// hasJobID reports whether published generation gen was routed for job id.
func hasJobID(t *testing.T, b *osmBed, gen int, id string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.out, fmt.Sprintf("gen-%06d", gen), "status.json"))
	if err != nil {
		return false // removed (keep): older than the job
	}
	var st sm.PublishedStatus
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	for _, j := range st.Jobs {
		if j.ID == id {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
