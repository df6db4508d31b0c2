package ibnetdiscover

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/topo"
)

func TestForIBSim(t *testing.T) {
	corpusFiles(t)
	res, err := ParseFile(filepath.Join(corpusDir, "example-3.topo"))
	if err != nil {
		t.Fatal(err)
	}
	// ConnectX-4 CAs answer with port GUID = node GUID; ibsim cannot.
	err = WriteIBSim(&bytes.Buffer{}, res.Fabric)
	if !errors.Is(err, ErrIBSim) || !strings.Contains(err.Error(), "H-e41d2d030061f957[1]: port GUID 0xe41d2d030061f957 becomes 0xe41d2d030061f958") {
		t.Fatalf("WriteIBSim(example-3) = %v, want ErrIBSim naming the ConnectX-4 port", err)
	}
	g, changes := ForIBSim(res.Fabric)
	if len(changes) != 2 {
		t.Errorf("changes %q, want the two ConnectX-4 port GUIDs", changes)
	}
	if _, again := ForIBSim(g); len(again) != 0 {
		t.Errorf("ForIBSim is not a fixed point: %q", again)
	}
	if err := WriteIBSim(&bytes.Buffer{}, g); err != nil {
		t.Errorf("WriteIBSim(ForIBSim(f)): %v", err)
	}
	if res.Fabric.Nodes[1].Ports[8].GUID != 0 || res.Fabric.Node(mustGUID(t, res.Fabric, 0xe41d2d030061f957)).Ports[1].GUID != 0xe41d2d030061f957 {
		t.Error("ForIBSim changed its argument")
	}

	// example-1: mismatched widths are equalised silently
	res1, err := ParseFile(filepath.Join(corpusDir, "example-1.topo"))
	if err != nil {
		t.Fatal(err)
	}
	g1, ch1 := ForIBSim(res1.Fabric)
	widths := 0
	for _, c := range ch1 {
		if strings.Contains(c, "4xSDR / 1xSDR becomes 1xSDR on both ends") {
			widths++
		}
	}
	if widths != 2 || len(ch1) != 7 { // and five nodes without sysimgguid
		t.Errorf("example-1 changes %q", ch1)
	}
	if ws := g1.Warnings(); len(ws) != 0 {
		t.Errorf("ForIBSim left mismatches: %v", ws)
	}
	if err := WriteIBSim(&bytes.Buffer{}, res1.Fabric); err != nil {
		t.Errorf("WriteIBSim(example-1): %v", err)
	}
}

