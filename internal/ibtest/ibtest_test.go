package ibtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recTB records the first Skipf/Fatalf instead of stopping the test.
type recTB struct {
	testing.TB
	first string
}

func (r *recTB) Skipf(format string, args ...any) {
	if r.first == "" {
		r.first = "skip: " + fmt.Sprintf(format, args...)
	}
}

func (r *recTB) Fatalf(format string, args ...any) {
	if r.first == "" {
		r.first = "fatal: " + fmt.Sprintf(format, args...)
	}
}

func TestRequireSkipsOrFails(t *testing.T) {
	t.Setenv(EnvRequire, "")
	r := &recTB{TB: t}
	Require(r, "nuesm-no-such-program")
	if !strings.HasPrefix(r.first, "skip: ") || !strings.Contains(r.first, "nuesm-no-such-program") {
		t.Fatalf("without %s: got %q, want a skip naming the program", EnvRequire, r.first)
	}
	t.Setenv(EnvRequire, "1")
	r = &recTB{TB: t}
	Require(r, "nuesm-no-such-program")
	if !strings.HasPrefix(r.first, "fatal: ") {
		t.Fatalf("with %s=1: got %q, want a failure", EnvRequire, r.first)
	}
}

// tinyNet is a two-switch fabric with one CA on each switch, in the
// ibnetdiscover format ibsim reads.
const tinyNet = `
switchguid=0x0002c90000000001
Switch	4 "S-0002c90000000001"		# "tiny sw1" enhanced port 0 lid 1 lmc 0
[1]	"H-0002c90100000002"[1](2c90100000003)		# "host1 HCA-1" lid 3 4xEDR
[3]	"S-0002c90000000002"[3]		# "tiny sw2" lid 2 4xEDR

switchguid=0x0002c90000000002
Switch	4 "S-0002c90000000002"		# "tiny sw2" enhanced port 0 lid 2 lmc 0
[1]	"H-0002c90100000004"[1](2c90100000005)		# "host2 HCA-1" lid 4 4xEDR
[3]	"S-0002c90000000001"[3]		# "tiny sw1" lid 1 4xEDR

caguid=0x0002c90100000002
Ca	1 "H-0002c90100000002"		# "host1 HCA-1"
[1](2c90100000003)	"S-0002c90000000001"[1]		# lid 3 lmc 0 "tiny sw1" lid 1 4xEDR

caguid=0x0002c90100000004
Ca	1 "H-0002c90100000004"		# "host2 HCA-1"
[1](2c90100000005)	"S-0002c90000000002"[1]		# lid 4 lmc 0 "tiny sw2" lid 2 4xEDR
`

func TestSimOpenSMAndClient(t *testing.T) {
	Require(t, "ibsim", "opensm", "ibroute")
	net := filepath.Join(t.TempDir(), "tiny.net")
	if err := os.WriteFile(net, []byte(tinyNet), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := StartSim(t, net, SimConfig{})
	osm, err := RunOpenSMOnce(t, sim, OpenSMConfig{
		LIDs: []LIDAssignment{
			{GUID: 0x0002c90000000001, LID: 1}, {GUID: 0x0002c90000000002, LID: 2},
			{GUID: 0x0002c90100000003, LID: 3}, {GUID: 0x0002c90100000005, LID: 4},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := osm.LogErrors(); len(errs) > 0 {
		t.Errorf("OpenSM logged errors:\n%s", strings.Join(errs, "\n"))
	}
	dump, err := os.ReadFile(osm.Dump("opensm-lfts.dump"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dump), "Unicast lids [0-4] of switch Lid 1 guid 0x0002c90000000001 ('tiny sw1'):") {
		t.Errorf("unexpected LFT dump (LIDs not pinned?):\n%s", dump)
	}
	out, err := sim.Run(Budget(t), "ibroute", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "0x0004 001 : (Channel Adapter portguid 0x0002c90100000005: 'host2 HCA-1')") {
		t.Errorf("ibroute 2:\n%s", out)
	}
}

// TestClientsRunInSimDir: a client killed by a signal leaves umad2sim's
// sys-<pid> directory in the simulator's directory, not in the test's
// working directory (the package's source).
func TestClientsRunInSimDir(t *testing.T) {
	Require(t, "ibsim", "ibping")
	net := filepath.Join(t.TempDir(), "tiny.net")
	if err := os.WriteFile(net, []byte(tinyNet), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := StartSim(t, net, SimConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, err := sim.Command(ctx, "ibping", "-S") // a server: runs until killed
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sys := fmt.Sprintf("sys-%d", cmd.Process.Pid)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	in := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, sys))
		return err == nil
	}
	deadline := Deadline(t)
	for !in(sim.Dir) && !in(wd) {
		if time.Now().After(deadline) {
			t.Fatalf("ibping -S made no %s in %s or %s", sys, sim.Dir, wd)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel() // SIGTERM (Command): ibping ends without cleaning up
	if err := cmd.Wait(); err == nil {
		t.Fatal("ibping -S ended on its own")
	}
	if in(wd) {
		_ = os.RemoveAll(filepath.Join(wd, sys))
		t.Fatalf("the client ran in %s: its %s was left there", wd, sys)
	}
	if !in(sim.Dir) {
		t.Errorf("ibping -S, killed, left no %s in %s: umad2sim cleaned up after all?", sys, sim.Dir)
	}
}
