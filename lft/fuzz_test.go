package lft

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzReadLFTs: the reader never panics, and what it accepts survives a
// write and a second read unchanged.
func FuzzReadLFTs(f *testing.F) {
	addSeeds(f, "fixture.lfts.dump", "real/ring4-dump_lfts.txt", "real/ring4-ibroute-a-3.txt")
	f.Add([]byte("Unicast lids [0-1] of switch Lid 1 guid 0x0002c90000000001 ('x'):\n0x0001 000\n1 lids dumped\n"))
	g := fixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ReadLFTs(bytes.NewReader(in), "fuzz", g, ReadOptions{AllowMissingSwitches: true, SkipUnknownSwitches: true})
		if err != nil {
			return
		}
		for s := range r.Switches {
			r.SetPort(int32(s), 0, NoPort) // LID 0 is not written
		}
		var buf bytes.Buffer
		if err := WriteOpenSMLFTs(&buf, g, r); err != nil {
			t.Fatalf("accepted tables cannot be written: %v", err)
		}
		r2, err := ReadLFTs(&buf, "again", g, ReadOptions{AllowMissingSwitches: true})
		if err != nil {
			t.Fatalf("our own dump is rejected: %v", err)
		}
		if !Equal(r, r2) {
			t.Fatal("tables changed in a round trip")
		}
	})
}

// FuzzReadSL: the reader never panics, and what it accepts round-trips.
func FuzzReadSL(f *testing.F) {
	addSeeds(f, "fixture.sl", "fixture-perdest.sl")
	g := fixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		sl, vls, err := ReadSL(bytes.NewReader(in), "fuzz", g)
		if err != nil {
			return
		}
		r := New(g, "fuzz")
		if len(sl.ByDest) != r.Stride {
			return // a larger maxlid than the fabric's: valid, but not a routing of g
		}
		r.SL, r.NumVLs = sl, vls
		var buf bytes.Buffer
		if err := WriteSL(&buf, g, r); err != nil {
			t.Fatalf("accepted table cannot be written: %v", err)
		}
		sl2, vls2, err := ReadSL(&buf, "again", g)
		if err != nil {
			t.Fatalf("our own file is rejected: %v", err)
		}
		if !sl2.equal(&sl) || vls2 != vls {
			t.Fatal("SL table changed in a round trip")
		}
	})
}

// FuzzReadSL2VL: the reader never panics.
func FuzzReadSL2VL(f *testing.F) {
	addSeeds(f, "fixture.sl2vl.dump")
	g := fixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadOpenSMSL2VL(bytes.NewReader(in), "fuzz", g)
		if err != nil {
			return
		}
		r := New(g, "fuzz")
		r.SL2VL = m
		if err := WriteOpenSMSL2VL(&bytes.Buffer{}, g, r); err != nil {
			t.Fatal(err)
		}
	})
}
