package umad

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// envAgent makes the test binary serve as an SMP agent (with the
// simulator's LD_PRELOAD library, which must be loaded at exec time).
const envAgent = "NUESM_UMAD_TEST_AGENT"

func TestMain(m *testing.M) {
	ServeIfChild(envAgent)
	if os.Getenv(envStress) == "1" {
		stressChild()
	}
	os.Exit(m.Run())
}

// simNet is a host on a switch on a switch (ibsim's net format; the
// clients attach to the first node, the host).
const simNet = `Ca 1 "H-0000000000000010"
[1] "S-0000000000000001"[1]

Switch 8 "S-0000000000000001"
[1] "H-0000000000000010"[1]
[2] "S-0000000000000002"[2]

Switch 8 "S-0000000000000002"
[2] "S-0000000000000001"[2]
`

// TestAgentOnSimulator writes and reads LFT blocks of real (simulated)
// switches through the agent co-process: a Set's answer carries what the
// switch then holds, a Get reads it again, a route into nothing fails.
func TestAgentOnSimulator(t *testing.T) {
	_, a := simAgent(t)
	ctx := context.Background()
	timeout := ibtest.Budget(t) / 4
	var blk [DataSize]byte
	for i := range blk {
		blk[i] = uint8(i % 3)
	}
	ops := []Op{
		SetOp(AttrLinearForwardTable, 1, "0,1", blk),   // the host's switch
		SetOp(AttrLinearForwardTable, 2, "0,1,2", blk), // the one behind it
		GetOp(AttrLinearForwardTable, 1, "0,1"),
		GetOp(AttrLinearForwardTable, 1, "0,1,5"), // port 5 leads nowhere
	}
	// The ops of a batch are in flight together: the Gets go second.
	res, err := a.Call(ctx, ops[:2], timeout)
	if err != nil {
		t.Fatal(err)
	}
	more, err := a.Call(ctx, ops[2:], timeout)
	if err != nil {
		t.Fatal(err)
	}
	res = append(res, more...)
	for i := 0; i < 3; i++ {
		got, err := res[i].Bytes()
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		if got != blk {
			t.Errorf("op %d: the switch answered %x, want %x", i, got, blk)
		}
	}
	// ibsim drops it at once (status ETIMEDOUT), as it does an SMP whose
	// route crosses a link that went down.
	if !strings.Contains(res[3].Err, "dropped on its route") {
		t.Errorf("a Get over a route into an unconnected port answered %q, error %q; want one saying it was dropped on its route", res[3].Data, res[3].Err)
	}
	// A killed agent is restarted for the next batch.
	pid := a.Pid()
	if pid == 0 {
		t.Fatal("no agent running after a call")
	}
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	res, err = a.Call(ctx, ops[2:3], timeout)
	if err != nil {
		t.Fatalf("after the agent was killed: %v", err)
	}
	if got, err := res[0].Bytes(); err != nil || got != blk {
		t.Errorf("after a restart: %x, %v", got, err)
	}
	if a.Starts() != 2 {
		t.Errorf("agent started %d times, want 2", a.Starts())
	}
	// An agent that cannot open its device fails the call with its reason.
	bad := &Agent{Bin: os.Args[0], Env: []string{envAgent + "=1", "LD_PRELOAD="}, Dir: t.TempDir()}
	defer bad.Close()
	if _, err := bad.Call(ctx, ops[2:3], timeout); err == nil || !strings.Contains(err.Error(), "umad0") {
		t.Errorf("an agent without a device: %v, want an error naming the device", err)
	}
}

// simAgent starts ibsim on simNet and an agent (not yet running) for it.
func simAgent(t *testing.T) (*ibtest.Sim, *Agent) {
	t.Helper()
	ibtest.Require(t, "ibsim")
	net := filepath.Join(t.TempDir(), "net")
	if err := os.WriteFile(net, []byte(simNet), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := ibtest.StartSim(t, net, ibtest.SimConfig{})
	lib, err := ibtest.UMAD2Sim()
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Bin: os.Args[0], Env: []string{envAgent + "=1", "IBSIM_SOCKNAME=" + sim.SockName, "LD_PRELOAD=" + lib}, Dir: t.TempDir()}
	t.Cleanup(a.Close)
	return sim, a
}
