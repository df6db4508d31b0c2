package slurm_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/internal/slurmtest"
	"github.com/nuesm/nuesm/slurm"
	"github.com/nuesm/nuesm/topo"
)

var update = flag.Bool("update", false, "capture testdata/squeue-*.txt and testdata/jobs-v0.0.38.json from a real cluster")

// fatTree is topo.FatTree(4,3,0): 16 leaf switches with 4 hosts each,
// node0001…node0064, and the endpoints of its CA ports.
func fatTree(t testing.TB) (*fabric.Graph, []slurm.Endpoint) {
	t.Helper()
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g, endpoints(g)
}

// endpoints describes a graph's terminals for the slurm package: the
// adapter a daemon writes (see Example).
func endpoints(g *fabric.Graph) []slurm.Endpoint {
	eps := make([]slurm.Endpoint, len(g.Terms))
	for i, tm := range g.Terms {
		n := g.F.Node(tm.Node)
		eps[i] = slurm.Endpoint{Desc: n.Desc, NodeGUID: n.GUID, PortGUID: n.Ports[tm.Port].GUID, Switch: tm.Switch}
	}
	return eps
}

// TestRealCluster runs 64 fake nodes named after the CAs of a 3-level fat
// tree, submits jobs, reads them back through squeue and slurmrestd (unix
// socket and JWT over TCP), filters them, cancels them and sees them go.
func TestRealCluster(t *testing.T) {
	g, eps := fatTree(t)
	hm := slurm.NewHostMap(eps, nil)
	c := slurmtest.Start(t, slurmtest.Config{Nodes: "node[0001-0064]", REST: true, JWT: true})

	cases := []clusterJob{
		{slurmtest.JobSpec{NodeList: "node[0001-0004]", TimeLimit: "60"}, time.Hour, "batch", slurm.DropSwitches}, // one leaf
		{slurmtest.JobSpec{NodeList: "node[0005,0009,0013]", TimeLimit: "30"}, 30 * time.Minute, "batch", ""},     // three leaves
		{slurmtest.JobSpec{Nodes: 8, TimeLimit: "2:00:00"}, 2 * time.Hour, "batch", ""},                           // SLURM picks 8: at least two leaves
		{slurmtest.JobSpec{NodeList: "node[0030,0040]", Partition: "debug", TimeLimit: "20"}, 20 * time.Minute, "debug", slurm.DropPartition},
		{slurmtest.JobSpec{NodeList: "node[0050,0060]", TimeLimit: "5"}, 5 * time.Minute, "batch", slurm.DropShort},
		{slurmtest.JobSpec{NodeList: "node[0061-0062]"}, slurm.Unlimited, "batch", slurm.DropSwitches}, // one leaf, no limit
	}
	var ids []string
	for _, w := range cases {
		ids = append(ids, c.Submit(t, w.spec))
	}
	queued := c.WaitRunning(t, 30*time.Second, ids...)

	ctx := context.Background()
	sources := map[string]slurm.Source{
		"squeue":    &slurm.Squeue{Env: []string{"SLURM_CONF=" + c.Conf}, Timeout: ibtest.Budget(t)},
		"rest-unix": &slurm.REST{URL: "unix://" + c.RESTSocket, Timeout: ibtest.Budget(t)},
		"rest-jwt":  &slurm.REST{URL: c.JWTURL, User: "root", Token: c.Token(t, time.Hour), AllowHTTPToken: true, Timeout: ibtest.Budget(t)},
	}
	reference := checkSources(t, sources, cases, ids, queued)
	checkFilter(t, g, hm, reference, cases, ids)
	checkTokenErrors(t, c)

	c.Cancel(t, ids...)
	c.WaitGone(t, 30*time.Second, ids...)
	for name, src := range sources {
		jobs, err := src.RunningJobs(ctx)
		if err != nil || len(jobs) != 0 {
			t.Errorf("%s after scancel: %d jobs, %v", name, len(jobs), err)
		}
	}
}

// clusterJob is a job TestRealCluster submits and what the sources and
// the filter must make of it.
type clusterJob struct {
	spec    slurmtest.JobSpec
	limit   time.Duration
	part    string
	dropped slurm.DropReason // "" = kept
}

