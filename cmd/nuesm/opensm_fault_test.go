package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/sm/deploy"
	"github.com/nuesm/nuesm/topo"
)

// faultBed is a 2-level fat tree k=4 (8 switches, 16 hosts) under
// OpenSM, with the daemon's initial tables deployed; fail makes the
// next rollout (a cable failure) a multi-step one.
func faultBed(t *testing.T) (*osmBed, *topo.Topology) {
	tp, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := newOSMBed(t, tp)
	b.discover()
	return b, tp
}

// unlink fails a switch-to-switch cable in ibsim.
func (b *osmBed) unlink(tp *topo.Topology) {
	b.t.Helper()
	name, port := interSwitchPort(b.t, tp)
	if out, err := b.sim.Console(budget(b.t, 0.05), fmt.Sprintf("Unlink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		b.t.Fatalf("ibsim Unlink: %v %s", err, out)
	}
}

// waitPhase waits until the deployer reports phase and returns its status.
func (b *osmBed) waitPhase(srv *sm.Server, phase string) deploy.Status {
	b.t.Helper()
	deadline := time.Now().Add(budget(b.t, 0.3))
	for {
		d := deployStatus(srv.Status())
		if d.Phase == phase {
			return d
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("deployer not %s: %+v", phase, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireKnownState checks that status shows a held state read back and
// verified, and that it is what the switches hold.
func (b *osmBed) requireKnownState(d deploy.Status) {
	b.t.Helper()
	if d.Held == nil || strings.HasPrefix(d.Held.Matches, "unknown: reading") {
		b.t.Fatalf("status shows no held state: %+v", d)
	}
	if !d.Held.Safe || d.Held.Loops != 0 || d.Held.Cycle != "" {
		b.t.Errorf("held state not safe: %+v", d.Held)
	}
	b.t.Logf("status: phase %s, error %q, held %q (%d of %d pairs undelivered)", d.Phase, d.Error, d.Held.Matches, d.Held.Undelivered, d.Held.Pairs)
}

// TestOpenSMNotRunning: with OpenSM stopped the deployer stages nothing
// new, reports no-opensm with the held state read back over directed
// routes, and deploys once OpenSM runs again.
func TestOpenSMNotRunning(t *testing.T) {
	b, _ := faultBed(t)
	b.osm.Stop()
	srv := b.server(b.config("nue", 2))
	runDaemon(t, srv)
	d := b.waitPhase(srv, deploy.PhaseNoOpenSM)
	if !strings.Contains(d.Error, "OpenSM is not running") {
		t.Errorf("status error %q does not say OpenSM is not running", d.Error)
	}
	b.requireKnownState(d)
	b.startOpenSM()
	st := b.waitDeployed(srv, 0, "after OpenSM started")
	b.checkDeployed(st.Published.Generation, 16)
}

// TestOpenSMKilledMidRollout: OpenSM is killed (SIGKILL) after the first
// write step of a failure's rollout; the rollout stops with the state
// the switches hold, and goes on from it when OpenSM is back.
func TestOpenSMKilledMidRollout(t *testing.T) {
	b, tp := faultBed(t)
	srv := b.server(b.config("nue", 2))
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 0, "initial")
	var killed atomic.Bool
	b.onStep = func(ev deploy.StepEvent) {
		if ev.Generation > st.Published.Generation && ev.Step < ev.Steps && killed.CompareAndSwap(false, true) {
			b.osm.Kill()
		}
	}
	b.unlink(tp)
	d := b.waitPhase(srv, deploy.PhaseNoOpenSM)
	if !killed.Load() {
		t.Fatal("the rollout ended before OpenSM was killed: no multi-step plan")
	}
	b.requireKnownState(d)
	b.startOpenSM()
	st = b.waitDeployed(srv, st.Published.Generation, "after OpenSM restarted")
	b.checkDeployed(st.Published.Generation, 16)
}

// TestOpenSMStepNeverTakes: OpenSM hangs (SIGSTOP) during a rollout; the
// next step does not take within the step timeout, the rollout stops
// (stuck) with the held state read back, never skipping ahead; after
// SIGCONT it completes.
func TestOpenSMStepNeverTakes(t *testing.T) {
	b, tp := faultBed(t)
	cfg := b.config("nue", 2)
	cfg.OpenSM.StepTimeout.Duration = 2 * time.Second
	srv := b.server(cfg)
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 0, "initial")
	var stopped atomic.Bool
	var atStep atomic.Int64
	b.onStep = func(ev deploy.StepEvent) {
		if ev.Generation > st.Published.Generation && ev.Step < ev.Steps && stopped.CompareAndSwap(false, true) {
			atStep.Store(int64(ev.Step))
			_ = syscall.Kill(b.osm.Pid(), syscall.SIGSTOP)
		}
	}
	b.unlink(tp)
	d := b.waitPhase(srv, deploy.PhaseStuck)
	if !strings.Contains(d.Error, "did not take") {
		t.Errorf("status error %q does not say the step did not take", d.Error)
	}
	if d.Step < int(atStep.Load()) || d.Step >= d.Steps {
		t.Errorf("stuck at step %d of %d, the hang began after step %d", d.Step, d.Steps, atStep.Load())
	}
	b.requireKnownState(d)
	if err := syscall.Kill(b.osm.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	st = b.waitDeployed(srv, st.Published.Generation, "after OpenSM resumed")
	b.checkDeployed(st.Published.Generation, 16)
}

// TestHelperServe is the child of TestNuesmKilledMidRollout: nuesm serve
// with the configuration file it is given.
func TestHelperServe(t *testing.T) {
	conf := os.Getenv("NUESM_TEST_SERVE_CONFIG")
	if conf == "" {
		t.Skip("child process of TestNuesmKilledMidRollout")
	}
	c := newRootCmd()
	c.SetArgs([]string{"serve", "--config", conf})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
}

// TestNuesmKilledMidRollout: nuesm serve (a child process, from its
// configuration file) is killed with SIGKILL in the middle of a
// failure's rollout; a new daemon on the same directories settles what
// the switches hold (a step may be half applied), re-plans from it and
// deploys the generation.
func TestNuesmKilledMidRollout(t *testing.T) {
	b, tp := faultBed(t)
	cfg := b.config("nue", 2)
	cfg.Listen = "127.0.0.1:0"
	conf := filepath.Join(b.dir, "nuesm.toml")
	f, err := os.Create(conf)
	if err != nil {
		t.Fatal(err)
	}
	// Written out with the defaults filled in: a setting written as 0 is an
	// error, never silently the default.
	if err := toml.NewEncoder(f).Encode(cfg.Defaults()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	child := exec.Command(os.Args[0], "-test.run=^TestHelperServe$", "-test.count=1")
	child.Env = append(os.Environ(), "NUESM_TEST_SERVE_CONFIG="+conf)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	state := filepath.Join(b.state, "state.json")
	waitState := func(ok func(string) bool, what string) string {
		deadline := time.Now().Add(budget(t, 0.3))
		for {
			s, _ := os.ReadFile(state)
			if ok(string(s)) {
				return string(s)
			}
			if time.Now().After(deadline) {
				t.Fatalf("child daemon: %s not reached; state.json: %s", what, s)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitState(func(s string) bool {
		return strings.Contains(s, `"deployed_generation": 1`) && strings.Contains(s, `"phase": "idle"`)
	}, "generation 1 deployed")
	b.unlink(tp)
	s := waitState(func(s string) bool {
		return strings.Contains(s, `"target_generation": 2`) && strings.Contains(s, `"phase": "rolling"`) && !strings.Contains(s, `"staged_step": 0,`)
	}, "rolling out generation 2 with a step staged")
	_ = child.Process.Signal(syscall.SIGKILL)
	_ = child.Wait()
	t.Logf("killed nuesm serve at %s", s)
	srv := b.server(cfg)
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 1, "after the restart")
	b.checkDeployed(st.Published.Generation, 16)
	if d := deployStatus(st); d.Deployed != st.Published.Generation {
		t.Errorf("deployed %d, published %d", d.Deployed, st.Published.Generation)
	}
}
