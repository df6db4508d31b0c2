package umad

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// TestKilledAgentsSetLandsFirst: Agent.Call sends a failed agent's batch
// again to its successor, and the deployer's next step may then write
// the same block. The failed agent's Set must not land after that step's.
// Here it waits, unanswered, in ibsim's queue (ibsim stopped) when the
// agent is killed; the successor sends the batch again, a later batch
// writes other entries to the same block, and the switch holds the later
// entries. ibsim drains a dead client's queued MADs the first time it
// reads them, before it attaches the next client.
func TestKilledAgentsSetLandsFirst(t *testing.T) {
	sim, a := simAgent(t)
	ibtest.RequirePrograms(t, "iproute2", "ss")
	ctx, timeout := context.Background(), ibtest.Budget(t)/4
	var x, y [DataSize]byte
	for i := range x {
		x[i], y[i] = 1, 2
	}
	const path = "0,1,2" // the switch behind the host's
	// Attached while ibsim runs: the kill below is not in the attach window.
	if res, err := a.Call(ctx, []Op{GetOp(AttrLinearForwardTable, 1, path)}, timeout); err != nil {
		t.Fatal(err)
	} else if got, _ := res[0].Bytes(); got == x {
		t.Fatalf("the block holds %x before the test wrote it", got[:4])
	}
	if err := sim.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Signal(syscall.SIGCONT) })
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 1)
	go func() {
		_, err := a.Call(cctx, []Op{SetOp(AttrLinearForwardTable, 1, path, x)}, timeout)
		failed <- err
	}()
	ibtest.WaitFor(t, "the agent's Set queued at the stopped ibsim", func() (bool, error) { return simQueued(sim.SockName) })
	cancel() // Call kills the agent and waits for its exit
	if err := <-failed; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call: %v", err)
	}
	if err := sim.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		op   Op
		want [DataSize]byte
	}{
		{GetOp(AttrLinearForwardTable, 1, path), x},    // the dead agent's Set landed first
		{SetOp(AttrLinearForwardTable, 1, path, x), x}, // the failed batch again
		{SetOp(AttrLinearForwardTable, 1, path, y), y}, // the next step
		{GetOp(AttrLinearForwardTable, 1, path), y},
	} {
		res, err := a.Call(ctx, []Op{c.op}, timeout)
		if err != nil {
			t.Fatalf("call %d after the kill: %v", i, err)
		}
		if got, err := res[0].Bytes(); err != nil || got != c.want {
			t.Fatalf("call %d after the kill: the switch holds %x (%v), want %x", i, got[:4], err, c.want[:4])
		}
	}
	if a.Starts() != 2 || sim.Exited() {
		t.Errorf("agent started %d times (want 2), ibsim exited %v", a.Starts(), sim.Exited())
	}
}

// simQueued reports whether one of ibsim's client sockets (named after
// sock) holds a datagram it has not read (ss: Recv-Q).
func simQueued(sock string) (bool, error) {
	out, err := exec.Command("ss", "-xaH").Output()
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[4], "@"+sock+":out") {
			continue
		}
		if n, err := strconv.Atoi(f[2]); err == nil && n > 0 {
			return true, nil
		}
	}
	return false, nil
}