// checkSources reads the running jobs (ids, as queued) from each source
// and checks them against cases and each other; it returns squeue's.
func checkSources(t *testing.T, sources map[string]slurm.Source, cases []clusterJob, ids []string, queued map[string]slurmtest.QueuedJob) []slurm.Job {
	t.Helper()
	ctx := context.Background()
	var reference []slurm.Job
	for _, name := range []string{"squeue", "rest-unix", "rest-jwt"} {
		jobs, err := sources[name].RunningJobs(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(jobs) != len(ids) {
			t.Fatalf("%s: %d running jobs, want %d: %+v", name, len(jobs), len(ids), jobs)
		}
		for i, j := range jobs {
			w, q := cases[i], queued[ids[i]]
			wantNodes, _ := slurm.Expand(q.NodeList)
			if j.ID != ids[i] || j.State != slurm.StateRunning || j.NodeList != q.NodeList || !slices.Equal(j.Nodes, wantNodes) ||
				j.TimeLimit != w.limit || j.Partition != w.part {
				t.Errorf("%s: job %d = %+v\nwant id %s, nodes %s, limit %v, partition %s", name, i, j, ids[i], q.NodeList, w.limit, w.part)
			}
			if w.spec.NodeList != "" && j.NodeList != w.spec.NodeList {
				t.Errorf("%s: job %s on %s, submitted with -w %s", name, j.ID, j.NodeList, w.spec.NodeList)
			}
		}
		if name == "squeue" {
			reference = jobs
			continue
		}
		for i := range jobs { // REST adds name and user; the rest must agree with squeue
			if jobs[i].User != "root" || jobs[i].Name != "nuesm-test" {
				t.Errorf("%s: job %s user %q name %q", name, jobs[i].ID, jobs[i].User, jobs[i].Name)
			}
			jobs[i].User, jobs[i].Name = "", ""
		}
		if !jobsEqual(jobs, reference) {
			t.Errorf("%s and squeue disagree:\n%+v\n%+v", name, jobs, reference)
		}
	}
	return reference
}

// checkFilter filters the jobs for the fabric and checks which it keeps
// and drops, and why.
func checkFilter(t *testing.T, g *fabric.Graph, hm *slurm.HostMap, reference []slurm.Job, cases []clusterJob, ids []string) {
	t.Helper()
	sel, err := slurm.Filter(reference, hm, slurm.DefaultFilterOptions())
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, mj := range sel.Jobs {
		kept = append(kept, mj.ID)
		if len(mj.Switches) < 2 || len(mj.Endpoints) != len(mj.Nodes) || len(mj.Unknown) != 0 {
			t.Errorf("kept job %s: %d switches, %d endpoints for %d nodes, unknown %q", mj.ID, len(mj.Switches), len(mj.Endpoints), len(mj.Nodes), mj.Unknown)
		}
		for _, e := range mj.Endpoints {
			if got := slurm.DescHost(g.F.Node(g.Terms[e].Node).Desc); !slices.Contains(mj.Nodes, got) {
				t.Errorf("job %s: endpoint %d is %s, not one of its nodes", mj.ID, e, got)
			}
		}
	}
	var wantKept []string
	wantDropped := map[string]slurm.DropReason{}
	for i, w := range cases {
		if w.dropped == "" {
			wantKept = append(wantKept, ids[i])
		} else {
			wantDropped[ids[i]] = w.dropped
		}
	}
	if !slices.Equal(kept, wantKept) {
		t.Errorf("kept %v, want %v", kept, wantKept)
	}
	for _, d := range sel.Dropped {
		if wantDropped[d.ID] != d.Reason {
			t.Errorf("job %s dropped as %q, want %q", d.ID, d.Reason, wantDropped[d.ID])
		}
	}
	if len(sel.Dropped) != len(wantDropped) || len(sel.UnknownHosts) != 0 {
		t.Errorf("dropped %v (want %v), unknown hosts %v", sel.Dropped, wantDropped, sel.UnknownHosts)
	}
}

// checkTokenErrors: slurmrestd's JWT port refuses a token without a user
// name, over plain http unless allowed, and no token, each with a clear
// error.
func checkTokenErrors(t *testing.T, c *slurmtest.Cluster) {
	t.Helper()
	ctx := context.Background()
	// a token without the user name: SLURM 22.05 answers 401; we say why first
	if _, err := (&slurm.REST{URL: c.JWTURL, Token: c.Token(t, time.Hour)}).RunningJobs(ctx); err == nil || !strings.Contains(err.Error(), "needs the user name") {
		t.Errorf("token without a user name: %v", err)
	}
	// slurmrestd's JWT port is plain http: the token goes only when allowed
	if _, err := (&slurm.REST{URL: c.JWTURL, User: "root", Token: c.Token(t, time.Hour)}).RunningJobs(ctx); !errors.Is(err, slurm.ErrHTTPToken) {
		t.Errorf("token over http:// without AllowHTTPToken: %v, want an ErrHTTPToken", err)
	}
	// JWT slurmrestd without a token: a clear error, not an empty list
	if _, err := (&slurm.REST{URL: c.JWTURL}).RunningJobs(ctx); !errors.Is(err, slurm.ErrREST) {
		t.Errorf("JWT slurmrestd without a token: %v, want an ErrREST", err)
	}
}

func jobsEqual(a, b []slurm.Job) bool {
	return slices.EqualFunc(a, b, func(x, y slurm.Job) bool {
		return x.ID == y.ID && x.State == y.State && x.NodeList == y.NodeList && slices.Equal(x.Nodes, y.Nodes) &&
			x.TimeLimit == y.TimeLimit && x.Partition == y.Partition && x.Name == y.Name && x.User == y.User
	})
}

// TestCaptureFixtures (go test -run CaptureFixtures -update ./slurm/)
// records what a real SLURM 22.05 prints for a mix of jobs: squeue in
// SqueueFormat (all states) and slurmrestd's /slurm/v0.0.38/jobs.
func TestCaptureFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to capture testdata from a real cluster")
	}
	c := slurmtest.Start(t, slurmtest.Config{Nodes: "node[0001-0016]", REST: true})
	running := []string{
		c.Submit(t, slurmtest.JobSpec{NodeList: "node[0001-0002,0010]", TimeLimit: "30", Name: "multi"}),
		c.Submit(t, slurmtest.JobSpec{Nodes: 2, TimeLimit: "1-02:03:04", Name: "long"}),
		c.Submit(t, slurmtest.JobSpec{Nodes: 1, Name: "unlimited"}),
		c.Submit(t, slurmtest.JobSpec{Nodes: 2, Partition: "debug", TimeLimit: "10", Name: "dbg"}),
	}
	out, err := c.Run(ibtest.Budget(t), "sbatch", "--parsable", "--chdir", filepath.Join(c.Dir, "jobs"), "-o", "/dev/null",
		"--array=1-2", "-N", "1", "-t", "5", "-J", "arr", "--wrap", "sleep 600")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("array job %s", out)
	c.Submit(t, slurmtest.JobSpec{Nodes: 40, Name: "toobig"}) // stays PENDING
	// a heterogeneous job: two components (1 + 2 nodes); backfill starts
	// it within ~30 s, so it is usually captured PENDING
	out, err = c.Run(ibtest.Budget(t), "sbatch", "--parsable", "--chdir", filepath.Join(c.Dir, "jobs"), "-o", "/dev/null",
		"-J", "het", "-N", "1", "--wrap", "sleep 600", ":", "-N", "2", "--wrap", "sleep 600")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("het job %s", out)
	c.WaitRunning(t, 30*time.Second, running...)
	ibtest.WaitFor(t, "array tasks running", func() (bool, error) {
		out, err := c.Run(ibtest.Budget(t), "squeue", "-h", "-t", "RUNNING", "-n", "arr", "-o", "%i")
		return len(strings.Fields(out)) == 2, err
	})

	sq, err := c.Run(ibtest.Budget(t), "squeue", "-h", "-o", slurm.SqueueFormat)
	if err != nil {
		t.Fatal(err)
	}
	writeFixture(t, "squeue-all.txt", []byte(sq))
	client := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", c.RESTSocket)
	}}}
	resp, err := client.Get("http://slurmrestd/slurm/v0.0.38/jobs")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET jobs: %s %v", resp.Status, err)
	}
	writeFixture(t, "jobs-v0.0.38.json", body)
	resp, err = client.Get("http://slurmrestd/slurm/v0.0.38/job/999999")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	writeFixture(t, "job-error-v0.0.38.json", body)
}

