package ibnetdiscover

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// TestGroupedDump reads a hand-written dump that holds every grammar
// element of "ibnetdiscover -g -f" and checks each field.
func TestGroupedDump(t *testing.T) {
	res, err := ParseFile("testdata/grouped.topo")
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fabric
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	if want := []fabric.Chassis{{Num: 1, GUID: 0x8f10400411a08, Hostname: "xsigo-1"}}; !reflect.DeepEqual(f.Chassis, want) {
		t.Errorf("chassis %+v, want %+v", f.Chassis, want)
	}
	if len(f.Header) != 5 || f.Header[0] != "" || !strings.HasPrefix(f.Header[3], " Hand-written") {
		t.Errorf("header %q", f.Header)
	}
	wantNodes := []struct {
		kind  fabric.NodeKind
		guid  uint64
		desc  string
		group string
	}{
		{fabric.Switch, 0x0008f10400411a08, "ISR9288/ISR9096 Voltaire sFB-12D", "Spine Nodes"},
		{fabric.Switch, 0x0008f10400411a10, "ISR9288 Voltaire sLB-24D", "Line Nodes"},
		{fabric.CA, 0x0013970102000010, "xsigo # tca", "Chassis CAs"},
		{fabric.Switch, 0x0002c90000000100, `edge "sw" # 1`, "Non-Chassis Nodes"},
		{fabric.CA, 0x0002c90200223a5c, "node1 HCA-1", "Non-Chassis Nodes"},
		{fabric.Router, 0x0002c90300000001, "router one", "Non-Chassis Nodes"},
		{fabric.CA, 0x0002c90400000001, "a", "Non-Chassis Nodes"},
		{fabric.CA, 0x0002c90400000010, "b", "Non-Chassis Nodes"},
	}
	if len(f.Nodes) != len(wantNodes) {
		t.Fatalf("%d nodes, want %d", len(f.Nodes), len(wantNodes))
	}
	for i, w := range wantNodes {
		n := &f.Nodes[i]
		if n.Kind != w.kind || n.GUID != w.guid || n.Desc != w.desc || n.Annot.Group != w.group {
			t.Errorf("node %d: %v %x %q %q, want %v %x %q %q", i, n.Kind, n.GUID, n.Desc, n.Annot.Group, w.kind, w.guid, w.desc, w.group)
		}
	}
	spine, line, xsigo, edge, node1, rtr, a := &f.Nodes[0], &f.Nodes[1], &f.Nodes[2], &f.Nodes[3], &f.Nodes[4], &f.Nodes[5], &f.Nodes[6]
	if want := (fabric.Annot{Group: "Spine Nodes", ChassisNum: 1, ChassisName: "ISR9288 chassis", ChassisSlot: "ISR9288/ISR9096 Spine 1"}); spine.Annot != want {
		t.Errorf("spine annot %+v, want %+v", spine.Annot, want)
	}
	if spine.VendorID != 0x8f1 || spine.DeviceID != 0x5a30 || spine.SysImageGUID != 0x8f10400411a08 || !spine.Enhanced || spine.Ports[0].LID != 4 {
		t.Errorf("spine %+v", spine)
	}
	if p := spine.Ports[1]; p.Ext != 1 || p.Info != "s=2 w=2 v=4" || p.Width != fabric.Width4x || p.Speed != fabric.DDR || p.Peer != (fabric.PortRef{Node: 1, Port: 13}) {
		t.Errorf("spine port 1 %+v", p)
	}
	if line.Enhanced || line.Ports[1].Ext != 9 || line.Ports[2].Info != "slot 2" || line.Ports[13].Ext != 0 {
		t.Errorf("line switch %+v", line)
	}
	if want := (fabric.Annot{Group: "Chassis CAs", ChassisNum: 1, ChassisName: "xsigo-1", XsigoSlot: 2, SCP: true}); xsigo.Annot != want {
		t.Errorf("xsigo annot %+v, want %+v", xsigo.Annot, want)
	}
	if xsigo.Ports[1].Ext != 0 || line.Ports[2].Ext != 10 {
		t.Errorf("Ext: xsigo port %d, want 0; line switch port 2 %d, want 10", xsigo.Ports[1].Ext, line.Ports[2].Ext)
	}
	if edge.Ports[0].GUID != 0x2c90000000101 || edge.Ports[0].LID != 20 || edge.Ports[0].LMC != 1 {
		t.Errorf("edge port 0 %+v", edge.Ports[0])
	}
	if p := edge.Ports[1]; p.Width != fabric.WidthUnknown || p.Speed != fabric.SpeedUnknown {
		t.Errorf("edge port 1 %+v, want ?? ???", p)
	}
	if p := edge.Ports[2]; p.Width != fabric.Width12x || p.Speed != fabric.EDR || p.Info != "s=4 w=8 v=4 e=2" {
		t.Errorf("edge port 2 %+v", p)
	}
	if node1.NumPorts() != 2 || node1.Ports[2].GUID != 0x2c90200223a5e || node1.Ports[2].LID != 11 || node1.Ports[1].Ext != 0 {
		t.Errorf("node1 (Hca) %+v", node1)
	}
	if rtr.Ports[1].LID != 30 || rtr.Ports[1].Peer != (fabric.PortRef{Node: 3, Port: 2}) {
		t.Errorf("router %+v", rtr)
	}
	if a.SysImageGUID != 0 || a.Annot.ChassisNum != 7 || a.Ports[1].Peer != (fabric.PortRef{Node: 7, Port: 1}) || a.Ports[1].Speed != fabric.HDR {
		t.Errorf("CA a %+v", a)
	}
	if got := len(f.Links()); got != 6 {
		t.Errorf("%d links, want 6", got)
	}
	text := roundTrip(t, f)
	// the grouping survives as text too
	for _, want := range []string{"\nChassis 1 (guid 0x8f10400411a08)\nHostname: xsigo-1\n", "\n# Spine Nodes\nvendid=0x8f1\n",
		"\nNon-Chassis Nodes\n\nvendid=", "sysimgguid=0x13970102000013\t\t# Chassis 1 (xsigo-1) slot 2\n",
		"devid=0x1017\n\t\t# Chassis 7\ncaguid=0x2c90400000001\n", "[2][ext 10]\t\"H-0013970102000010\"[1](13970102000011) \t\t# \"xsigo # tca\" lid 12 4xSDR slot 2\n",
		"\"H-0002c90400000010\"[1] (2c90400000011) \t\t# lid 40 lmc 0 \"b\" lid 41 4xHDR\n"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("written dump lacks %q", want)
		}
	}
}

