package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/sm/deploy"
	"github.com/nuesm/nuesm/topo"
)

// TestOpenSMSMPAgentFails: with apply = "smp", the SMP agent is killed
// after the first write step of a failure's rollout and cannot start
// again (its wrapper refuses): the next write step fails, the rollout
// stops (stuck) with the held state read back and a status naming the
// agent, never falling back to SIGHUP; once the agent starts again the
// retry deploys the generation.
func TestOpenSMSMPAgentFails(t *testing.T) {
	b, tp := faultBed(t)
	broken := filepath.Join(b.dir, "agent.broken")
	pidFile := filepath.Join(b.dir, "agent.pid")
	wrapper := filepath.Join(b.dir, "agent.sh")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %q\nif [ -e %q ]; then echo 'the test broke the agent' >&2; exit 1; fi\nexec %q \"$@\"\n", pidFile, broken, os.Args[0])
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := b.config("nue", 2)
	cfg.OpenSM.Apply, cfg.OpenSM.SMPAgent = deploy.ApplySMP, wrapper
	srv := b.server(cfg)
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 0, "initial")
	var killed atomic.Bool
	b.onStep = func(ev deploy.StepEvent) {
		if ev.Generation > st.Published.Generation && ev.Step < ev.Steps && killed.CompareAndSwap(false, true) {
			if err := os.WriteFile(broken, nil, 0o644); err != nil {
				t.Error(err)
			}
			raw, err := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil || pid <= 0 {
				t.Errorf("agent pid file: %v %q", err, raw)
				return
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	b.unlink(tp)
	d := b.waitPhase(srv, deploy.PhaseStuck)
	if !killed.Load() {
		t.Fatal("the rollout ended before the agent was killed: no multi-step plan")
	}
	for _, want := range []string{"SMP writes failed", "the test broke the agent"} {
		if !strings.Contains(d.Error, want) {
			t.Errorf("status error %q does not say %q", d.Error, want)
		}
	}
	if d.Step >= d.Steps {
		t.Errorf("stuck at step %d of %d: the rollout went on", d.Step, d.Steps)
	}
	b.requireKnownState(d)
	requireHealth(t, srv, "SMP writes failed")
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	st = b.waitDeployed(srv, st.Published.Generation, "after the agent starts again")
	b.checkDeployed(st.Published.Generation, 16)
	requireHealth(t, srv, "")
}

// TestOpenSMSMPWriteBeforeStage: with apply = "smp", a step whose LFT
// file may follow its writes (the file holds the step's starting state
// and no sweep that may carry an older one is in progress) writes first
// and stages beside; a heavy sweep forced between the writes and the
// staging loads the older file. The switches read back right after it
// hold, entry by entry, the step's starting or final tables and verify
// (no loop, no CDG cycle); the step then reads back as its tables
// (checkStep) and the generation deploys.
func TestOpenSMSMPWriteBeforeStage(t *testing.T) {
	b, tp := faultBed(t)
	cfg := b.config("nue", 2)
	cfg.OpenSM.Apply = deploy.ApplySMP
	var armed atomic.Bool
	var forced atomic.Int32
	b.beforeStage = func(ev deploy.StepEvent) {
		if !armed.Load() || !forced.CompareAndSwap(0, 1) {
			return
		}
		off := len(b.osm.Log())
		if err := syscall.Kill(b.osm.Pid(), syscall.SIGHUP); err != nil {
			t.Error(err)
			return
		}
		deadline := time.Now().Add(budget(t, 0.1))
		for !strings.Contains(b.osm.Log()[off:], "SUBNET UP") {
			if time.Now().After(deadline) {
				t.Error("OpenSM's sweep after the SIGHUP did not end")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		got := b.readBack(ev.Graph, nil)
		if got == nil {
			return
		}
		mixed := 0
		for s := int32(0); int(s) < ev.Graph.NumSwitches(); s++ {
			for lid := 1; lid <= ev.Graph.MaxLID(); lid++ {
				p, from, to := got.Port(s, lid), ev.From.Port(s, lid), ev.Tables.Port(s, lid)
				if p != from && p != to {
					t.Errorf("step %d/%d, after a sweep between its writes and its staging: %s LID %d holds port %d, neither the step's start (%d) nor its end (%d)",
						ev.Step, ev.Steps, ev.Graph.SwitchName(s), lid, p, from, to)
				}
				if from != to && p == from {
					mixed++
				}
			}
		}
		got.SL, got.SL2VL, got.NumVLs = ev.Tables.SL, ev.Tables.SL2VL, ev.Tables.NumVLs
		if rep, _ := cdg.Verify(ev.Graph, got, cdg.Options{}); rep == nil || rep.Loops > 0 || rep.Cycle != nil {
			t.Errorf("step %d/%d: the state after the forced sweep has a loop or a CDG cycle: %v", ev.Step, ev.Steps, rep.Err())
		}
		t.Logf("step %d/%d: after a sweep between its writes and its staging, %d entries hold the step's start again", ev.Step, ev.Steps, mixed)
	}
	srv := b.server(cfg)
	runDaemon(t, srv)
	st := b.waitDeployed(srv, 0, "initial")
	armed.Store(true)
	b.unlink(tp)
	st = b.waitDeployed(srv, st.Published.Generation, "after the failure")
	if forced.Load() == 0 {
		t.Fatal("no step of the failure's rollout wrote its blocks before staging its file")
	}
	b.checkDeployed(st.Published.Generation, 16)
}

// TestOpenSMNoTrapSweep: OpenSM with sweep_on_trap FALSE (no heavy sweep
// of its own on a link's trap). A cable fails: the deployer heals from
// the trap alone, every step read back equal to its tables and verified
// (checkStep), and then sends the heavy sweep OpenSM skipped (its log
// shows the file engine configuring the switches after the failure,
// with the deployed tables). The cable comes back: a trap that is not a
// loss gets its heavy sweep at once (OpenSM brings the link up), and the
// daemon settles with the link in the tables.
func TestOpenSMNoTrapSweep(t *testing.T) {
	tp, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := newOSMBed(t, tp, "sweep_on_trap FALSE")
	b.discover()
	b, srv, st := deployedOn(b, "nue", 2, true, func(c *sm.Config) { c.OpenSM.Apply = deploy.ApplySMP })
	configured := func(off int) int { return strings.Count(b.osm.Log()[off:], "tables configured on all switches") }
	off := len(b.osm.Log())
	b.unlink(tp)
	st = b.waitDeployed(srv, st.Published.Generation, "after the failure")
	if b.steps() == 0 {
		t.Fatal("no write step read back after the failure")
	}
	if configured(off) == 0 {
		t.Error("OpenSM logged no heavy sweep after the failure: the sweep owed for the trap was not sent")
	}
	b.checkDeployed(st.Published.Generation, 16)
	off = len(b.osm.Log())
	seen := changes(srv)
	name, port := interSwitchPort(t, tp)
	if out, err := b.sim.Console(budget(t, 0.05), fmt.Sprintf("ReLink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("ReLink: %v %s", err, out)
	}
	st = b.waitSettled(srv, seen, "after the repair")
	if configured(off) == 0 {
		t.Error("OpenSM logged no heavy sweep after the cable came back")
	}
	b.checkDeployed(st.Published.Generation, 16)
}