func writeFixture(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s (%d bytes)", name, len(b))
}

// TestRealClusterConfiguring: while a PrologSlurmctld runs (nuesm's hook
// pokes the daemon from there) the job is CONFIGURING, and `squeue -t
// RUNNING` does not list it. Both sources must still report it, or the
// reroute the hook asks for would miss the very job that started.
func TestRealClusterConfiguring(t *testing.T) {
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	prolog := filepath.Join(dir, "prolog.sh")
	// held until the test releases it (or for 30 minutes)
	script := "#!/bin/sh\ni=0\nwhile [ ! -e " + release + " ] && [ $i -lt 18000 ]; do sleep 0.1; i=$((i+1)); done\n"
	if err := os.WriteFile(prolog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := slurmtest.Start(t, slurmtest.Config{Nodes: "node[0001-0008]", REST: true, PrologSlurmctld: prolog})
	id := c.Submit(t, slurmtest.JobSpec{NodeList: "node[0001,0005]", TimeLimit: "60"})
	ibtest.WaitFor(t, "job "+id+" CONFIGURING", func() (bool, error) {
		q, err := c.Queue()
		return err == nil && q[id].State == slurm.StateConfiguring, nil
	})
	out, err := c.Run(ibtest.Budget(t), "squeue", "-h", "-t", "RUNNING", "-o", "%i")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("squeue -t RUNNING during the prolog: %q %v (expected to omit the job)", out, err)
	}
	ctx := context.Background()
	for name, src := range map[string]slurm.Source{
		"squeue": &slurm.Squeue{Env: []string{"SLURM_CONF=" + c.Conf}, Timeout: ibtest.Budget(t)},
		"rest":   &slurm.REST{URL: "unix://" + c.RESTSocket, Timeout: ibtest.Budget(t)},
	} {
		jobs, err := src.RunningJobs(ctx)
		if err != nil || len(jobs) != 1 || jobs[0].ID != id || jobs[0].State != slurm.StateConfiguring || jobs[0].NodeList != "node[0001,0005]" {
			t.Errorf("%s during the prolog: %+v %v", name, jobs, err)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitRunning(t, 20*time.Second, id)
}
