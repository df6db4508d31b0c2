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

	"github.com/nuesm/nuesm/sm/deploy"
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