// base is a small valid dump; the malformed-input table mutates its lines.
const base = `#
# Topology file: test
` + `
vendid=0x2c9
devid=0xcb20
sysimgguid=0x2c90000000001
switchguid=0x2c90000000001(2c90000000001)
Switch	4 "S-0002c90000000001"		# "sw1" enhanced port 0 lid 1 lmc 0
[1]	"H-0002c90100000002"[1](2c90100000003) 		# "h1" lid 2 4xEDR
[2]	"H-0002c90100000004"[1](2c90100000005) 		# "h2" lid 3 4xEDR

vendid=0x2c9
devid=0x1017
caguid=0x2c90100000002
Ca	1 "H-0002c90100000002"		# "h1"
[1](2c90100000003) 	"S-0002c90000000001"[1]		# lid 2 lmc 0 "sw1" lid 1 4xEDR

vendid=0x2c9
devid=0x1017
caguid=0x2c90100000004
Ca	1 "H-0002c90100000004"		# "h2"
[1](2c90100000005) 	"S-0002c90000000001"[2]		# lid 3 lmc 0 "sw1" lid 1 4xEDR
`

// mutate replaces lines of base (1-based); "" deletes nothing, it sets an
// empty line.
func mutate(repl map[int]string) string {
	lines := strings.Split(base, "\n")
	for n, s := range repl {
		lines[n-1] = s
	}
	return strings.Join(lines, "\n")
}

func TestBaseIsValid(t *testing.T) {
	res := mustParse(t, base)
	if len(res.Warnings) != 0 || len(res.Fabric.Links()) != 2 {
		t.Fatalf("base: %d links, warnings %v", len(res.Fabric.Links()), res.Warnings)
	}
	roundTrip(t, res.Fabric)
}

