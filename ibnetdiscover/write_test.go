package ibnetdiscover

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

func TestWriteGenerated(t *testing.T) {
	for name, build := range map[string]func() (*topo.Topology, error){
		"ring5":    func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) },
		"clos2-8":  func() (*topo.Topology, error) { return topo.Clos2(8) },
		"ring-cut": func() (*topo.Topology, error) { return topo.Ring(5, 2, []int{2, 4}) },
	} {
		t.Run(name, func(t *testing.T) {
			tp, err := build()
			if err != nil {
				t.Skipf("topo generator not usable right now: %v", err)
			}
			text := roundTrip(t, tp.Fabric)
			res := mustParse(t, string(text))
			if len(res.Warnings) != 0 {
				t.Errorf("warnings on a generated fabric: %v", res.Warnings)
			}
		})
	}
}

// grouped builds, in code, a grouped fabric whose chassis headings the
// writer has to place: chassis 1 has no nodes, chassis 2 has two.
func grouped(t *testing.T) *fabric.Fabric {
	t.Helper()
	b := fabric.NewBuilder()
	add := func(k fabric.NodeKind, guid uint64, ports int, desc, group string, chassis int) fabric.NodeID {
		id, err := b.AddNode(k, guid, ports, desc)
		if err != nil {
			t.Fatal(err)
		}
		b.Node(id).Annot = fabric.Annot{Group: group, ChassisNum: chassis}
		return id
	}
	spine := add(fabric.Switch, 0x10, 4, "spine", "Spine Nodes", 2)
	line := add(fabric.Switch, 0x20, 4, "line", "Line Nodes", 2)
	ca := add(fabric.CA, 0x30, 1, "ca", "Non-Chassis Nodes", 0)
	for _, c := range [][2]fabric.PortRef{{{Node: spine, Port: 1}, {Node: line, Port: 1}}, {{Node: line, Port: 2}, {Node: ca, Port: 1}}} {
		if err := b.Connect(c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	f := b.Fabric()
	f.Nodes[ca].Ports[1].GUID = 0x31
	f.Chassis = []fabric.Chassis{{Num: 1, GUID: 0x100}, {Num: 2, GUID: 0x200, Hostname: "h2"}, {Num: 3}}
	f.Header = []string{"", " built in code"}
	return f
}

func TestWriteGroupedFromCode(t *testing.T) {
	text := roundTrip(t, grouped(t))
	s := string(text)
	i1, i2, iSpine := strings.Index(s, "Chassis 1 (guid 0x100)"), strings.Index(s, "Chassis 2 (guid 0x200)\nHostname: h2"), strings.Index(s, "# Spine Nodes")
	if i1 < 0 || i2 < 0 || iSpine < i2 || i1 > i2 || !strings.Contains(s, "\nChassis 3\n") {
		t.Errorf("chassis headings misplaced:\n%s", s)
	}
}

func TestWriteRejects(t *testing.T) {
	cases := map[string]func(f *fabric.Fabric){
		"newline in a description": func(f *fabric.Fabric) { f.Nodes[0].Desc = "a\nb" },
		"newline in Info":          func(f *fabric.Fabric) { f.Nodes[0].Ports[1].Info = "x\ny" },
		"unknown kind":             func(f *fabric.Fabric) { f.Nodes[0].Kind = 9 },
		"no ports":                 func(f *fabric.Fabric) { f.Nodes[2].Ports = f.Nodes[2].Ports[:1] },
		"unknown group":            func(f *fabric.Fabric) { f.Nodes[0].Annot.Group = "Leaf Nodes" },
		"ungrouped after grouped":  func(f *fabric.Fabric) { f.Nodes[2].Annot.Group = "" },
		"header reads as heading":  func(f *fabric.Fabric) { f.Header = []string{" Line Nodes"} },
		"newline in the header":    func(f *fabric.Fabric) { f.Header = []string{"a\nb"} },
		"peer outside the fabric":  func(f *fabric.Fabric) { f.Nodes[0].Ports[1].Peer = fabric.PortRef{Node: 99, Port: 1} },
		"width out of range":       func(f *fabric.Fabric) { f.Nodes[0].Ports[1].Width = 42 },
		"negative Ext":             func(f *fabric.Fabric) { f.Nodes[0].Ports[1].Ext = -1 },
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			f := grouped(t)
			spoil(f)
			var buf bytes.Buffer
			if err := Write(&buf, f); err == nil {
				t.Fatalf("Write accepted it:\n%s", buf.Bytes())
			} else if buf.Len() != 0 {
				t.Errorf("Write wrote %d bytes before failing", buf.Len())
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fabric.topo")
	f := grouped(t)
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := Write(&want, f); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("file content differs from Write")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	// replacing keeps the old mode; a failing write leaves the old file
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600 kept", st.Mode().Perm())
	}
	bad := grouped(t)
	bad.Nodes[0].Desc = "x\ny"
	if err := WriteFile(path, bad); err == nil {
		t.Error("WriteFile accepted an unwritable fabric")
	}
	if got := readFile(t, path); !bytes.Equal(got, want.Bytes()) {
		t.Error("failed WriteFile changed the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	res, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffFabric(f, res.Fabric); d != "" {
		t.Error(d)
	}
	if _, err := ParseFile(filepath.Join(dir, "missing.topo")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("ParseFile of a missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
