package lft

import (
	"bytes"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// ringGraph compiles topo.Ring(n, hosts, shortcut); with lmc > 0 the CA
// ports get 2^lmc LIDs each (LIDs assigned anew).
func ringGraph(t testing.TB, n, hosts int, shortcut []int, lmc uint8) *fabric.Graph {
	t.Helper()
	tp, err := topo.Ring(n, hosts, shortcut)
	if err != nil {
		t.Fatal(err)
	}
	f := tp.Fabric
	if lmc > 0 {
		for i := range f.Nodes {
			for p := range f.Nodes[i].Ports {
				f.Nodes[i].Ports[p].LID, f.Nodes[i].Ports[p].LMC = 0, 0
			}
		}
		if err := f.AssignLIDs(lmc); err != nil {
			t.Fatal(err)
		}
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// randomOpts says which parts of a routing randomRouting fills.
type randomOpts struct {
	lid0  bool // also route LID 0
	bySrc bool // per-source SLs
	pairs int  // per-pair SL exceptions
	sl2vl bool // per-switch SL2VL tables
}

// randomRouting fills a routing of g deterministically from seed: every
// entry a random port 0..NumPorts, or NoPort with probability 1/8.
func randomRouting(g *fabric.Graph, seed uint64, o randomOpts) *Routing {
	rng := rand.New(rand.NewPCG(seed, 0x6e7565736d))
	r := New(g, "random")
	r.NumVLs = 1 + rng.IntN(4)
	for s := range r.Switches {
		np := g.F.Nodes[g.Switches[s]].NumPorts()
		row := r.Row(int32(s))
		for lid := range row {
			if lid == 0 && !o.lid0 {
				continue
			}
			if rng.IntN(8) == 0 {
				row[lid] = NoPort
			} else {
				row[lid] = uint8(rng.IntN(np + 1))
			}
		}
	}
	for lid := range r.SL.ByDest {
		r.SL.ByDest[lid] = uint8(rng.IntN(r.NumVLs))
	}
	if o.bySrc {
		r.SL.EnableBySrc(len(r.Switches))
		for i := range r.SL.BySrc {
			if rng.IntN(5) == 0 {
				r.SL.BySrc[i] = uint8(rng.IntN(NumSLs))
			}
		}
	}
	for i := 0; i < o.pairs; i++ {
		if r.SL.Pair == nil {
			r.SL.Pair = map[uint32]uint8{}
		}
		r.SL.Pair[uint32(1+rng.IntN(g.MaxLID()))<<16|uint32(1+rng.IntN(g.MaxLID()))] = uint8(rng.IntN(NumSLs))
	}
	for sl := range r.SL2VL.Default {
		r.SL2VL.Default[sl] = uint8(rng.IntN(r.NumVLs))
	}
	if o.sl2vl {
		r.SL2VL.Switch = make([]*PortSL2VL, len(r.Switches))
		for s := range r.Switches {
			if rng.IntN(2) == 0 {
				continue
			}
			np := g.F.Nodes[g.Switches[s]].NumPorts()
			t := NewPortSL2VL(np, r.SL2VL.Default)
			for i := 0; i < 20; i++ {
				t.Set(uint8(rng.IntN(np+1)), uint8(1+rng.IntN(np)), uint8(rng.IntN(NumSLs)), uint8(rng.IntN(MaxVLs)))
			}
			r.SL2VL.Switch[s] = t
		}
	}
	return r
}

// diffRoutings describes up to max differing LFT entries.
func diffRoutings(g *fabric.Graph, a, b *Routing, max int) string {
	var sb strings.Builder
	n := 0
	for s := range a.Switches {
		ra, rb := a.Row(int32(s)), b.Row(int32(s))
		for lid := range ra {
			if lid < len(rb) && ra[lid] != rb[lid] {
				if n < max {
					sb.WriteString(g.SwitchName(int32(s)))
					sb.WriteString(": LID ")
					sb.WriteString(itoa(lid))
					sb.WriteString(": ")
					sb.WriteString(itoa(int(ra[lid])))
					sb.WriteString(" vs ")
					sb.WriteString(itoa(int(rb[lid])))
					sb.WriteString("\n")
				}
				n++
			}
		}
	}
	if n > max {
		sb.WriteString("… ")
		sb.WriteString(itoa(n - max))
		sb.WriteString(" more\n")
	}
	return sb.String()
}

func itoa(v int) string { return strconv.Itoa(v) }

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it; review the diff):\n%s", path, firstDiff(got, want))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return "line " + itoa(i+1) + ":\n got: " + g + "\nwant: " + w
		}
	}
	return "(same lines, different bytes)"
}

// wantParseError checks that err is a *ParseError at file:line wrapping
// sentinel, with an "expected" in its message.
func wantParseError(t *testing.T, err error, file string, line int, sentinel error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v at %s:%d", sentinel, file, line)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %q is not a *ParseError", err)
	}
	if pe.File != file || pe.Line != line {
		t.Errorf("error at %s:%d, want %s:%d: %v", pe.File, pe.Line, file, line, err)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %q does not wrap %v", err, sentinel)
	}
	if !strings.Contains(err.Error(), "expected") {
		t.Errorf("error %q does not say what was expected", err)
	}
	if !strings.HasPrefix(err.Error(), "lft: "+file+":") {
		t.Errorf("error %q does not start with \"lft: %s:\"", err, file)
	}
}