// TestLenientLayout checks the layout variations real files have.
func TestLenientLayout(t *testing.T) {
	want := mustParse(t, base).Fabric
	cases := map[string]struct {
		text     string
		warnings int
	}{
		"CRLF":                       {strings.ReplaceAll(base, "\n", "\r\n"), 0},
		"spaces for tabs":            {strings.ReplaceAll(base, "\t", " "), 0},
		"many blanks":                {strings.ReplaceAll(base, "\t", " \t  "), 0},
		"no final newline":           {strings.TrimSuffix(base, "\n"), 0},
		"whitespace-only lines":      {strings.ReplaceAll(base, "\n\nvendid", "\n \t \nvendid"), 0},
		"no blank before a block":    {strings.ReplaceAll(base, "4xEDR\n\nvendid", "4xEDR\nvendid"), 0},
		"blank line among ports":     {mutate(map[int]string{9: "[1]\t\"H-0002c90100000002\"[1](2c90100000003) \t\t# \"h1\" lid 2 4xEDR\n"}), 0},
		"comment in a block":         {mutate(map[int]string{5: "devid=0xcb20\n# a remark"}), 0},
		"stderr line in a block":     {mutate(map[int]string{9: "[1]\t\"H-0002c90100000002\"[1](2c90100000003) \t\t# \"h1\" lid 2 4xEDR\nibwarn: [1234] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1)"}), 1},
		"stderr line between blocks": {mutate(map[int]string{11: "\nsrc/ibnetdisc.c:812; Failed to discover node"}), 1},
		"stray text between blocks":  {mutate(map[int]string{11: "\nsomething else entirely\n"}), 1},
		"stray text in the preamble": {"garbage before the header\n" + base, 1},
		"comments after the nodes":   {base + "\n# trailing remark\n", 0},
		"Hca keyword":                {strings.Replace(base, "Ca\t1 \"H-0002c90100000004\"", "Hca\t1 \"H-0002c90100000004\"", 1), 0},
		"peer switch port GUID":      {mutate(map[int]string{16: "[1](2c90100000003) \t\"S-0002c90000000001\"[1](2c90000000001)\t\t# lid 2 lmc 0 \"sw1\" lid 1 4xEDR"}), 0},
		"peer description with lid":  {mutate(map[int]string{16: "[1](2c90100000003) \t\"S-0002c90000000001\"[1]\t\t# lid 2 lmc 0 \"sw1\" lid 9 4xQDR\" lid 1 4xEDR"}), 0},
		"uppercase hex":              {strings.ReplaceAll(base, "2c9", "2C9"), 0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Parse(strings.NewReader(c.text), "test.topo")
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, c.text)
			}
			if len(res.Warnings) != c.warnings {
				t.Errorf("%d warnings, want %d: %v", len(res.Warnings), c.warnings, res.Warnings)
			}
			for _, w := range res.Warnings {
				if w.Kind != Skipped {
					t.Errorf("warning kind %d, want Skipped: %v", w.Kind, w)
				}
			}
			got := res.Fabric
			got.Header = want.Header // layout cases may add header lines
			if d := diffFabric(want, got); d != "" {
				t.Errorf("fabric differs from base: %s", d)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	// two CAs with the same LID and two ports with one GUID: several problems
	text := mutate(map[int]string{
		10: "[2]\t\"H-0002c90100000004\"[1](2c90100000003) \t\t# \"h2\" lid 2 4xEDR",
		22: "[1](2c90100000003) \t\"S-0002c90000000001\"[2]\t\t# lid 2 lmc 0 \"sw1\" lid 1 4xEDR",
	})
	_, err := Parse(strings.NewReader(text), "dup.topo")
	var list ErrorList
	if !errors.As(err, &list) || len(list) < 2 {
		t.Fatalf("want an ErrorList of several problems, got %v", err)
	}
	if !errors.Is(err, fabric.ErrDuplicateLID) || !errors.Is(err, fabric.ErrDuplicateGUID) {
		t.Errorf("errors.Is must see both sentinels: %v", err)
	}
	var first *Error
	if !errors.As(err, &first) || first.Line != list[0].Line || first.File != "dup.topo" {
		t.Errorf("errors.As gives %+v, want the first of the list", first)
	}
	for i := 1; i < len(list); i++ {
		if list[i].Line < list[i-1].Line {
			t.Errorf("list not ordered by line: %d before %d", list[i-1].Line, list[i].Line)
		}
	}
	if !strings.HasPrefix(err.Error(), "ibnetdiscover: dup.topo:22: ") {
		t.Errorf("message %q", err.Error())
	}
}

// TestExtFromPeer: an [ext N] printed only on the far end's line (CA lines
// never print their own) fills the port's Ext, and the written dump prints
// it on both lines.
func TestExtFromPeer(t *testing.T) {
	res := mustParse(t, mutate(map[int]string{16: "[1](2c90100000003) \t\"S-0002c90000000001\"[1][ext 7]\t\t# lid 2 lmc 0 \"sw1\" lid 1 4xEDR"}))
	if got := res.Fabric.Nodes[0].Ports[1].Ext; got != 7 {
		t.Fatalf("switch port 1 Ext %d, want 7", got)
	}
	text := roundTrip(t, res.Fabric)
	if !bytes.Contains(text, []byte("[1][ext 7]\t\"H-0002c90100000002\"")) {
		t.Errorf("written switch line lacks [ext 7]:\n%s", text)
	}
}
