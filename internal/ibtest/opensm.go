package ibtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// LIDAssignment pins the LIDs of one port for OpenSM (its guid2lid cache).
type LIDAssignment struct {
	GUID uint64 // port GUID (switches: port 0)
	LID  uint16 // base LID
	LMC  uint8
}

// OpenSMConfig describes one OpenSM run against a Sim.
type OpenSMConfig struct {
	// Args are extra command-line arguments, e.g. "-R", "file", "-U",
	// path, or "-Q", "-Y", policy. -F (the generated config file) and,
	// for RunOpenSMOnce, -o are added.
	Args []string
	// Conf holds extra opensm.conf lines ("option value"). The generated
	// config sets log_flags 0x43 (errors, info and the routing dumps),
	// log_file, force_log_flush and dump_files_dir.
	Conf []string
	// LIDs, when set, are written to OpenSM's guid2lid cache so that it
	// assigns these LIDs instead of its own.
	LIDs []LIDAssignment
	// Timeout bounds the run (RunOpenSMOnce) or the wait for SUBNET UP
	// (StartOpenSM); default: until Deadline(t), so that a loaded machine
	// slows a test down without failing it.
	Timeout time.Duration
	// Dir, when set, is the working directory instead of a fresh
	// temporary one: an OpenSM restarted with the same Dir keeps its
	// configuration, log and cache paths (the log is appended to).
	Dir string
}

// OpenSM is one OpenSM process with its own directories.
type OpenSM struct {
	Dir      string // working directory; holds opensm.conf and opensm.log
	DumpDir  string // dump_files_dir: opensm-lfts.dump, opensm-sl2vl.dump, opensm-subnet.lst…
	CacheDir string // OSM_CACHE_DIR and OSM_TMP_DIR (guid2lid…)
	LogFile  string // OpenSM's log

	proc *proc
}

// Dump returns the path of a file in the dump directory.
func (o *OpenSM) Dump(name string) string { return filepath.Join(o.DumpDir, name) }

// Log returns OpenSM's log so far.
func (o *OpenSM) Log() string { return readFile(o.LogFile) }

// Output returns what OpenSM wrote to stdout and stderr.
func (o *OpenSM) Output() string { return readFile(o.proc.logPath) }

var errLine = regexp.MustCompile(`\] 0x01 -> |\bERR [0-9A-F]{4}\b|PARSE ERROR`)

// LogErrors returns the log lines that report errors: those logged at
// error level ("[…] 0x01 -> …"; e.g. the file engine's "Invalid port 40
// found for switch …", which has no error code), "ERR XXXX: …" and
// "PARSE ERROR".
func (o *OpenSM) LogErrors() []string {
	var errs []string
	for _, l := range strings.Split(o.Log(), "\n") {
		if errLine.MatchString(l) {
			errs = append(errs, l)
		}
	}
	return errs
}

// Stop stops a daemon started by StartOpenSM (it is also stopped when the
// test ends).
func (o *OpenSM) Stop() { o.proc.stop() }

// Kill kills OpenSM with SIGKILL (no clean-up on its side) and waits for it.
func (o *OpenSM) Kill() {
	_ = o.proc.cmd.Process.Kill()
	<-o.proc.done
}

// Pid returns OpenSM's process id.
func (o *OpenSM) Pid() int { return o.proc.cmd.Process.Pid }

// Exited reports whether OpenSM has exited.
func (o *OpenSM) Exited() bool { return o.proc.exited() }

// noEngine is what OpenSM logs when every routing engine failed; with
// ",no_fallback" engines "opensm -o" then re-sweeps forever.
const noEngine = "No routing engine able to successfully configure"