func TestIBSimDescriptions(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "S-0000000000000001",
		`edge "sw" #1`:            `edge 'sw' #1`,
		"tab\there":               "tab here",
		strings.Repeat("x", 70):   strings.Repeat("x", 63),
		"plain name mlx5_0":       "plain name mlx5_0",
		"caf\xc3\xa9":             "caf  ",
		"has=equals but is fine ": "has=equals but is fine ",
	} {
		if got := ibsimDesc(in, "S-0000000000000001"); got != want {
			t.Errorf("ibsimDesc(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIBSimArgs(t *testing.T) {
	b := fabric.NewBuilder()
	for i := 0; i < 300; i++ {
		if _, err := b.AddNode(fabric.Switch, uint64(i+1), 36, ""); err != nil {
			t.Fatal(err)
		}
	}
	f := b.Fabric()
	if got, want := IBSimArgs(f), []string{"-S", "308"}; !reflect.DeepEqual(got, want) {
		t.Errorf("IBSimArgs = %q, want %q", got, want)
	}
	f.Nodes[0].Ports[0].LID = 40000
	if got := IBSimArgs(f); len(got) != 4 || got[2] != "-L" || got[3] != "49152" {
		t.Errorf("IBSimArgs with LID 40000 = %q, want -L 49152 too", got)
	}
	tp, err := topo.Ring(5, 1, nil)
	if err != nil {
		t.Skip(err)
	}
	if got := IBSimArgs(tp.Fabric); got != nil {
		t.Errorf("small fabric needs no options, got %q", got)
	}
}

// ibsimFixture is a fabric with every kind of cable ibsim must reproduce:
// a router, a 2-port CA, a loopback, descriptions with '=' and '#',
// base and enhanced port 0, LMC, mismatched and unknown widths.
func ibsimFixture(t *testing.T) *fabric.Fabric {
	t.Helper()
	res := mustParse(t, `
vendid=0x2c9
devid=0xcb20
switchguid=0x2c90000000001(2c90000000001)
Switch	8 "S-0002c90000000001"		# "sw1 a=b w=9" enhanced port 0 lid 1 lmc 0
[1]	"H-0002c90100000002"[1](2c90100000003) 		# "h1 #1" lid 4 4xHDR
[2]	"S-0002c90000000002"[2]		# "sw2" lid 2 12xQDR
[3]	"R-0002c90200000002"[1](2c90200000003) 		# "rtr" lid 30 4xFDR
[4]	"S-0002c90000000001"[5]		# "sw1 a=b w=9" lid 1 4xEDR
[5]	"S-0002c90000000001"[4]		# "sw1 a=b w=9" lid 1 4xEDR

vendid=0x2c9
devid=0xc738
sysimgguid=0x2c90000000010
switchguid=0x2c90000000002(2c90000000002)
Switch	8 "S-0002c90000000002"		# "sw2" base port 0 lid 2 lmc 0
[2]	"S-0002c90000000001"[2]		# "sw1 a=b w=9" lid 1 1xQDR
[3]	"H-0002c90100000002"[2](2c90100000004) 		# "h1 #1" lid 6 ?????

vendid=0x15b3
devid=0x1017
sysimgguid=0x2c90100000005
caguid=0x2c90100000002
Ca	2 "H-0002c90100000002"		# "h1 #1"
[1](2c90100000003) 	"S-0002c90000000001"[1]		# lid 4 lmc 1 "sw1 a=b w=9" lid 1 4xHDR
[2](2c90100000004) 	"S-0002c90000000002"[3]		# lid 6 lmc 1 "sw2" lid 2 ?????

vendid=0x2c9
devid=0x1
rtguid=0x2c90200000002
Rt	1 "R-0002c90200000002"		# "rtr"
[1](2c90200000003) 	"S-0002c90000000001"[3]		# lid 30 lmc 0 "sw1 a=b w=9" lid 1 4xFDR
`)
	return res.Fabric
}

func TestIBSimDialect(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteIBSim(&buf, ibsimFixture(t)); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{
		"[1](2c90200000003) \t\"S-0002c90000000001\"[3]\t\t# lid 30 lmc 0 \"\" lid 1 4xFDR w=3 s=7 e=1\n\ndo Baselid \"R-0002c90200000002\"[1] 30\n",
		"[2]\t\"S-0002c90000000001\"[2]\t\t# \"\" lid 1 1xQDR\n", // peer description with '=' left out
		"[2]\t\"S-0002c90000000002\"[2]\t\t# \"sw2\" lid 2 1xQDR\n",
		"[3]\t\"H-0002c90100000002\"[2](2c90100000004) \t\t# \"h1 #1\" lid 6 4xSDR\n",
		"sysimgguid=0x2c90000000001\n", // defaulted to the node GUID
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ibsim net file lacks %q", want)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	inPorts := false
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if len(l) >= 255 {
			t.Errorf("line %d has %d bytes; ibsim reads 255", n, len(l))
		}
		if inPorts && l != "" && l[0] != '[' {
			t.Errorf("line %d %q follows a port list without a blank line", n, l)
		}
		inPorts = strings.HasPrefix(l, "[") || strings.HasPrefix(l, "Switch") || strings.HasPrefix(l, "Ca") || strings.HasPrefix(l, "Rt")
	}
}

// TestIBSimLoads runs the real ibsim on WriteIBSim's output and checks that
// ibnetdiscover, run through umad2sim against it, reports what ForIBSim
// says: node GUIDs, port GUIDs, descriptions, kinds, ids, LIDs, widths,
// speeds and cables of every node reachable from ibsim's attach point.
func TestIBSimLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ibsim and ibnetdiscover")
	}
	const umad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
	// In CI (NUESM_REQUIRE_TOOLS=1) a missing tool is a failure, not a skip.
	skip := t.Skipf
	if os.Getenv("NUESM_REQUIRE_TOOLS") != "" {
		skip = t.Fatalf
	}
	for _, tool := range []string{"ibsim", "ibnetdiscover"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip("SKIPPING: %s not installed (Debian ibsim-utils, infiniband-diags)", tool)
		}
	}
	if _, err := os.Stat(umad2sim); err != nil {
		skip("SKIPPING: %s not installed (Debian libumad2sim0)", umad2sim)
	}
	caToCA := mustParse(t, `
caguid=0x2c90400000001
Ca	1 "H-0002c90400000001"		# "a"
[1](2c90400000002) 	"H-0002c90400000010"[1] (2c90400000011) 		# lid 40 lmc 0 "b" lid 41 4xHDR

caguid=0x2c90400000010
Ca	1 "H-0002c90400000010"		# "b"
[1](2c90400000011) 	"H-0002c90400000001"[1] (2c90400000002) 		# lid 41 lmc 0 "a" lid 40 4xHDR
`).Fabric
	fabrics := map[string]*fabric.Fabric{"fixture": ibsimFixture(t), "CA to CA": caToCA}
	// Generated fabrics must come back unchanged: the generators follow
	// ibsim's GUID conventions, so ForIBSim has nothing to adjust.
	generated := map[string]func() (*topo.Topology, error){
		"ring5":       func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) },
		"fattree-4-3": func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) },
		"torus-4x4x4": func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 4}, 2, false) },
	}
	for name, gen := range generated {
		tp, err := gen()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, changes := ForIBSim(tp.Fabric); len(changes) != 0 {
			t.Fatalf("%s: ibsim cannot present the generated fabric as it is: %v", name, changes)
		}
		fabrics[name] = tp.Fabric
	}
	for _, name := range []string{"example-1.topo", "example-3.topo", "hpc-cluster-2014-8sw-144ca.topo"} {
		if res, err := ParseFile(filepath.Join(corpusDir, name)); err == nil {
			fabrics[name] = res.Fabric
		}
	}
	for name, f := range fabrics {
		t.Run(name, func(t *testing.T) {
			want, _ := ForIBSim(f)
			net := filepath.Join(t.TempDir(), "net")
			if err := WriteIBSimFile(net, want); err != nil {
				t.Fatal(err)
			}
			dump := runIBSim(t, net, IBSimArgs(want), umad2sim)
			res, err := Parse(bytes.NewReader(dump), "ibnetdiscover-output")
			if err != nil {
				t.Fatalf("Parse(ibnetdiscover output): %v", err)
			}
			compareByGUID(t, want, reachable(want), res.Fabric)
		})
	}
}

