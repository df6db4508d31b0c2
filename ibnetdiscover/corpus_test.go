package ibnetdiscover

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

type wantWarning struct {
	kind        WarningKind
	line, other int
	substr      string
}

// corpusWant holds per corpus file what a careful reading of the file
// gives: node and cable counts (each cable is listed twice), header
// comment lines and warnings.
var corpusWant = map[string]struct {
	switches, cas, links, header int
	warnings                     []wantWarning
	check                        func(t *testing.T, res *Result)
}{
	"example-1.topo": {
		switches: 2, cas: 4, links: 7, header: 5,
		warnings: []wantWarning{
			{LinkWarning, 15, 26, "width mismatch"}, // [10] 4xSDR vs SW-6IB4 [1] 1xSDR
			{LinkWarning, 18, 52, "width mismatch"}, // [12] 4xSDR vs the CA's [1] 1xSDR
		},
		check: func(t *testing.T, res *Result) {
			f := res.Fabric
			for i := range f.Nodes {
				if g := f.Nodes[i].Annot.Group; g != "Non-Chassis Nodes" {
					t.Errorf("node %d group %q, want Non-Chassis Nodes", i, g)
				}
			}
			sw := f.Node(mustGUID(t, f, 0x005442ba00003080))
			if sw.SysImageGUID != 0x5442ba00003000 || sw.Ports[0].LID != 6 || sw.Enhanced || sw.NumPorts() != 24 {
				t.Errorf("ISR9024: %+v", sw)
			}
			ca := f.Node(mustGUID(t, f, 0x0008f10403960558))
			if p := ca.Ports[2]; p.LID != 14 || p.LMC != 1 || p.GUID != 0x8f1040396055a || p.Width != fabric.Width4x {
				t.Errorf("CA port 2: %+v", p)
			}
			if p := ca.Ports[1]; p.LID != 10 || p.LMC != 1 || p.Width != fabric.Width1x || p.Speed != fabric.SDR {
				t.Errorf("CA port 1: %+v", p)
			}
			if f.Node(mustGUID(t, f, 0x0008f10400410015)).SysImageGUID != 0 {
				t.Error("SW-6IB4 has no sysimgguid line, want 0")
			}
		},
	},
	"example-2.topo": {switches: 1, cas: 2, links: 2, header: 5},
	"example-3.topo": {
		switches: 2, cas: 6, links: 10, header: 4,
		warnings: []wantWarning{
			{Skipped, 1, 0, "src/query_smp.c:195"},
			{LinkWarning, 12, 13, "loopback"},
			{LinkWarning, 15, 16, "loopback"},
			{LinkWarning, 17, 18, "loopback"},
		},
		check: func(t *testing.T, res *Result) {
			f := res.Fabric
			if f.Header[1] != " Topology file: generated on Mon Jul 25 11:30:26 2016" {
				t.Errorf("header %q", f.Header)
			}
			cx4 := f.Node(mustGUID(t, f, 0xe41d2d030061f957))
			if cx4.Ports[1].GUID != cx4.GUID {
				t.Errorf("ConnectX-4 port GUID %x, want the node GUID", cx4.Ports[1].GUID)
			}
			two := f.Node(mustGUID(t, f, 0x0002c903003421b0))
			if two.Ports[1].Cabled() || !two.Ports[2].Cabled() || two.Ports[2].LID != 3 {
				t.Errorf("r-ufm111: port 1 must stay uncabled, port 2 lid 3: %+v", two.Ports)
			}
			sw := f.Node(mustGUID(t, f, 0xf4521403005764b0))
			if !sw.Enhanced || sw.Ports[0].LID != 174 || sw.Desc != "MF0;switch-de779e:SX6012/U1" {
				t.Errorf("SX6012: %+v", sw)
			}
		},
	},
	"example-4.topo": {switches: 1, cas: 1, links: 1, header: 5},
	"fattree-k4-n3-80sw-128ca.topo": {
		switches: 80, cas: 128, links: 384, header: 11,
		check: func(t *testing.T, res *Result) {
			f := res.Fabric
			if f.MaxLID() != 0 {
				t.Errorf("generated file has lid 0 everywhere, got max LID %d", f.MaxLID())
			}
			for i := range f.Nodes {
				n := &f.Nodes[i]
				if n.Kind == fabric.Switch && (n.Enhanced || n.Ports[0].LMC != 0 || n.NumPorts() != 8) {
					t.Errorf("switch %d without port-0 details: %+v", i, n)
				}
			}
			if d := f.Node(0).Desc; d != "Switch0" {
				t.Errorf("first node %q, want Switch0 (file order)", d)
			}
		},
	},
	"hpc-cluster-2014-8sw-144ca.topo": {
		switches: 8, cas: 144, links: 192, header: 4,
		check: func(t *testing.T, res *Result) {
			f := res.Fabric
			sw := f.Node(0)
			if sw.GUID != 0xf4521403001165a0 || !sw.Enhanced || sw.Ports[0].LID != 128 || sw.Ports[21].Speed != fabric.FDR10 {
				t.Errorf("first switch: %+v", sw)
			}
			if l := res.PortLine(fabric.PortRef{Node: 0, Port: 21}); l != 29 {
				t.Errorf("PortLine(switch 0 port 21) = %d, want 29", l)
			}
			if l := res.NodeLine(0); l != 10 {
				t.Errorf("NodeLine(0) = %d, want 10", l)
			}
		},
	},
}

