package deploy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/topo"
)

// fatTree43 is the 3-level fat tree k=4 with LIDs.
func fatTree43(t *testing.T) *fabric.Fabric {
	t.Helper()
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Fabric.AssignLIDs(0); err != nil {
		t.Fatal(err)
	}
	return tp.Fabric
}

func dumpOf(t *testing.T, f *fabric.Fabric) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ibnetdiscover.Write(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// linkInfo writes iblinkinfo's line mode for node id of f, with the
// ports in down shown without a link and the ports in moved leading to
// the given peer.
func linkInfo(f *fabric.Fabric, id fabric.NodeID, down map[int]bool, moved map[int]string) []byte {
	var b strings.Builder
	n := &f.Nodes[id]
	for p := 1; p < len(n.Ports); p++ {
		fmt.Fprintf(&b, "0x%016x \"%20s\" %6d %4d[  ] ==(", n.GUID, n.Desc, n.Ports[0].LID, p)
		peer := n.Ports[p].Peer
		switch {
		case moved[p] != "":
			fmt.Fprintf(&b, " 4X 25.78125 Gbps Active/  LinkUp)==>  %s\n", moved[p])
		case down[p] || peer.Node < 0:
			b.WriteString("                Down/ Polling)==>             [  ] \"\" ( )\n")
		default:
			pn := &f.Nodes[peer.Node]
			guid, lid := pn.GUID, pn.Ports[0].LID
			if pn.Kind != fabric.Switch { // iblinkinfo names a CA by its port GUID
				guid, lid = pn.Ports[peer.Port].GUID, pn.Ports[peer.Port].LID
			}
			fmt.Fprintf(&b, " 4X 25.78125 Gbps Active/  LinkUp)==>  0x%016x %6d %4d[  ] \"%s\" ( )\n", guid, lid, peer.Port, pn.Desc)
		}
	}
	return []byte(b.String())
}

// TestCutDownCables: a trapping switch whose iblinkinfo shows one
// switch-to-switch port down yields the dump without that cable, equal
// (as ibnetdiscover.ContentHash sees it) to the dump of the fabric with the cable cut;
// a port leading elsewhere, a new link or a lost host cable is left to
// the full discovery.
func TestCutDownCables(t *testing.T) {
	f := fatTree43(t)
	dump := dumpOf(t, f)
	sw := fabric.NodeID(0)
	for f.Nodes[sw].Kind != fabric.Switch {
		sw++
	}
	port := 0
	for p := 1; p < len(f.Nodes[sw].Ports); p++ {
		if pe := f.Nodes[sw].Ports[p].Peer; pe.Node >= 0 && f.Nodes[pe.Node].Kind == fabric.Switch {
			port = p
			break
		}
	}
	guid := f.Nodes[sw].GUID

	got, n, err := cutDownCables(dump, guid, linkInfo(f, sw, map[int]bool{port: true}, nil))
	if err != nil || n != 1 {
		t.Fatalf("cut: %d cables, %v", n, err)
	}
	cut := f.Clone()
	peer := cut.Nodes[sw].Ports[port].Peer
	cut.Nodes[sw].Ports[port].Peer = fabric.NoPeer
	cut.Port(peer).Peer = fabric.NoPeer
	if ibnetdiscover.ContentHash(got) != ibnetdiscover.ContentHash(dumpOf(t, cut)) {
		t.Errorf("the edited dump differs from the dump of the fabric without the cable:\n%s", got)
	}
	if !cablesLess(dump, got, 1) {
		t.Error("cablesLess rejects the edited dump")
	}
	if same, n, err := cutDownCables(dump, guid, linkInfo(f, sw, nil, nil)); err != nil || n != 0 || !bytes.Equal(same, dump) {
		t.Errorf("no port down: %d cables cut, %v", n, err)
	}

	for name, out := range map[string][]byte{
		"a port leads elsewhere": linkInfo(f, sw, nil, map[int]string{port: "0x0002c900000000ff      9    3[  ] \"x\""}),
		"a host cable is down":   linkInfo(f, sw, map[int]bool{1: true}, nil),
		"another switch answers": linkInfo(f, sw+1, nil, nil),
		"nothing listed":         []byte("ibwarn: nothing\n"),
	} {
		if _, _, err := cutDownCables(dump, guid, out); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A link the dump lacks (the cable came back).
	if _, _, err := cutDownCables(got, guid, linkInfo(f, sw, nil, nil)); err == nil {
		t.Error("a link the dump lacks: no error")
	}
}

// TestFabricHashIgnoresOrderAndComments: ibnetdiscover orders its nodes
// by its scan and dates its header; neither is a fabric change.
func TestFabricHashIgnoresOrderAndComments(t *testing.T) {
	tp, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	dump := dumpOf(t, tp.Fabric)
	blocks := strings.Split(strings.TrimSpace(string(dump)), "\n\n")
	for i, j := 0, len(blocks)-1; i < j; i, j = i+1, j-1 {
		blocks[i], blocks[j] = blocks[j], blocks[i]
	}
	reordered := "# Topology file: generated on another day\n\n" + strings.Join(blocks, "\n\n") + "\n"
	if ibnetdiscover.ContentHash(dump) != ibnetdiscover.ContentHash([]byte(reordered)) {
		t.Error("reordered blocks hash differently")
	}
	changed := strings.Replace(string(dump), "[1]", "[9]", 1)
	if ibnetdiscover.ContentHash(dump) == ibnetdiscover.ContentHash([]byte(changed)) {
		t.Error("a changed port hashes the same")
	}
}

// TestDRPaths: directed routes from the node the dump names go through
// switches only, each hop an output port of the node before it.
func TestDRPaths(t *testing.T) {
	f := fatTree43(t)
	host := fabric.NodeID(0)
	for f.Nodes[host].Kind == fabric.Switch {
		host++
	}
	dump := append([]byte(fmt.Sprintf("#\n# Initiated from node %016x port %016x\n#\n", f.Nodes[host].GUID, f.Nodes[host].Ports[1].GUID)), dumpOf(t, f)...)
	if got := localNode(dump); got != f.Nodes[host].GUID {
		t.Fatalf("localNode = %#x, want %#x", got, f.Nodes[host].GUID)
	}
	paths := pathsOfDump(dump)
	if len(paths) != f.Count(fabric.Switch) {
		t.Fatalf("%d routes, the fabric has %d switches", len(paths), f.Count(fabric.Switch))
	}
	for guid, path := range paths {
		id := host
		hops := strings.Split(path, ",")
		if hops[0] != "0" {
			t.Fatalf("route %q does not start at the local node", path)
		}
		for _, h := range hops[1:] {
			var p int
			fmt.Sscan(h, &p)
			id = f.Nodes[id].Ports[p].Peer.Node
			if id < 0 || f.Nodes[id].Kind != fabric.Switch {
				t.Fatalf("route %q leaves the switches", path)
			}
		}
		if f.Nodes[id].GUID != guid {
			t.Errorf("route %q leads to %#x, want %#x", path, f.Nodes[id].GUID, guid)
		}
	}
	if pathsOfDump(dumpOf(t, f)) != nil {
		t.Error("a dump without its initiating node gave routes")
	}
}