var ibsimRuns atomic.Int32

// runIBSim starts ibsim on net, runs ibnetdiscover against it and stops
// ibsim again (by its pid).
func runIBSim(t *testing.T, net string, args []string, umad2sim string) []byte {
	t.Helper()
	sock := fmt.Sprintf("nuesm-ibnd-%d-%d", os.Getpid(), ibsimRuns.Add(1))
	var simOut bytes.Buffer
	sim := exec.Command("ibsim", append(append([]string{"-s", "-n"}, args...), net)...)
	sim.Env = append(os.Environ(), "IBSIM_SOCKNAME="+sock)
	sim.Stdout, sim.Stderr = &simOut, &simOut
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { sim.Wait(); close(exited) }()
	defer func() {
		sim.Process.Kill()
		<-exited
	}()
	ready, start := false, time.Now()
	for deadline := ibtest.Deadline(t); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("ibsim exited: %s", simOut.String())
		default:
		}
		if b, _ := os.ReadFile("/proc/net/unix"); bytes.Contains(b, []byte("@"+sock+":ctl")) {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatalf("ibsim not ready after %v: %s", time.Since(start).Round(time.Second), simOut.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), ibtest.Budget(t))
	defer cancel()
	var stderr bytes.Buffer
	disc := exec.CommandContext(ctx, "ibnetdiscover")
	disc.Env = append(os.Environ(), "IBSIM_SOCKNAME="+sock, "LD_PRELOAD="+umad2sim)
	disc.Stderr = &stderr
	out, err := disc.Output()
	if err != nil {
		t.Fatalf("ibnetdiscover: %v: %s\nibsim: %s", err, stderr.String(), simOut.String())
	}
	return out
}