func mustGUID(t *testing.T, f *fabric.Fabric, guid uint64) fabric.NodeID {
	t.Helper()
	id, ok := f.NodeByGUID(guid)
	if !ok {
		t.Fatalf("no node 0x%016x", guid)
	}
	return id
}

func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	seen := 0
	for _, fn := range files {
		base := filepath.Base(fn)
		t.Run(base, func(t *testing.T) {
			want, ok := corpusWant[base]
			if !ok {
				t.Fatalf("corpus file %s has no expectations in corpusWant; add them", base)
			}
			seen++
			res, err := ParseFile(fn)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			f := res.Fabric
			if got := f.Count(fabric.Switch); got != want.switches {
				t.Errorf("%d switches, want %d", got, want.switches)
			}
			if got := f.Count(fabric.CA); got != want.cas {
				t.Errorf("%d CAs, want %d", got, want.cas)
			}
			if got := len(f.Links()); got != want.links {
				t.Errorf("%d links, want %d", got, want.links)
			}
			if len(f.Header) != want.header {
				t.Errorf("%d header lines, want %d: %q", len(f.Header), want.header, f.Header)
			}
			if len(res.Warnings) != len(want.warnings) {
				t.Errorf("%d warnings, want %d:", len(res.Warnings), len(want.warnings))
				for _, w := range res.Warnings {
					t.Log(w)
				}
			} else {
				for i, w := range want.warnings {
					g := res.Warnings[i]
					if g.Kind != w.kind || g.Line != w.line || g.Other != w.other || !strings.Contains(g.Msg, w.substr) || g.File != fn {
						t.Errorf("warning %d: %v (kind %d), want kind %d at line %d (other end %d) containing %q", i, g, g.Kind, w.kind, w.line, w.other, w.substr)
					}
				}
			}
			if err := f.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if want.check != nil {
				want.check(t, res)
			}
			roundTrip(t, f)
		})
	}
	if seen != len(corpusWant) && !t.Failed() {
		t.Errorf("corpusWant lists %d files, the corpus has %d", len(corpusWant), seen)
	}
}

// TestWriteMatchesIbnetdiscover checks that Write reproduces, byte for
// byte, a dump printed by a current ibnetdiscover (tabs, spacing, order).
func TestWriteMatchesIbnetdiscover(t *testing.T) {
	corpusFiles(t)
	fn := filepath.Join(corpusDir, "hpc-cluster-2014-8sw-144ca.topo")
	orig := readFile(t, fn)
	res, err := Parse(bytes.NewReader(orig), fn)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, res.Fabric); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), orig) {
		a, b := strings.Split(string(orig), "\n"), strings.Split(buf.String(), "\n")
		for i := 0; i < len(a) && i < len(b); i++ {
			if a[i] != b[i] {
				t.Fatalf("line %d differs:\n file: %q\nwrote: %q", i+1, a[i], b[i])
			}
		}
		t.Fatalf("lengths differ: %d lines vs %d", len(a), len(b))
	}
}
