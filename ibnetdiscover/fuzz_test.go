package ibnetdiscover

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// maxSeedBytes keeps corpus dumps above it out of the seeds: every run
// of a big seed costs as much as hundreds of small ones.
const maxSeedBytes = 16 << 10

// generatedSeeds are written dumps of small generated fabrics of several
// shapes: real structure (switch-switch cables, CAs, LIDs, chassis-free
// blocks in the writer's layout) for the fuzzer to mutate.
func generatedSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, gen := range []func() (*topo.Topology, error){
		func() (*topo.Topology, error) { return topo.FatTree(2, 2, 0) },
		func() (*topo.Topology, error) { return topo.Torus([]int{3, 2}, 1, false) },
		func() (*topo.Topology, error) { return topo.Torus([]int{2, 2}, 1, true) },
		func() (*topo.Topology, error) { return topo.Ring(4, 1, nil) },
		func() (*topo.Topology, error) { return topo.Hypercube(2, 2) },
		func() (*topo.Topology, error) { return topo.Kautz(2, 2, 1) },
		func() (*topo.Topology, error) { return topo.Random(4, 2, 1, 7) },
		func() (*topo.Topology, error) { return topo.Dragonfly(1, 2, 1, 3) },
	} {
		tp, err := gen()
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, tp.Fabric); err != nil {
			f.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}

// FuzzParse feeds arbitrary text to Parse. Properties: no panic; errors are
// located (*Error with a line); whenever Parse succeeds, Write succeeds and
// Parse(Write(f)) equals f; the ibsim writer does not panic either. Seeds:
// small generated fabrics, the small dumps of the shared corpus (read in
// place), the grammar's corners.
func FuzzParse(f *testing.F) {
	for _, b := range generatedSeeds(f) {
		f.Add(b)
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.topo"))
	if len(files) == 0 {
		f.Logf("SKIPPING corpus seeds: %s is absent; fuzzing from the generated and inline seeds only", corpusDir)
	}
	for _, fn := range files {
		if b, err := os.ReadFile(fn); err == nil && len(b) <= maxSeedBytes {
			f.Add(b)
		}
	}
	if b, err := os.ReadFile("testdata/grouped.topo"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(base))
	f.Add([]byte("Switch 2 \"S-1\" # \"s\"\n[1] \"S-1\"[2] # \"s\" lid 0 ?????\n[2] \"S-1\"[1] # \"s\" lid 0 ?????\n"))
	f.Add([]byte("Rt 1 \"R-5\" # \"r\"\n[1](6) \"H-7\"[1] (8) # lid 1 lmc 0 \"c\" lid 2 12xNDR e=3\n\nCa 1 \"H-7\" # \"c\" (scp)\n[1](8) \"R-5\"[1] (6) # lid 2 lmc 0 \"r\" lid 1 12xNDR\n"))
	f.Add([]byte("Chassis 3 (guid 0x10)\nHostname: h\n\n# Line Nodes\nvendid=0x1\n\t\t# Chassis 3 (x) slot 1\nswitchguid=0x1(2)\t# t 1\nSwitch 1 \"S-1\" # \"\" base port 0 lid 0 lmc 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.File != "fuzz" {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, res.Fabric); err != nil {
			t.Fatalf("Write of a parsed fabric: %v", err)
		}
		res2, err := Parse(bytes.NewReader(buf.Bytes()), "rewritten")
		if err != nil {
			t.Fatalf("Parse(Write(f)): %v\ninput:\n%q\nwritten:\n%q", err, data, buf.Bytes())
		}
		if d := diffFabric(res.Fabric, res2.Fabric); d != "" {
			t.Fatalf("Parse(Write(f)) != f: %s\ninput:\n%q\nwritten:\n%q", d, data, buf.Bytes())
		}
		g, _ := ForIBSim(res.Fabric)
		if err := WriteIBSim(io.Discard, g); err != nil {
			t.Fatalf("WriteIBSim(ForIBSim(f)): %v", err)
		}
	})
}