// reachable lists the nodes ibnetdiscover can find from ibsim's attach
// point, the first node of the file: directed routes pass switches only.
func reachable(f *fabric.Fabric) map[uint64]fabric.NodeID {
	seen := map[fabric.NodeID]bool{0: true}
	queue := []fabric.NodeID{0}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		n := &f.Nodes[id]
		if n.Kind != fabric.Switch && id != 0 {
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			if peer := n.Ports[p].Peer; peer.Valid() && !seen[peer.Node] {
				seen[peer.Node] = true
				queue = append(queue, peer.Node)
			}
		}
	}
	out := map[uint64]fabric.NodeID{}
	for id := range seen {
		out[f.Nodes[id].GUID] = id
	}
	return out
}

// compareByGUID compares the nodes keep of want with the nodes of got,
// matching nodes and cable ends by GUID (ibnetdiscover has its own order).
func compareByGUID(t *testing.T, want *fabric.Fabric, keep map[uint64]fabric.NodeID, got *fabric.Fabric) {
	t.Helper()
	if len(got.Nodes) != len(keep) {
		t.Errorf("ibnetdiscover reports %d nodes, want %d", len(got.Nodes), len(keep))
	}
	for i := range got.Nodes {
		g := &got.Nodes[i]
		id, ok := keep[g.GUID]
		if !ok {
			t.Errorf("unexpected node %s", fabric.NodeIDString(g.Kind, g.GUID))
			continue
		}
		w := &want.Nodes[id]
		name := fabric.NodeIDString(w.Kind, w.GUID)
		if g.Kind != w.Kind || g.Desc != w.Desc || g.VendorID != w.VendorID || g.DeviceID != w.DeviceID ||
			g.SysImageGUID != w.SysImageGUID || g.Enhanced != w.Enhanced || len(g.Ports) != len(w.Ports) {
			t.Errorf("%s: got %v %q vend %x dev %x sys %x enh %v ports %d, want %v %q vend %x dev %x sys %x enh %v ports %d",
				name, g.Kind, g.Desc, g.VendorID, g.DeviceID, g.SysImageGUID, g.Enhanced, g.NumPorts(),
				w.Kind, w.Desc, w.VendorID, w.DeviceID, w.SysImageGUID, w.Enhanced, w.NumPorts())
			continue
		}
		for p := range w.Ports {
			gp, wp := g.Ports[p], w.Ports[p]
			if p > 0 && gp.Cabled() != wp.Cabled() {
				t.Errorf("%s[%d]: cabled %v, want %v", name, p, gp.Cabled(), wp.Cabled())
				continue
			}
			if p > 0 && !wp.Cabled() {
				continue
			}
			if gp.GUID != wp.GUID || gp.LID != wp.LID || gp.LMC != wp.LMC || (p > 0 && (gp.Width != wp.Width || gp.Speed != wp.Speed)) {
				t.Errorf("%s[%d]: got GUID %x LID %d LMC %d %s%s, want GUID %x LID %d LMC %d %s%s",
					name, p, gp.GUID, gp.LID, gp.LMC, gp.Width, gp.Speed, wp.GUID, wp.LID, wp.LMC, wp.Width, wp.Speed)
			}
			if p > 0 {
				gpeer, wpeer := &got.Nodes[gp.Peer.Node], &want.Nodes[wp.Peer.Node]
				if gpeer.GUID != wpeer.GUID || gp.Peer.Port != wp.Peer.Port {
					t.Errorf("%s[%d]: cabled to %s[%d], want %s[%d]", name, p,
						fabric.NodeIDString(gpeer.Kind, gpeer.GUID), gp.Peer.Port, fabric.NodeIDString(wpeer.Kind, wpeer.GUID), wp.Peer.Port)
				}
			}
		}
	}
}
