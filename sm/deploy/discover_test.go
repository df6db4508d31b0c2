package deploy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestFullScan: one full discovery at a time beside the watch; a request
// made meanwhile runs after it; a trap (abandon) drops the queued one and
// turns the gate of the one in progress off, without stopping it or, with
// kill, cancelling it; stop (the watch's end) cancels the one in
// progress, drops the queued one and waits for the first to end.
func TestFullScan(t *testing.T) {
	ctx := context.Background()
	var f fullScan
	started := make(chan string, 4)
	cancelled := make(chan string, 4)
	release, hold := make(chan struct{}), make(chan struct{})
	scan := func(name string, release chan struct{}) func(context.Context, *scanGate) {
		return func(c context.Context, _ *scanGate) {
			started <- name
			select {
			case <-c.Done():
				cancelled <- name
			case <-release:
			}
		}
	}
	wait := func(ch chan string, want, what string) {
		t.Helper()
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("%s: %s, want %s", what, got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: nothing, want %s", what, want)
		}
	}
	f.start(ctx, scan("a", release))
	wait(started, "a", "first scan started")
	f.start(ctx, scan("b", release))
	select {
	case got := <-started:
		t.Fatalf("scan %s started while a ran", got)
	default:
	}
	close(release) // a ends by itself
	for deadline := time.Now().Add(time.Minute); ; {
		f.reap(ctx)
		if len(started) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wait(started, "b", "queued scan started after the first ended")
	f.stop() // b ends by itself (release is closed), or is cancelled
	f.start(ctx, scan("c", hold))
	wait(started, "c", "scan after stop")
	g := f.gate
	f.start(ctx, scan("x", hold))
	f.abandon(false)
	if f.pending != nil || !g.off || f.done == nil {
		t.Fatalf("abandon: queued scan kept %v, gate off %v, scan in progress dropped %v", f.pending != nil, g.off, f.done == nil)
	}
	select {
	case got := <-cancelled:
		t.Fatalf("abandon cancelled scan %s", got)
	default:
	}
	f.start(ctx, scan("d", hold))
	f.stop()
	wait(cancelled, "c", "stop cancels the scan in progress")
	if f.done != nil || f.pending != nil {
		t.Fatal("stop left a scan in progress or queued")
	}
	f.reap(ctx)
	select {
	case got := <-started:
		t.Fatalf("scan %s started after stop dropped it", got)
	default:
	}
	f.start(ctx, scan("e", hold))
	wait(started, "e", "scan after stop")
	g = f.gate
	f.start(ctx, scan("y", hold))
	f.abandon(true)
	wait(cancelled, "e", "abandon with kill cancels the scan in progress")
	if f.pending != nil || !g.off {
		t.Fatalf("abandon with kill: queued scan kept %v, gate off %v", f.pending != nil, g.off)
	}
	f.stop()
}

// TestKillSuperseded: the deployer lets a superseded scan finish when
// the diags reach the fabric through umad2sim (its library in the
// LD_PRELOAD exec gives them) and kills it otherwise.
func TestKillSuperseded(t *testing.T) {
	const lib = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
	for _, tc := range []struct {
		env  []string
		sim  bool
		what string
	}{
		{nil, false, "no LD_PRELOAD"},
		{[]string{"LD_PRELOAD=" + lib}, true, "umad2sim preloaded"},
		{[]string{"LD_PRELOAD=/usr/lib/libfoo.so:" + lib}, true, "umad2sim second of two, colon"},
		{[]string{"LD_PRELOAD=/usr/lib/libfoo.so " + lib}, true, "umad2sim second of two, space"},
		{[]string{"LD_PRELOAD=/usr/lib/libfoo.so"}, false, "another library"},
		{[]string{"LD_PRELOAD=/opt/umad2sim/libfoo.so"}, false, "another library in a umad2sim directory"},
		{[]string{"LD_PRELOAD=" + lib, "LD_PRELOAD="}, false, "umad2sim overridden by an empty LD_PRELOAD"},
		{[]string{"LD_PRELOAD=", "LD_PRELOAD=" + lib}, true, "the tools' LD_PRELOAD over the daemon's"},
		{[]string{"NUESM_UMAD2SIM=" + lib}, false, "umad2sim named, not preloaded"},
	} {
		if got := preloadsUMAD2Sim(tc.env); got != tc.sim {
			t.Errorf("%s: preloadsUMAD2Sim(%q) = %v", tc.what, tc.env, got)
		}
	}
	if preloadsUMAD2Sim(os.Environ()) {
		t.Skip("the test runs with umad2sim preloaded: the daemon's own environment cannot be tested")
	}
	if !(&runner{}).killSuperseded() {
		t.Error("no umad2sim in the environment: a superseded scan is not killed")
	}
	if (&runner{env: []string{"LD_PRELOAD=" + lib}}).killSuperseded() {
		t.Error("tool_env preloads umad2sim: a superseded scan is killed")
	}
}

// TestAbandonKillsScan: on a transport that is not umad2sim, a trap
// (abandon with the deployer's kill choice) kills the scan in progress
// at once (here an ibnetdiscover that never ends) and discards it: no
// reroute, no rescan, counted as superseded.
func TestAbandonKillsScan(t *testing.T) {
	if preloadsUMAD2Sim(os.Environ()) {
		t.Skip("the test runs with umad2sim preloaded")
	}
	tools, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "ibnetdiscover"), []byte("#!/bin/sh\nexec sleep 3600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fab := filepath.Join(dir, "fabric.topo")
	if err := os.WriteFile(fab, []byte("# no scan yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d := &Deployer{cfg: Config{Fabric: fab}, met: newMetrics(reg), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		run: &runner{dir: tools, timeout: time.Hour, limit: 1 << 20}}
	var f fullScan
	var retry rescan
	triggers := 0
	f.start(context.Background(), d.fullDiscovery("periodic", &retry, func(string) { triggers++ }))
	defer f.stop()
	pid := waitChildSleeps(t, "sleep")
	done := f.done
	f.abandon(d.run.killSuperseded())
	select {
	case <-done:
	default:
		t.Fatal("abandon returned before the killed scan ended")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("the killed scan's ibnetdiscover (pid %d) still runs", pid)
	}
	if triggers != 0 || retry.pending() {
		t.Errorf("the killed scan was not discarded: %d triggers, rescan %q", triggers, retry.take())
	}
	if got := discoverCount(t, reg, "superseded"); got != 1 {
		t.Errorf("nuesm_fabric_discover_total{result=\"superseded\"} = %v, want 1", got)
	}
}
