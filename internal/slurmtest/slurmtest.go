// Package slurmtest starts throw-away SLURM clusters for tests: one
// slurmctld and one slurmd per fake node, all on 127.0.0.1, with munged
// and optionally slurmrestd, everything under a fresh temporary
// directory. It drives the project's scripts slurm/testcluster/start.sh
// and stop.sh, so a developer can start the same cluster by hand.
//
// Tests call Start, which first checks that they run as root and that the
// SLURM programs are installed. When something is missing the test is
// skipped with a loud message, or fails if NUESM_REQUIRE_TOOLS is set (as
// in CI). The cluster is stopped when the test ends, failed or not (every
// process carrying the cluster's id, job processes included), and if the
// test binary dies without cleaning up, a watchdog started with the
// cluster stops it within seconds. Ports are a block of free loopback
// ports picked at random per cluster, so clusters of parallel test
// binaries do not collide.
//
// Start spends most of its time waiting for slurmctld's first scheduling
// pass, so that a job submitted next starts at once.
package slurmtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// EnvKeep, when set to anything but "" or "0", keeps a cluster's directory
// (configuration, logs) after the test; the processes are stopped anyway.
const EnvKeep = "NUESM_SLURMTEST_KEEP"

// EnvScripts may name the directory holding start.sh and stop.sh when the
// source tree is not where this file was compiled.
const EnvScripts = "NUESM_SLURMTEST_SCRIPTS"

// Packages names the Debian packages the clusters need.
const Packages = "slurmctld, slurmd, slurm-client, munge, slurmrestd, slurm-wlm-jwt-plugin"

// Config describes a cluster.
type Config struct {
	// Nodes names the fake nodes: a hostlist expression such as
	// "node[0001-0064]", or a count N for node0001…nodeN. "" means 16.
	Nodes string
	// REST starts slurmrestd on a unix socket (rest_auth/local).
	REST bool
	// JWT enables auth/jwt and starts a second slurmrestd on loopback TCP
	// that takes JWT tokens (see Cluster.Token).
	JWT bool
	// PrologSlurmctld and EpilogSlurmctld, when set, are absolute paths
	// of programs slurmctld runs at each job's allocation and end (e.g.
	// nuesm's contrib/slurm hooks, through a wrapper setting NUESM_ADDR:
	// slurmctld gives them a bare environment).
	PrologSlurmctld, EpilogSlurmctld string
	// Timeout bounds the start (default: until the test's deadline, see
	// ibtest.Deadline).
	Timeout time.Duration
}

// Cluster is a running test cluster. Its methods may be called from the
// test's goroutine only.
type Cluster struct {
	Dir        string   // everything lives here: etc/, log/, run/, jobs/…
	Conf       string   // its slurm.conf (SLURM_CONF for clients)
	ID         string   // SLURMTEST_ID carried by each of its processes
	NodeList   string   // the fake nodes as a hostlist, e.g. "node[0001-0064]"
	Nodes      []string // the fake nodes, in configuration order
	CtldPort   int      // slurmctld's TCP port on 127.0.0.1
	RESTSocket string   // slurmrestd's unix socket ("" unless Config.REST)
	JWTURL     string   // "http://127.0.0.1:PORT" of the JWT slurmrestd ("" unless Config.JWT)

	scripts  string
	stopped  bool
	deadline time.Time // the test's, for the helpers' own client runs
}

// ScriptDir returns the directory of start.sh and stop.sh.
func ScriptDir() string {
	if d := os.Getenv(EnvScripts); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "slurm", "testcluster")
}

// Require checks what a cluster of cfg needs: root, the SLURM programs,
// the JWT plugin when cfg.JWT. It skips t with a loud message naming what
// is missing, or fails t when NUESM_REQUIRE_TOOLS is set.
func Require(t testing.TB, cfg Config) {
	t.Helper()
	progs := []string{"munged", "slurmctld", "slurmd", "scontrol", "sinfo", "squeue", "sdiag", "sbatch", "scancel", "flock", "setsid"}
	if cfg.REST || cfg.JWT {
		progs = append(progs, "slurmrestd")
	}
	ibtest.RequirePrograms(t, Packages, progs...)
	if cfg.JWT && jwtPlugin() == "" {
		skipOrFail(t, "missing auth_jwt.so (Debian package slurm-wlm-jwt-plugin)")
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "not root (slurmd and slurmctld run as root here)")
	}
}