// RunOpenSMOnce runs "opensm -o" (one sweep, then exit) against sim and
// waits for it. It returns an error on a non-zero exit, on timeout, or
// when no routing engine could configure the switches; t fails only on
// setup errors. Call Require(t, "opensm", …) first.
func RunOpenSMOnce(t testing.TB, sim *Sim, cfg OpenSMConfig) (*OpenSM, error) {
	t.Helper()
	o, err := startOpenSM(t, sim, cfg, true)
	if err != nil {
		return nil, err
	}
	timeout := cfg.timeout(t)
	deadline := time.Now().Add(timeout)
	for !o.proc.wait(100 * time.Millisecond) {
		if strings.Contains(o.Log(), noEngine) {
			o.proc.stop()
			return o, fmt.Errorf("ibtest: opensm: %s", noEngine)
		}
		if time.Now().After(deadline) {
			o.proc.stop()
			return o, fmt.Errorf("ibtest: opensm -o still running after %v\n%s", timeout, tail(o.LogFile, 10))
		}
	}
	if o.proc.err != nil {
		return o, fmt.Errorf("ibtest: opensm -o: %w\n%s", o.proc.err, tail(o.proc.logPath, 10))
	}
	return o, nil
}

// StartOpenSM starts OpenSM as a daemon against sim and waits until it
// logs "SUBNET UP" (the dumps are written right after; use WaitFile for
// them). The daemon is stopped when the test ends. It returns an error
// when OpenSM exits or does not come up in time.
func StartOpenSM(t testing.TB, sim *Sim, cfg OpenSMConfig) (*OpenSM, error) {
	t.Helper()
	o, err := startOpenSM(t, sim, cfg, false)
	if err != nil {
		return nil, err
	}
	if err := o.WaitLog("SUBNET UP", cfg.timeout(t)); err != nil {
		o.proc.stop()
		return o, err
	}
	return o, nil
}

// WaitLog waits until OpenSM's log contains s, OpenSM exits or timeout
// passes (tests pass Budget(t)).
func (o *OpenSM) WaitLog(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !strings.Contains(o.Log(), s) {
		if o.proc.exited() {
			return fmt.Errorf("ibtest: opensm exited (%v) before logging %q\n%s", o.proc.err, s, tail(o.LogFile, 10))
		}
		if strings.Contains(o.Log(), noEngine) {
			return fmt.Errorf("ibtest: opensm: %s", noEngine)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ibtest: opensm did not log %q within %v\n%s", s, timeout, tail(o.LogFile, 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// WaitFile waits until a file exists with a non-zero size that stays the
// same for 200 ms (OpenSM writes its dumps after SUBNET UP), or timeout
// passes (tests pass Budget(t)).
func WaitFile(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := int64(-1)
	for {
		st, err := os.Stat(path)
		if err == nil && st.Size() > 0 && st.Size() == last {
			return nil
		}
		if err == nil {
			last = st.Size()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ibtest: %s not complete within %v", path, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *OpenSMConfig) timeout(t testing.TB) time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return Budget(t)
}

func startOpenSM(t testing.TB, sim *Sim, cfg OpenSMConfig, once bool) (*OpenSM, error) {
	t.Helper()
	bin, err := LookPath("opensm")
	if err != nil {
		t.Fatal(err)
	}
	dir := cfg.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	o := &OpenSM{
		Dir:      dir,
		DumpDir:  filepath.Join(dir, "dump"),
		CacheDir: filepath.Join(dir, "cache"),
		LogFile:  filepath.Join(dir, "opensm.log"),
	}
	for _, d := range []string{o.DumpDir, o.CacheDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := []string{
		"log_flags 0x43",
		"log_file " + o.LogFile,
		"accum_log_file FALSE",
		"force_log_flush TRUE",
		"dump_files_dir " + o.DumpDir,
	}
	conf = append(conf, cfg.Conf...)
	confFile := filepath.Join(dir, "opensm.conf")
	if err := os.WriteFile(confFile, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(cfg.LIDs) > 0 {
		var b strings.Builder
		for _, a := range cfg.LIDs {
			// OpenSM's own layout of the cache file: key, value, blank line.
			fmt.Fprintf(&b, "0x%016x 0x%04x 0x%04x\n\n", a.GUID, a.LID, int(a.LID)+(1<<a.LMC)-1)
		}
		if err := os.WriteFile(filepath.Join(o.CacheDir, "guid2lid"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-F", confFile}
	if once {
		args = append(args, "-o")
	}
	args = append(args, cfg.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(sim.Env(), "OSM_CACHE_DIR="+o.CacheDir, "OSM_TMP_DIR="+o.CacheDir)
	o.proc, err = startProc(t, "opensm", cmd, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("opensm log (%s), last lines:\n%s", o.LogFile, tail(o.LogFile, 20))
		}
	})
	return o, nil
}
