package deploy

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/internal/umad"
)

// envAgent makes the test binary an SMP agent (the simulator's
// LD_PRELOAD library must be loaded when the process starts).
const envAgent = "NUESM_DEPLOY_TEST_AGENT"

func TestMain(m *testing.M) {
	umad.ServeIfChild(envAgent)
	os.Exit(m.Run())
}

// TestPortsBySMP reads a trapping switch's ports with PortInfo and
// NodeInfo Gets on a simulated 2-level fat tree: with every cable up the
// dump stays as it is (every peer, host ports named by port GUID, as
// the dump has it); after an ibsim Unlink of a switch-to-switch cable
// exactly that cable is cut, as a discovery of the fabric shows it.
func TestPortsBySMP(t *testing.T) {
	_, sim := simFatTree42(t)
	lib, err := ibtest.UMAD2Sim()
	if err != nil {
		t.Fatal(err)
	}
	d := &Deployer{cfg: Config{Apply: ApplySMP, ToolTimeout: ibtest.Budget(t) / 4}, met: newMetrics(prometheus.NewRegistry()),
		agent: &umad.Agent{Bin: os.Args[0], Env: []string{envAgent + "=1", "IBSIM_SOCKNAME=" + sim.SockName, "LD_PRELOAD=" + lib}, Dir: t.TempDir()}}
	defer d.agent.Close()
	timeout := ibtest.Budget(t) / 4
	dump, err := sim.Run(timeout, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	paths := pathsOfDump(dump)
	res, err := ibnetdiscover.Parse(strings.NewReader(string(dump)), "dump")
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fabric
	// A switch with a cable to another switch, and that port: not the
	// one the directed route enters by (NodeInfo's LocalPortNum).
	ctx := context.Background()
	var sw fabric.NodeID = -1
	var path string
	port := 0
	for id := range f.Nodes {
		n := &f.Nodes[id]
		if n.Kind != fabric.Switch || paths[n.GUID] == "" {
			continue
		}
		res, err := d.smpCall(ctx, []umad.Op{umad.GetOp(umad.AttrNodeInfo, 0, paths[n.GUID])})
		if err != nil {
			t.Fatal(err)
		}
		ni, err := res[0].Bytes()
		if err != nil {
			t.Fatal(err)
		}
		for p := 1; p < len(n.Ports) && port == 0; p++ {
			if pe := n.Ports[p].Peer; pe.Node >= 0 && f.Nodes[pe.Node].Kind == fabric.Switch && p != int(ni[36]) {
				sw, path, port = fabric.NodeID(id), paths[n.GUID], p
			}
		}
		if port != 0 {
			break
		}
	}
	if port == 0 {
		t.Fatal("no switch-to-switch cable off the directed routes")
	}
	guid := f.Nodes[sw].GUID
	seen, err := d.portsBySMP(ctx, dump, guid, path)
	if err != nil {
		t.Fatal(err)
	}
	if same, n, err := cutSeen(dump, guid, seen); err != nil || n != 0 || string(same) != string(dump) {
		t.Fatalf("every cable up: %d cut, %v", n, err)
	}
	name := fmt.Sprintf("S-%016x", guid)
	if out, err := sim.Console(timeout, fmt.Sprintf("Unlink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("ibsim Unlink: %v %s", err, out)
	}
	if seen, err = d.portsBySMP(ctx, dump, guid, path); err != nil {
		t.Fatal(err)
	}
	cut, n, err := cutSeen(dump, guid, seen)
	if err != nil || n != 1 || !cablesLess(dump, cut, 1) {
		t.Fatalf("after Unlink of port %d: %d cut, %v", port, n, err)
	}
	after, err := sim.Run(timeout, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dumpCables(t, cut), dumpCables(t, after); a != b {
		t.Errorf("the edited dump has cables\n%s\na discovery after the Unlink finds\n%s", a, b)
	}
}

// dumpCables lists a dump's cables (GUID[port]-GUID[port]) in order.
func dumpCables(t *testing.T, dump []byte) string {
	t.Helper()
	res, err := ibnetdiscover.Parse(strings.NewReader(string(dump)), "dump")
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fabric
	var out []string
	for _, l := range f.Links() {
		a := fmt.Sprintf("%016x[%d]", f.Nodes[l.A.Node].GUID, l.A.Port)
		b := fmt.Sprintf("%016x[%d]", f.Nodes[l.B.Node].GUID, l.B.Port)
		if b < a {
			a, b = b, a
		}
		out = append(out, a+"-"+b)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
