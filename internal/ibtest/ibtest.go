// Package ibtest runs the real InfiniBand tools from Go tests: ibsim (the
// fabric simulator), OpenSM, and the infiniband-diags programs (ibroute,
// dump_lfts, saquery, ibnetdiscover…) attached to ibsim through the
// umad2sim preload library. Everything stays on the machine: ibsim talks
// to its clients over abstract unix sockets named after IBSIM_SOCKNAME,
// and every Sim gets a name of its own, so tests may run in parallel.
//
// Tests call Require first. When a program is missing it skips the test
// with a loud message, unless the environment variable NUESM_REQUIRE_TOOLS
// is set (as in CI), in which case the test fails instead.
//
// Processes are started with exec, stopped when the test ends (SIGTERM,
// then SIGKILL) and keep their logs in the test's temporary directory; the
// tail of each log is printed when the test fails. Waits for readiness
// (ibsim's socket, OpenSM's SUBNET UP, a client's run) give up at
// Deadline(t), derived from go test's -timeout, not after a fixed time:
// a busy machine slows a test down without failing it. The package has no
// dependency on the rest of the module, so that any package's tests may
// use it.
package ibtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// EnvRequire names the environment variable that turns "tool missing"
// from a skip into a failure.
const EnvRequire = "NUESM_REQUIRE_TOOLS"

// EnvUMAD2Sim may name the umad2sim library when it is not in one of the
// usual places.
const EnvUMAD2Sim = "NUESM_UMAD2SIM"

var umad2simPaths = []string{
	"/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
	"/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so",
	"/usr/lib64/umad2sim/libumad2sim.so",
	"/usr/lib/umad2sim/libumad2sim.so",
	"/usr/local/lib/umad2sim/libumad2sim.so",
}

// UMAD2Sim returns the path of libumad2sim.so ($NUESM_UMAD2SIM first).
func UMAD2Sim() (string, error) {
	paths := umad2simPaths
	if p := os.Getenv(EnvUMAD2Sim); p != "" {
		paths = []string{p}
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("ibtest: libumad2sim.so not found (looked in %s; package libumad2sim0 or ibsim-utils)", strings.Join(paths, ", "))
}

// LookPath finds a program in $PATH or in the sbin directories, where
// Debian installs opensm, ibroute and dump_lfts.
func LookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("ibtest: program %q not found in $PATH or the sbin directories", name)
}

