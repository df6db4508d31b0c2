package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestAbandonedScanLeavesIBSimUp opens, deterministically, the window in
// which ibsim 0.10 exits when a client dies: ibsim is stopped (SIGSTOP),
// a full discovery starts, and its ibnetdiscover sleeps waiting for
// ibsim's answer to its attach. A link's trap then comes. Killing the
// scan there (stop, as a cancellation does) makes ibsim exit once it
// runs again ("can't connect to in socket"): that shows the window is
// hit. Abandoning it (what the watch does on a trap) lets the scan run
// to its end once ibsim goes on; ibsim stays up, and the scan is
// discarded: the dump is kept, no reroute is triggered, no rescan asked,
// and it is counted as superseded.
func TestAbandonedScanLeavesIBSimUp(t *testing.T) {
	for _, kill := range []bool{true, false} {
		tp, sim := simFatTree42(t)
		// The dump lacks a cable the scan finds: a scan adopted would
		// replace it and trigger a reroute.
		name, port := switchCable(t, tp)
		simConsole(t, sim, fmt.Sprintf("Unlink %q[%d]", name, port))
		dump, err := sim.Run(ibtest.Budget(t)/8, "ibnetdiscover")
		if err != nil {
			t.Fatal(err)
		}
		simConsole(t, sim, fmt.Sprintf("ReLink %q[%d]", name, port))
		d, reg, fab := scanDeployer(t, sim, dump)
		triggers := 0
		var retry rescan
		var f fullScan
		if err := sim.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		f.start(context.Background(), d.fullDiscovery("periodic", &retry, func(string) { triggers++ }))
		waitChildSleeps(t, "ibnetdiscover")
		if kill {
			f.stop()
		} else {
			f.abandon()
		}
		if err := sim.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if kill {
			// ibsim takes the dead client's attach when it runs again.
			for deadline := time.Now().Add(ibtest.Budget(t) / 8); !sim.Exited() && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			if !sim.Exited() {
				t.Fatalf("a scan killed while it attached left ibsim up: the window is not reproduced (or ibsim no longer exits there); ibsim's log:\n%s", sim.Log())
			}
			continue
		}
		select {
		case <-f.done:
		case <-time.After(ibtest.Budget(t) / 8):
			t.Fatal("the abandoned scan did not end after ibsim went on")
		}
		if sim.Exited() {
			t.Fatalf("ibsim exited after a scan was abandoned while it attached:\n%s", sim.Log())
		}
		if _, err := sim.Run(ibtest.Budget(t)/8, "ibnetdiscover"); err != nil {
			t.Fatalf("a scan after the abandoned one: %v", err)
		}
		if b, _ := os.ReadFile(fab); !bytes.Equal(b, dump) || triggers != 0 || retry.pending() {
			t.Errorf("the abandoned scan was not discarded: dump kept %v, %d triggers, rescan %q", bytes.Equal(b, dump), triggers, retry.take())
		}
		if got := discoverCount(t, reg, "superseded"); got != 1 {
			t.Errorf("nuesm_fabric_discover_total{result=\"superseded\"} = %v, want 1", got)
		}
	}
}

// scanDeployer is a deployer that scans sim, with dump as its fabric
// dump and an empty OpenSM log.
func scanDeployer(t *testing.T, sim *ibtest.Sim, dump []byte) (*Deployer, *prometheus.Registry, string) {
	t.Helper()
	dir := t.TempDir()
	fab, osmLog := filepath.Join(dir, "fabric.topo"), filepath.Join(dir, "opensm.log")
	for path, data := range map[string][]byte{fab: dump, osmLog: nil} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	real, err := ibtest.LookPath("ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d := &Deployer{cfg: Config{Fabric: fab}, met: newMetrics(reg), osm: &openSM{logFile: osmLog},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		run: &runner{dir: filepath.Dir(real), work: sim.Dir, env: sim.Env(), timeout: ibtest.Budget(t) / 8, limit: 64 << 20}}
	return d, reg, fab
}

// simConsole runs an ibsim console command and fails t when it fails.
func simConsole(t *testing.T, sim *ibtest.Sim, cmd string) {
	t.Helper()
	if out, err := sim.Console(ibtest.Budget(t)/8, cmd); err != nil || strings.Contains(out, "#") {
		t.Fatalf("%s: %v %s", cmd, err, out)
	}
}

// waitChildSleeps waits until a child process of the test named name
// sleeps (with ibsim stopped: waiting for its answer).
func waitChildSleeps(t *testing.T, name string) {
	t.Helper()
	for deadline := time.Now().Add(ibtest.Budget(t) / 8); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		tasks, _ := filepath.Glob("/proc/self/task/*/children")
		for _, tf := range tasks {
			b, _ := os.ReadFile(tf)
			for _, pid := range strings.Fields(string(b)) {
				if _, err := strconv.Atoi(pid); err != nil {
					continue
				}
				comm, _ := os.ReadFile("/proc/" + pid + "/comm")
				stat, _ := os.ReadFile("/proc/" + pid + "/stat")
				// stat: pid (comm) state …
				if strings.TrimSpace(string(comm)) == name {
					if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'S' {
						return
					}
				}
			}
		}
	}
	t.Fatalf("no child %s sleeping", name)
}
