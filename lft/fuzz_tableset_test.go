package lft

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadTableSet: the table-directory reader (LFT dump, SL file and
// SL2VL dump side by side, as older sets hold them; each may be absent)
// never panics, and a set it accepts, written back as TableSet writes it
// (compact LFTs, SL file, SL2VL file), reads back equal.
func FuzzReadTableSet(f *testing.F) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	lfts, sl, perDest, sl2vl := read("fixture.lfts.dump"), read("fixture.sl"), read("fixture-perdest.sl"), read("fixture.sl2vl.dump")
	f.Add(lfts, sl, sl2vl, true)
	f.Add(lfts, perDest, sl2vl, false)
	f.Add(lfts, []byte(nil), sl2vl, true)
	f.Add(lfts, sl, []byte(nil), false)
	f.Add(lfts, []byte(nil), []byte(nil), true)
	f.Add([]byte(nil), sl, sl2vl, true)
	g := fixture(f)
	in, out := memDir(f), memDir(f)
	put := func(t *testing.T, dir, name string, b []byte) {
		p := filepath.Join(dir, name)
		if b == nil && dir == in {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			return
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, lfts, sl, sl2vl []byte, asDir bool) {
		if len(sl) == 0 {
			sl = nil // absent; an empty file is tried through the readers' own targets
		}
		if len(sl2vl) == 0 {
			sl2vl = nil
		}
		put(t, in, LFTsFile, lfts)
		put(t, in, SLFile, sl)
		put(t, in, OpenSMSL2VLFile, sl2vl)
		path := in
		if !asDir {
			path = filepath.Join(in, LFTsFile)
		}
		r, err := ReadTableSet(path, g, ReadOptions{AllowMissingSwitches: true, SkipUnknownSwitches: true})
		if err != nil {
			return
		}
		for s := range r.Switches {
			r.SetPort(int32(s), 0, NoPort) // LID 0 is not written
		}
		// the set's files into memory, then plain files: WriteDir
		// fsyncs, which can stall for seconds on a busy disk
		set := &TableSet{Graph: g, Routing: r}
		for _, f := range set.Tables() {
			var buf bytes.Buffer
			if err := f.Write(&buf); err != nil {
				t.Fatalf("accepted set: %s cannot be written: %v", f.Name, err)
			}
			put(t, out, f.Name, buf.Bytes())
		}
		r2, err := ReadTableSet(out, g, ReadOptions{AllowMissingSwitches: true})
		if err != nil {
			t.Fatalf("our own table set is rejected: %v", err)
		}
		if !Equal(r, r2) {
			t.Fatal("table set changed in a round trip")
		}
	})
}

// memDir returns a temporary directory in memory (/dev/shm) when there is
// one, so that the file writes of every run do not wait for a disk.
func memDir(f *testing.F) string {
	dir, err := os.MkdirTemp("/dev/shm", "nuesm-fuzz-")
	if err != nil {
		return f.TempDir()
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
