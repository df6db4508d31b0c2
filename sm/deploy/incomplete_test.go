package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/topo"
)

// TestScanIncomplete classifies ibnetdiscover's standard error as
// captured from runs that raced an ibsim Unlink (exit 0, partial dump).
func TestScanIncomplete(t *testing.T) {
	for _, c := range []struct {
		stderr string
		failed bool
	}{
		{"ibwarn: [24796] sim_connect: attached as client 1 at node \"S-0002c90000000001\"\n", false},
		{"", false},
		{"ibwarn: [24808] sim_connect: attached as client 1 at node \"S-0002c90000000001\"\n" +
			"./libibnetdisc/query_smp.c:186; umad (DR path slid 0; dlid 0; 0,5,5,3,1,3 Attr 0x11:0) bad status 110; Connection timed out\n" +
			"./libibnetdisc/query_smp.c:186; umad (DR path slid 0; dlid 0; 0,5,5,3,1,4 Attr 0x11:0) bad status 110; Connection timed out\n", true},
	} {
		err := scanIncomplete(c.stderr)
		if (err != nil) != c.failed || (err != nil && !errors.Is(err, errIncompleteScan)) {
			t.Errorf("%q: %v, want failed=%v", c.stderr, err, c.failed)
		}
		if err != nil && !strings.Contains(err.Error(), "2 failed queries") {
			t.Errorf("error does not count the failed queries: %v", err)
		}
	}
}

// TestDiscoverRefusesIncompleteScan makes a real ibnetdiscover scan
// incomplete without timing luck: ibsim drops every packet of one host
// (console Error at rate 100), as a cable failing mid-scan drops what
// lies beyond it. ibnetdiscover exits 0 with the host missing; the
// deployer keeps its dump, triggers no reroute and scans again. With the
// host answering again the scan is complete and equal to the dump
// (nothing to do); after an Unlink of a switch-to-switch cable a complete
// scan is adopted.
func TestDiscoverRefusesIncompleteScan(t *testing.T) {
	tp, sim := simFatTree42(t)
	dump, err := sim.Run(ibtest.Budget(t)/4, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	fab := filepath.Join(t.TempDir(), "fabric.topo")
	if err := os.WriteFile(fab, dump, 0o644); err != nil {
		t.Fatal(err)
	}
	d := &Deployer{cfg: Config{Fabric: fab}, met: newMetrics(prometheus.NewRegistry()),
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		run: &runner{work: sim.Dir, env: sim.Env(), timeout: ibtest.Budget(t) / 4, limit: 64 << 20}}
	triggers := 0
	trigger := func(string) { triggers++ }
	ctx := context.Background()
	console := func(cmd string) {
		t.Helper()
		if out, err := sim.Console(ibtest.Budget(t)/4, cmd); err != nil || strings.Contains(out, "#") {
			t.Fatalf("%s: %v %s", cmd, err, out)
		}
	}
	host := hostOf(t, dump)
	console(fmt.Sprintf("Error %q 100", host))
	if again := d.scan(ctx, "test", nil, trigger); again != "incomplete-scan" {
		t.Fatalf("a scan that lost host %s was not reported incomplete (rescan %q, last error %q)", host, again, d.disc.LastError)
	}
	if b, _ := os.ReadFile(fab); string(b) != string(dump) || triggers != 0 {
		t.Fatalf("an incomplete scan replaced the dump or triggered a reroute (%d triggers)", triggers)
	}
	if !strings.Contains(d.disc.LastError, "failed queries") {
		t.Errorf("status does not say why the scan was not adopted: %q", d.disc.LastError)
	}
	console(fmt.Sprintf("Error %q 0", host))
	if d.discover(ctx, "test", trigger) || triggers != 0 {
		t.Fatalf("a complete scan of the same fabric: retry or reroute (%d triggers, error %q)", triggers, d.disc.LastError)
	}
	name, port := switchCable(t, tp)
	console(fmt.Sprintf("Unlink %q[%d]", name, port))
	if d.discover(ctx, "test", trigger) || triggers != 1 {
		t.Fatalf("a complete scan after an Unlink was not adopted (%d triggers, error %q)", triggers, d.disc.LastError)
	}
}

// hostOf returns the ibsim node id of the last host of a dump.
func hostOf(t *testing.T, dump []byte) string {
	t.Helper()
	id := ""
	for _, line := range strings.Split(string(dump), "\n") {
		if strings.HasPrefix(line, "Ca") {
			if f := strings.Split(line, `"`); len(f) > 1 {
				id = f[1]
			}
		}
	}
	if id == "" {
		t.Fatal("the dump has no host")
	}
	return id
}

// switchCable returns ibsim's name of a switch with a cable to another
// switch, and that port.
func switchCable(t *testing.T, tp *topo.Topology) (string, int) {
	t.Helper()
	f := tp.Fabric
	for _, l := range f.Links() {
		if f.Nodes[l.A.Node].Kind == fabric.Switch && f.Nodes[l.B.Node].Kind == fabric.Switch {
			return fmt.Sprintf("S-%016x", f.Nodes[l.A.Node].GUID), int(l.A.Port)
		}
	}
	t.Fatal("no switch-to-switch cable")
	return "", 0
}

// simFatTree42 starts ibsim, with its console, on the 2-level fat tree
// k=4 (skipped loudly without ibsim and ibnetdiscover).
func simFatTree42(t *testing.T) (*topo.Topology, *ibtest.Sim) {
	t.Helper()
	ibtest.Require(t, "ibsim", "ibnetdiscover")
	tp, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	net := filepath.Join(t.TempDir(), "fabric.net")
	if err := ibnetdiscover.WriteIBSimFile(net, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	return tp, ibtest.StartSim(t, net, ibtest.SimConfig{Console: true})
}