// Require checks that the named programs and libumad2sim.so exist. If some
// are missing it skips t with a loud message naming them, or fails t when
// NUESM_REQUIRE_TOOLS is set to anything but "" or "0".
func Require(t testing.TB, programs ...string) {
	t.Helper()
	var missing []string
	for _, p := range programs {
		if _, err := LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if _, err := UMAD2Sim(); err != nil {
		missing = append(missing, "libumad2sim.so")
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("REAL-TOOL TEST NOT RUN: missing %s (Debian packages: opensm, ibsim-utils, libumad2sim0, infiniband-diags)",
		strings.Join(missing, ", "))
	if v := os.Getenv(EnvRequire); v != "" && v != "0" {
		t.Fatalf("%s, and %s=%s demands them", msg, EnvRequire, v)
	}
	t.Skipf("*** %s; set %s=1 to make this a failure ***", msg, EnvRequire)
}

var simSeq atomic.Int64

// SimConfig sizes an ibsim instance. Zero fields keep ibsim's defaults
// (2048 nodes, 256 switches, 13312 ports).
type SimConfig struct {
	MaxNodes    int           // ibsim -N
	MaxSwitches int           // ibsim -S
	MaxPorts    int           // ibsim -P
	LinearCap   int           // ibsim -L (LFT size); needed above ~30000 LIDs
	Host        string        // node the clients attach to (SIM_HOST); "" = the first node of the net file
	Start       time.Duration // how long to wait for ibsim to come up; default: until Deadline(t)
	// Console keeps ibsim's console on a pipe, so that Sim.Console can
	// send it commands (Unlink, ReLink…).
	Console bool
}

// Sim is a running ibsim.
type Sim struct {
	NetFile  string // the net file it simulates
	SockName string // its IBSIM_SOCKNAME
	// Dir holds its log and is its clients' working directory
	// (Command): umad2sim makes a sys-<pid> directory in a client's
	// working directory and leaves it when a signal kills the client.
	Dir  string
	Host string // SIM_HOST for clients ("" = default)

	lib     string
	proc    *proc
	console io.WriteCloser // ibsim's standard input (SimConfig.Console)
	conMu   sync.Mutex
}

// StartSim starts ibsim on netFile (ibnetdiscover format, see ibsim's
// documentation) with a socket name of its own, waits until its control
// socket shows up in /proc/net/unix (or ibsim exits), and arranges for it
// to be stopped when the test ends. It fails t on error. Call Require
// first.
func StartSim(t testing.TB, netFile string, cfg SimConfig) *Sim {
	t.Helper()
	bin, err := LookPath("ibsim")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := UMAD2Sim()
	if err != nil {
		t.Fatal(err)
	}
	s := &Sim{
		NetFile:  netFile,
		SockName: fmt.Sprintf("nuesm%d-%d", os.Getpid(), simSeq.Add(1)),
		Dir:      t.TempDir(),
		Host:     cfg.Host,
		lib:      lib,
	}
	args := []string{"-s"}
	if !cfg.Console {
		args = append(args, "-n")
	}
	for _, o := range []struct {
		flag string
		v    int
	}{{"-N", cfg.MaxNodes}, {"-S", cfg.MaxSwitches}, {"-P", cfg.MaxPorts}, {"-L", cfg.LinearCap}} {
		if o.v > 0 {
			args = append(args, o.flag, fmt.Sprint(o.v))
		}
	}
	args = append(args, netFile)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "IBSIM_SOCKNAME="+s.SockName)
	if cfg.Console {
		if s.console, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	s.proc, err = startProc(t, "ibsim", cmd, s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	deadline := Deadline(t)
	if cfg.Start > 0 {
		deadline = time.Now().Add(cfg.Start)
	}
	start := time.Now()
	for !socketUp(s.SockName) {
		if s.proc.exited() {
			t.Fatalf("ibsim exited before it was ready: %v\n%s", s.proc.err, tail(s.proc.logPath, 15))
		}
		if time.Now().After(deadline) {
			t.Fatalf("ibsim not ready after %v (no @%s:ctl in /proc/net/unix)\n%s", time.Since(start).Round(time.Second), s.SockName, tail(s.proc.logPath, 15))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// socketUp reports whether ibsim's abstract control socket exists.
func socketUp(name string) bool {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("@"+name+":ctl"))
}

// Env returns the environment for a client of the simulator: the current
// environment plus IBSIM_SOCKNAME, LD_PRELOAD of umad2sim and SIM_HOST.
func (s *Sim) Env() []string {
	env := append(os.Environ(), "IBSIM_SOCKNAME="+s.SockName, "LD_PRELOAD="+s.lib)
	if s.Host != "" {
		env = append(env, "SIM_HOST="+s.Host)
	}
	return env
}

// Console sends one command line to ibsim's console (SimConfig.Console)
// and waits until ibsim has answered it (its next prompt), at most
// timeout. It returns what ibsim printed for the command; ibsim reports
// a failed command there ("# can't unlink …"), not in an exit status.
func (s *Sim) Console(timeout time.Duration, command string) (string, error) {
	if s.console == nil {
		return "", errors.New("ibtest: ibsim runs without a console (SimConfig.Console)")
	}
	s.conMu.Lock()
	defer s.conMu.Unlock()
	before := len(s.Log())
	if _, err := io.WriteString(s.console, command+"\n"); err != nil {
		return "", fmt.Errorf("ibtest: ibsim console: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		// The prompt ends ibsim's answer; its warnings (stderr, same
		// file) may come before or after it.
		if out := s.Log(); len(out) > before {
			if i := strings.Index(out[before:], "sim> "); i >= 0 {
				return out[before : before+i], nil
			}
		}
		if s.proc.exited() {
			return "", fmt.Errorf("ibtest: ibsim exited: %v", s.proc.err)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("ibtest: ibsim did not answer %q within %v", command, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Log returns ibsim's output so far.
func (s *Sim) Log() string { return readFile(s.proc.logPath) }

// Exited reports whether ibsim has exited (ibsim 0.10 exits, for one, when
// a client dies while it connects: "can't connect to in socket").
func (s *Sim) Exited() bool { return s.proc.exited() }

// Signal sends ibsim sig: SIGSTOP holds every client's request unanswered
// (a test opens the window between a client's attach and ibsim's
// answer), SIGCONT lets ibsim go on.
func (s *Sim) Signal(sig os.Signal) error { return s.proc.cmd.Process.Signal(sig) }

// Command prepares a client program (found with LookPath) to run against
// the simulator in Dir (file names given to it must be absolute); ctx
// bounds its run time.
func (s *Sim) Command(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	bin, err := LookPath(name)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = s.Env(), s.Dir
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	return cmd, nil
}

// Run runs a client program against the simulator for at most timeout
// and returns its standard output. A non-zero exit or a timeout is an
// error that quotes the end of its standard error. Tests pass Budget(t)
// as the timeout unless they mean to catch a hang sooner.
func (s *Sim) Run(timeout time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd, err := s.Command(ctx, name, args...)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v: %w", timeout, ctx.Err())
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("ibtest: %s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(stderr.String(), 10))
	}
	return stdout.Bytes(), nil
}

// proc is a started background process with its combined output in a file.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set when done is closed
}

// startProc starts cmd with stdout and stderr in dir/<name>.out and stops
// it when the test ends; on test failure the log tail is printed.
func startProc(t testing.TB, name string, cmd *exec.Cmd, dir string) (*proc, error) {
	p := &proc{name: name, cmd: cmd, logPath: filepath.Join(dir, name+".out"), done: make(chan struct{})}
	out, err := os.Create(p.logPath)
	if err != nil {
		return nil, fmt.Errorf("ibtest: %w", err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("ibtest: start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s output (%s), last lines:\n%s", name, p.logPath, tail(p.logPath, 20))
		}
	})
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to 3 s, then SIGKILL, and waits for exit.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(3 * time.Second):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// wait waits for exit up to timeout; false on timeout.
func (p *proc) wait(timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	return string(b)
}

func tail(path string, n int) string { return lastLines(readFile(path), n) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RequirePrograms is Require for tests that need programs but not the
// simulated InfiniBand stack (Prometheus, SLURM…); hint names the Debian
// packages that provide them.
func RequirePrograms(t testing.TB, hint string, programs ...string) {
	t.Helper()
	var missing []string
	for _, p := range programs {
		if _, err := LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("REAL-TOOL TEST NOT RUN: missing %s (Debian packages: %s)", strings.Join(missing, ", "), hint)
	if v := os.Getenv(EnvRequire); v != "" && v != "0" {
		t.Fatalf("%s, and %s=%s demands them", msg, EnvRequire, v)
	}
	t.Skipf("*** %s; set %s=1 to make this a failure ***", msg, EnvRequire)
}
