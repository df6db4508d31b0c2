package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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

// requireHealth checks /healthz: 200, or 503 naming the deployer's
// problem with want in it.
func requireHealth(t *testing.T, srv *sm.Server, want string) {
	t.Helper()
	for i := 0; srv.Addr() == ""; i++ {
		if i == 100 {
			t.Fatal("daemon not listening")
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case want == "" && resp.StatusCode != http.StatusOK:
		t.Errorf("/healthz: %d %s, expected 200", resp.StatusCode, body)
	case want != "" && (resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "deploy: ") || !strings.Contains(string(body), want)):
		t.Errorf("/healthz: %d %q, expected 503 naming the deployer's problem (%q)", resp.StatusCode, body, want)
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
	requireHealth(t, srv, "no-opensm")
	b.startOpenSM()
	st := b.waitDeployed(srv, 0, "after OpenSM started")
	b.checkDeployed(st.Published.Generation, 16)
	requireHealth(t, srv, "")
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
	// The rollout may stop for another reason before the hook stops
	// OpenSM (a read during the failure): the stuck phase that counts is
	// the one after the stop.
	deadline := time.Now().Add(budget(t, 0.3))
	for !stopped.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("no step of a rollout beyond generation %d ran: %+v", st.Published.Generation, deployStatus(srv.Status()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := b.waitPhase(srv, deploy.PhaseStuck)
	if !strings.Contains(d.Error, "did not take") {
		t.Errorf("status error %q does not say the step did not take", d.Error)
	}
	if d.Step < int(atStep.Load()) || d.Step >= d.Steps {
		t.Errorf("stuck at step %d of %d, the hang began after step %d", d.Step, d.Steps, atStep.Load())
	}
	b.requireKnownState(d)
	requireHealth(t, srv, "stuck")
	if err := syscall.Kill(b.osm.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	st = b.waitDeployed(srv, st.Published.Generation, "after OpenSM resumed")
	b.checkDeployed(st.Published.Generation, 16)
	requireHealth(t, srv, "")
}

// TestHelperServe is the child of TestNuesmKilledMidRollout: nuesm serve
// with the configuration file it is given, built as the serve command
// builds it, with one addition: after the first proven step of a
// rollout beyond generation 1 that is not the last, it writes the file
// NUESM_TEST_FREEZE_MARK and stops there, so that the parent kills it
// mid-rollout at a known point instead of racing a fast rollout.
func TestHelperServe(t *testing.T) {
	conf := os.Getenv("NUESM_TEST_SERVE_CONFIG")
	if conf == "" {
		t.Skip("child process of TestNuesmKilledMidRollout")
	}
	cfg, err := sm.LoadConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	plain := cfg
	plain.OpenSM.Enabled = false
	opts, err := serveOptions(plain, log)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := deploy.ConfigFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mark := os.Getenv("NUESM_TEST_FREEZE_MARK")
	dc.AfterStep = func(ev deploy.StepEvent) {
		if ev.Generation > 1 && ev.Step < ev.Steps {
			if err := os.WriteFile(mark, []byte(fmt.Sprintf("generation %d step %d of %d\n", ev.Generation, ev.Step, ev.Steps)), 0o644); err != nil {
				t.Error(err)
			}
			select {} // frozen until the parent's SIGKILL
		}
	}
	m := sm.NewMetrics()
	d, err := deploy.New(*dc, log, m.Registry)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sm.New(cfg, append(opts, sm.WithMetrics(m), sm.WithDeployer(deploy.Adapter{D: d}))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Run(context.Background()); err != nil {
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
	mark := filepath.Join(b.dir, "frozen")
	child := exec.Command(os.Args[0], "-test.run=^TestHelperServe$", "-test.count=1")
	child.Env = append(os.Environ(), "NUESM_TEST_SERVE_CONFIG="+conf, "NUESM_TEST_FREEZE_MARK="+mark)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	defer func() { _ = child.Process.Kill(); <-exited }()
	state := filepath.Join(b.state, "state.json")
	waitFile := func(path string, ok func(string) bool, what string) string {
		deadline := time.Now().Add(budget(t, 0.3))
		for {
			s, _ := os.ReadFile(path)
			if ok(string(s)) {
				return string(s)
			}
			select {
			case <-exited:
				t.Fatalf("child daemon exited before %s; state.json: %s", what, s)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("child daemon: %s not reached; %s: %s", what, path, s)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFile(state, func(s string) bool {
		return strings.Contains(s, `"deployed_generation": 1`) && strings.Contains(s, `"phase": "idle"`)
	}, "generation 1 deployed")
	b.unlink(tp)
	at := waitFile(mark, func(s string) bool { return s != "" }, "a rollout beyond generation 1 frozen after a step")
	s, _ := os.ReadFile(state)
	if !strings.Contains(string(s), `"phase": "rolling"`) || strings.Contains(string(s), `"staged_step": 0,`) {
		t.Fatalf("frozen at %s but state.json is not a rollout with a staged step: %s", at, s)
	}
	_ = child.Process.Signal(syscall.SIGKILL)
	<-exited
	t.Logf("killed nuesm serve frozen at %s, state.json: %s", at, s)
	srv := b.server(cfg)
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 1, "after the restart")
	b.checkDeployed(st.Published.Generation, 16)
	if d := deployStatus(st); d.Deployed != st.Published.Generation {
		t.Errorf("deployed %d, published %d", d.Deployed, st.Published.Generation)
	}
}

// TestOpenSMManageConf: OpenSM's configuration maps SL 0 to VL 1, which
// the routing does not; with manage_conf the deployer writes the
// routing's qos_*sl2vl lines into opensm.conf before the first step (the
// switches hold no routes yet), and the SL2VL tables read back with
// smpquery are the routing's.
func TestOpenSMManageConf(t *testing.T) {
	b, _ := faultBed(t)
	b.osm.Stop()
	wrong := "qos_sl2vl 1,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7"
	b.conf = append(b.conf, wrong)
	b.startOpenSM()
	cfg := b.config("nue", 2)
	cfg.OpenSM.ManageConf = true
	srv := b.server(cfg)
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 0, "initial with manage_conf")
	b.checkDeployed(st.Published.Generation, 16)
	conf, err := os.ReadFile(cfg.OpenSM.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), wrong) || !strings.Contains(string(conf), "qos_sl2vl 0,") {
		t.Errorf("opensm.conf does not keep the admin's line and add the routing's map:\n%s", conf)
	}
}
