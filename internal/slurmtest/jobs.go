package slurmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// JobSpec describes a batch job to submit.
type JobSpec struct {
	Nodes     int    // -N; 0 = as many as NodeList names, or 1
	NodeList  string // -w: the exact nodes (hostlist); "" lets SLURM pick
	Partition string // -p; "" = the default partition (batch)
	TimeLimit string // -t in sbatch syntax ("30", "1-00:00:00"); "" = none
	Name      string // -J; "" = "nuesm-test"
	Command   string // --wrap; "" = "sleep 600"
}

// Submit submits a batch job and returns its id; it fails t on error.
// Output goes to /dev/null; the job's working directory is Dir/jobs.
func (c *Cluster) Submit(t testing.TB, j JobSpec) string {
	t.Helper()
	args := []string{"--parsable", "--chdir", filepath.Join(c.Dir, "jobs"), "-o", "/dev/null", "-e", "/dev/null"}
	name, cmd := j.Name, j.Command
	if name == "" {
		name = "nuesm-test"
	}
	if cmd == "" {
		cmd = "sleep 600"
	}
	args = append(args, "-J", name, "--wrap", cmd)
	if j.Nodes > 0 {
		args = append(args, "-N", strconv.Itoa(j.Nodes))
	}
	if j.NodeList != "" {
		args = append(args, "-w", j.NodeList)
	}
	if j.Partition != "" {
		args = append(args, "-p", j.Partition)
	}
	if j.TimeLimit != "" {
		args = append(args, "-t", j.TimeLimit)
	}
	out, err := c.Run(c.left(), "sbatch", args...)
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // "ID" or "ID;cluster"
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("slurmtest: sbatch printed %q, expected a job id", out)
	}
	return id
}

// Cancel cancels jobs (scancel); it fails t on error.
func (c *Cluster) Cancel(t testing.TB, ids ...string) {
	t.Helper()
	if len(ids) == 0 {
		return
	}
	if _, err := c.Run(c.left(), "scancel", ids...); err != nil {
		t.Fatal(err)
	}
}

// QueuedJob is one line of squeue: what the helpers wait on.
type QueuedJob struct {
	ID, State, NodeList string
}

// Queue returns the jobs squeue lists (its default states: pending,
// running, completing…), by id.
func (c *Cluster) Queue() (map[string]QueuedJob, error) {
	out, err := c.Run(c.left(), "squeue", "-h", "-o", "%i|%T|%N")
	if err != nil {
		return nil, err
	}
	jobs := map[string]QueuedJob{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			continue
		}
		jobs[f[0]] = QueuedJob{ID: f[0], State: f[1], NodeList: f[2]}
	}
	return jobs, nil
}

// WaitRunning waits until every job is RUNNING and returns them by id; it
// fails t, naming the jobs' states, when neither timeout nor the test's
// deadline (ibtest.Deadline), whichever is later, leaves time: a busy
// machine slows a test down without failing it.
func (c *Cluster) WaitRunning(t testing.TB, timeout time.Duration, ids ...string) map[string]QueuedJob {
	t.Helper()
	var q map[string]QueuedJob
	c.wait(t, timeout, "running", func() (bool, error) {
		var err error
		if q, err = c.Queue(); err != nil {
			return false, err
		}
		for _, id := range ids {
			if q[id].State != "RUNNING" {
				return false, nil
			}
		}
		return true, nil
	}, func() string { return describe(q, ids) })
	out := make(map[string]QueuedJob, len(ids))
	for _, id := range ids {
		out[id] = q[id]
	}
	return out
}

// WaitGone waits until squeue no longer lists any of the jobs; it fails t
// after timeout or at the test's deadline, whichever is later.
func (c *Cluster) WaitGone(t testing.TB, timeout time.Duration, ids ...string) {
	t.Helper()
	var q map[string]QueuedJob
	c.wait(t, timeout, "gone", func() (bool, error) {
		var err error
		if q, err = c.Queue(); err != nil {
			return false, err
		}
		for _, id := range ids {
			if _, ok := q[id]; ok {
				return false, nil
			}
		}
		return true, nil
	}, func() string { return describe(q, ids) })
}

func (c *Cluster) wait(t testing.TB, timeout time.Duration, what string, done func() (bool, error), state func() string) {
	t.Helper()
	start := time.Now()
	deadline := ibtest.Deadline(t)
	if d := start.Add(timeout); d.After(deadline) {
		deadline = d
	}
	for {
		ok, err := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slurmtest: jobs not %s after %v: %s (last error: %v)", what, time.Since(start).Round(time.Second), state(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(q map[string]QueuedJob, ids []string) string {
	var parts []string
	for _, id := range ids {
		if j, ok := q[id]; ok {
			parts = append(parts, fmt.Sprintf("%s=%s", id, j.State))
		} else {
			parts = append(parts, id+"=(not listed)")
		}
	}
	return strings.Join(parts, " ")
}

// Token returns a JWT for root from `scontrol token` (needs Config.JWT),
// for the X-SLURM-USER-TOKEN header; it fails t on error.
func (c *Cluster) Token(t testing.TB, lifespan time.Duration) string {
	t.Helper()
	out, err := c.Run(c.left(), "scontrol", "token", fmt.Sprintf("lifespan=%d", int(lifespan/time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := strings.CutPrefix(strings.TrimSpace(out), "SLURM_JWT=")
	if !ok || tok == "" {
		t.Fatalf("slurmtest: scontrol token printed %q", out)
	}
	return tok
}

// Processes returns the pids of the live (not zombie) processes that
// carry the cluster's SLURMTEST_ID, sorted: its daemons and their
// slurmstepd. After Stop it should be empty.
func (c *Cluster) Processes() ([]int, error) {
	return processesWithEnv("SLURMTEST_ID=" + c.ID)
}

// processesWithEnv lists live processes whose environment holds kv.
func processesWithEnv(kv string) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	want := []byte(kv)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		found := false
		for _, v := range splitNUL(env) {
			if string(v) == string(want) {
				found = true
				break
			}
		}
		if found && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

func splitNUL(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := slices.Index(b, 0)
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	return out
}

// zombie reports whether pid has exited (zombie or gone).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return syscall.Kill(pid, 0) != nil
}