func jwtPlugin() string {
	for _, pat := range []string{"/usr/lib/*/slurm-wlm/auth_jwt.so", "/usr/lib/slurm-wlm/auth_jwt.so", "/usr/lib64/slurm/auth_jwt.so"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

func skipOrFail(t testing.TB, why string) {
	t.Helper()
	msg := "REAL-SLURM TEST NOT RUN: " + why
	if v := os.Getenv(ibtest.EnvRequire); v != "" && v != "0" {
		t.Fatalf("%s, and %s=%s demands it", msg, ibtest.EnvRequire, v)
	}
	t.Skipf("*** %s; set %s=1 to make this a failure ***", msg, ibtest.EnvRequire)
}

// Start calls Require, starts a cluster and arranges for it to be stopped
// (and its directory removed, unless EnvKeep) when the test ends; on
// failure the ends of its logs are printed. It fails t if the cluster
// does not come up.
func Start(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	Require(t, cfg)
	dir, err := os.MkdirTemp("", "nuesm-slurm-") // short: unix socket paths live under it
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, scripts: ScriptDir(), deadline: ibtest.Deadline(t)}
	t.Cleanup(func() { c.cleanup(t) })

	timeout := cfg.Timeout
	if timeout <= 0 {
		// start.sh waits for each daemon and for other tests' clusters
		// (a lock) up to this: as long as the test may run, less the
		// grace below.
		timeout = max(c.left()-10*time.Second, 30*time.Second)
	}
	nodes := cfg.Nodes
	if nodes == "" {
		nodes = "16"
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.scripts, "start.sh"), dir, nodes)
	cmd.Env = append(withToolPath(os.Environ()),
		"SLURMTEST_OWNER_PID="+strconv.Itoa(os.Getpid()),
		"SLURMTEST_TIMEOUT="+strconv.Itoa(int(timeout/time.Second)),
		"SLURMTEST_RESTD="+flag(cfg.REST),
		"SLURMTEST_JWT="+flag(cfg.JWT),
		"SLURMTEST_PROLOG_CTLD="+cfg.PrologSlurmctld,
		"SLURMTEST_EPILOG_CTLD="+cfg.EpilogSlurmctld)
	cmd.WaitDelay = 5 * time.Second
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("slurmtest: start.sh %s %s: %v\n%s", dir, nodes, err, out)
	}
	if err := c.readEnv(); err != nil {
		t.Fatalf("slurmtest: %v\nstart.sh said:\n%s", err, out)
	}
	t.Logf("slurmtest: %d nodes %s up in %v (%s)", len(c.Nodes), c.NodeList, time.Since(t0).Round(10*time.Millisecond), dir)
	return c
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// readEnv loads Dir/cluster.env and expands the node list.
func (c *Cluster) readEnv() error {
	b, err := os.ReadFile(filepath.Join(c.Dir, "cluster.env"))
	if err != nil {
		return err
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	c.ID, c.Conf, c.NodeList = kv["SLURMTEST_ID"], kv["SLURM_CONF"], kv["NODES"]
	c.RESTSocket, c.JWTURL = kv["RESTD_SOCKET"], kv["RESTD_JWT_URL"]
	if c.CtldPort, err = strconv.Atoi(kv["CTLD_PORT"]); err != nil {
		return fmt.Errorf("cluster.env: CTLD_PORT: %w", err)
	}
	if c.ID == "" || c.Conf == "" || c.NodeList == "" {
		return fmt.Errorf("cluster.env incomplete:\n%s", b)
	}
	out, err := c.Run(c.left(), "scontrol", "show", "hostnames", c.NodeList)
	if err != nil {
		return err
	}
	c.Nodes = strings.Fields(out)
	if n, _ := strconv.Atoi(kv["NODE_COUNT"]); n != len(c.Nodes) {
		return fmt.Errorf("cluster.env: NODE_COUNT %q but %d names in %s", kv["NODE_COUNT"], len(c.Nodes), c.NodeList)
	}
	return nil
}

// Env returns the environment for SLURM clients of this cluster: the
// process's environment with SLURM_CONF pointing at Conf (and the sbin
// directories on PATH, see withToolPath).
func (c *Cluster) Env() []string {
	var env []string
	for _, kv := range withToolPath(os.Environ()) {
		if !strings.HasPrefix(kv, "SLURM_CONF=") {
			env = append(env, kv)
		}
	}
	return append(env, "SLURM_CONF="+c.Conf)
}

// withToolPath returns env with the sbin directories appended to PATH:
// Require finds munged and slurmctld there (ibtest.LookPath) even when a
// non-root PATH lacks them, so the scripts must find them too.
func withToolPath(env []string) []string {
	out := make([]string, 0, len(env)+1)
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
			continue
		}
		out = append(out, kv)
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin", "/bin", "/usr/local/bin"} {
		if !slices.Contains(filepath.SplitList(path), d) {
			path += string(filepath.ListSeparator) + d
		}
	}
	return append(out, "PATH="+strings.TrimPrefix(path, string(filepath.ListSeparator)))
}

// Run runs a SLURM client (sbatch, squeue, scontrol…) against the cluster
// for at most timeout and returns its standard output. A non-zero exit or
// a timeout is an error quoting its standard error. Tests pass
// ibtest.Budget(t) unless they mean to catch a hang sooner.
func (c *Cluster) Run(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.Env()
	cmd.Dir = c.Dir
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v: %w", timeout, ctx.Err())
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("slurmtest: %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Stop stops the cluster now (stop.sh): jobs are cancelled, every process
// carrying the cluster's id is gone when it returns. Calling it again, or
// letting the test's cleanup call it, is harmless.
func (c *Cluster) Stop() error {
	if c.stopped {
		return nil
	}
	c.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.scripts, "stop.sh"), c.Dir)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("slurmtest: stop.sh %s: %w\n%s", c.Dir, err, out)
	}
	return nil
}

// left returns the time until the test's deadline (ibtest.Deadline when
// the cluster was started; 30 minutes for a cluster built by hand).
func (c *Cluster) left() time.Duration {
	if c.deadline.IsZero() {
		c.deadline = time.Now().Add(30 * time.Minute)
	}
	return time.Until(c.deadline)
}

// cleanup stops the cluster, prints log ends if t failed, and removes Dir.
func (c *Cluster) cleanup(t testing.TB) {
	if err := c.Stop(); err != nil {
		t.Error(err)
	}
	if t.Failed() {
		for _, name := range []string{"slurmctld.log", "slurmrestd.log", "slurmrestd-jwt.log", "munged.log", "stop-after-failure.log"} {
			p := filepath.Join(c.Dir, "log", name)
			if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
				t.Logf("%s, last lines:\n%s", p, lastLines(string(b), 15))
			}
		}
	}
	if v := os.Getenv(EnvKeep); v != "" && v != "0" {
		t.Logf("slurmtest: %s set, keeping %s", EnvKeep, c.Dir)
		return
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		t.Logf("slurmtest: %v", err)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
