package slurmtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// recTB records the first Skipf/Fatalf instead of stopping the test.
type recTB struct {
	testing.TB
	first string
}

func (r *recTB) Skipf(format string, args ...any) {
	if r.first == "" {
		r.first = "skip: " + fmt.Sprintf(format, args...)
	}
}

func (r *recTB) Fatalf(format string, args ...any) {
	if r.first == "" {
		r.first = "fatal: " + fmt.Sprintf(format, args...)
	}
}

func TestSkipOrFail(t *testing.T) {
	t.Setenv(ibtest.EnvRequire, "")
	r := &recTB{TB: t}
	skipOrFail(r, "no slurmd")
	if !strings.HasPrefix(r.first, "skip: ") || !strings.Contains(r.first, "REAL-SLURM TEST NOT RUN: no slurmd") {
		t.Errorf("without %s: %q", ibtest.EnvRequire, r.first)
	}
	t.Setenv(ibtest.EnvRequire, "1")
	r = &recTB{TB: t}
	skipOrFail(r, "no slurmd")
	if !strings.HasPrefix(r.first, "fatal: ") {
		t.Errorf("with %s=1: %q", ibtest.EnvRequire, r.first)
	}
}

func TestScriptsPresent(t *testing.T) {
	for _, s := range []string{"start.sh", "stop.sh"} {
		st, err := os.Stat(filepath.Join(ScriptDir(), s))
		if err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s: %v (mode %v); want an executable script", s, err, st)
		}
	}
}

// get fetches url through client and returns the status and body.
func get(t *testing.T, client *http.Client, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCluster brings up 16 nodes with both slurmrestd, runs a job on
// chosen nodes and one placed by SLURM, and checks that Stop leaves no
// process and frees the ports.
func TestCluster(t *testing.T) {
	c := Start(t, Config{Nodes: "node[0001-0016]", REST: true, JWT: true})
	if len(c.Nodes) != 16 || c.Nodes[0] != "node0001" || c.Nodes[15] != "node0016" || c.NodeList != "node[0001-0016]" {
		t.Fatalf("nodes %q (%s)", c.Nodes, c.NodeList)
	}
	out, err := c.Run(ibtest.Budget(t), "sinfo", "-h", "-N", "-o", "%N %t %P")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, " idle batch*\n"); n != 16 || strings.Count(out, " idle debug\n") != 16 {
		t.Errorf("sinfo: want 16 idle nodes in batch (default) and debug:\n%s", out)
	}

	a := c.Submit(t, JobSpec{NodeList: "node[0002,0009]", TimeLimit: "30"})
	b := c.Submit(t, JobSpec{Nodes: 3, Partition: "debug"})
	q := c.WaitRunning(t, 20*time.Second, a, b)
	if q[a].NodeList != "node[0002,0009]" {
		t.Errorf("job %s on %s, submitted to node[0002,0009]", a, q[a].NodeList)
	}
	out, _ = c.Run(ibtest.Budget(t), "scontrol", "show", "hostnames", q[b].NodeList)
	if n := len(strings.Fields(out)); n != 3 {
		t.Errorf("job %s on %s: %d nodes, want 3", b, q[b].NodeList, n)
	}

	unix := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", c.RESTSocket)
	}}}
	if code, body := get(t, unix, "http://x/slurm/v0.0.38/jobs", nil); code != 200 || !strings.Contains(body, `"job_id": `+a+",") {
		t.Errorf("slurmrestd on %s: %d\n%.300s", c.RESTSocket, code, body)
	}
	tok := c.Token(t, time.Hour)
	auth := map[string]string{"X-SLURM-USER-NAME": "root", "X-SLURM-USER-TOKEN": tok}
	if code, body := get(t, http.DefaultClient, c.JWTURL+"/slurm/v0.0.38/jobs", auth); code != 200 || !strings.Contains(body, `"job_id": `+b+",") {
		t.Errorf("JWT slurmrestd %s: %d\n%.300s", c.JWTURL, code, body)
	}
	if code, _ := get(t, http.DefaultClient, c.JWTURL+"/slurm/v0.0.38/jobs", nil); code != http.StatusUnauthorized {
		t.Errorf("JWT slurmrestd without a token: %d, want 401", code)
	}

	c.Cancel(t, a)
	c.WaitGone(t, 20*time.Second, a)
	if q, err := c.Queue(); err != nil || q[b].State != "RUNNING" {
		t.Errorf("after cancelling %s, %s: %+v %v", a, b, q[b], err)
	}

	pids, err := c.Processes()
	if err != nil || len(pids) < 16+2 {
		t.Fatalf("%d processes carry %s (want >= 18: munged, slurmctld, 16 slurmd…): %v", len(pids), c.ID, err)
	}
	if err := c.Stop(); err != nil { // job b still running: stop.sh must end it
		t.Fatal(err)
	}
	if left, err := c.Processes(); err != nil || len(left) != 0 {
		t.Errorf("after Stop: processes %v left, %v", left, err)
	}
	if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(c.CtldPort), time.Second); err == nil {
		conn.Close()
		t.Errorf("slurmctld's port %d still answers after Stop", c.CtldPort)
	}
}

// TestWatchdog starts a cluster owned by a short-lived process, as a test
// binary that dies without its cleanup, and expects the watchdog to stop
// the cluster once the owner is gone.
func TestWatchdog(t *testing.T) {
	Require(t, Config{})
	owner := exec.Command("sleep", "120")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = owner.Process.Kill(); _ = owner.Wait() }()
	dir, err := os.MkdirTemp("", "nuesm-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, scripts: ScriptDir(), deadline: ibtest.Deadline(t)}
	t.Cleanup(func() { c.cleanup(t) }) // in case the watchdog fails
	cmd := exec.Command(filepath.Join(c.scripts, "start.sh"), dir, "4")
	cmd.Env = append(os.Environ(), "SLURMTEST_OWNER_PID="+strconv.Itoa(owner.Process.Pid),
		"SLURMTEST_TIMEOUT="+strconv.Itoa(int(c.left()/time.Second)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start.sh: %v\n%s", err, out)
	}
	if err := c.readEnv(); err != nil {
		t.Fatal(err)
	}
	c.Submit(t, JobSpec{Nodes: 2})
	if pids, _ := c.Processes(); len(pids) < 6 {
		t.Fatalf("cluster processes %v", pids)
	}

	_ = owner.Process.Kill()
	_ = owner.Wait()
	died := time.Now()
	ibtest.WaitFor(t, "cluster processes gone after the owner died", func() (bool, error) {
		pids, err := c.Processes()
		return err == nil && len(pids) == 0, nil
	})
	t.Logf("the watchdog stopped the cluster %v after its owner died", time.Since(died).Round(100*time.Millisecond))
	// the watchdog's stop.sh marks the cluster stopped as its last step
	ibtest.WaitFor(t, "watchdog finished stop.sh (run/stopped)", func() (bool, error) {
		_, err := os.Stat(filepath.Join(dir, "run", "stopped"))
		return err == nil, nil
	})
	b, _ := os.ReadFile(filepath.Join(dir, "log", "watchdog.log"))
	if !strings.Contains(string(b), "stop.sh: stopped") {
		t.Errorf("watchdog.log: %q", b)
	}
}

func TestSplitNUL(t *testing.T) {
	got := splitNUL([]byte("A=1\x00B=2\x00C"))
	var s []string
	for _, g := range got {
		s = append(s, string(g))
	}
	if !slices.Equal(s, []string{"A=1", "B=2", "C"}) {
		t.Errorf("splitNUL: %q", s)
	}
}
