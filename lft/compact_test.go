package lft

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// readText reads r's tables (for fabric from) through OpenSM's dump for
// fabric to: what the compact form must give back.
func readText(t *testing.T, from, to *fabric.Graph, r *Routing, opt ReadOptions) (*Routing, error) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteOpenSMLFTs(&buf, from, r); err != nil {
		t.Fatal(err)
	}
	return ReadLFTs(&buf, "text", to, opt)
}

func writeCompact(t testing.TB, g *fabric.Graph, r *Routing) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCompactLFTs(&buf, g, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompactLFTsRoundTrip: the compact form of random routings (LID 0
// routed too, LMC > 0, unowned LIDs) reads back as OpenSM's dump does,
// through ReadCompactLFTs and ReadLFTsFile; equal tables give equal bytes.
func TestCompactLFTsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for i, g := range []*fabric.Graph{fixture(t), ringGraph(t, 6, 2, []int{0, 3}, 0), ringGraph(t, 5, 3, nil, 2)} {
		for seed := uint64(1); seed <= 4; seed++ {
			r := randomRouting(g, seed, randomOpts{lid0: seed%2 == 0})
			b := writeCompact(t, g, r)
			if again := writeCompact(t, g, r.Clone()); !bytes.Equal(b, again) {
				t.Fatalf("graph %d seed %d: two writes of equal tables differ", i, seed)
			}
			want, err := readText(t, g, g, r, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadCompactLFTs(bytes.NewReader(b), "mem", g, ReadOptions{})
			if err != nil {
				t.Fatalf("graph %d seed %d: %v", i, seed, err)
			}
			if !Equal(got, want) {
				t.Fatalf("graph %d seed %d: compact and text differ:\n%s", i, seed, diffRoutings(g, got, want, 10))
			}
			path := filepath.Join(dir, CompactLFTsFile)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err = ReadLFTsFile(path, g, ReadOptions{}); err != nil || !Equal(got, want) {
				t.Fatalf("graph %d seed %d: ReadLFTsFile: %v", i, seed, err)
			}
		}
	}
}

// TestCompactLFTsOtherFabric: tables read against another fabric than
// the one they were written for (LIDs reassigned, switches missing or
// added) give what OpenSM's dump gives, remapped by port GUID or not,
// errors included.
func TestCompactLFTsOtherFabric(t *testing.T) {
	a := ringGraph(t, 5, 2, nil, 0)
	for _, c := range []struct {
		name string
		g    *fabric.Graph
	}{{"LMC 1", ringGraph(t, 5, 2, nil, 1)}, {"fewer switches", ringGraph(t, 4, 2, nil, 0)}, {"more switches", ringGraph(t, 6, 2, nil, 0)}} {
		for _, opt := range []ReadOptions{{}, {NoRemap: true}, {SkipUnknownSwitches: true, AllowMissingSwitches: true}, {SkipUnknownSwitches: true, AllowMissingSwitches: true, NoRemap: true}} {
			r := randomRouting(a, 7, randomOpts{})
			for s := range r.Switches {
				row := r.Row(int32(s))
				for lid := range row {
					row[lid] = min(row[lid], 2) // ports every ring switch has
				}
			}
			want, werr := readText(t, a, c.g, r, opt)
			got, gerr := ReadCompactLFTs(bytes.NewReader(writeCompact(t, a, r)), "mem", c.g, opt)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s %+v: text error %v, compact error %v", c.name, opt, werr, gerr)
			}
			// The readers meet a file's faults in different orders: compare
			// the kind where one kind of fault is left (the switch sets
			// agree or are allowed to differ).
			for _, s := range []error{ErrUnknownSwitch, ErrMissingSwitch, ErrLIDRange, ErrDuplicate} {
				if opt.SkipUnknownSwitches && errors.Is(werr, s) != errors.Is(gerr, s) {
					t.Fatalf("%s %+v: text error %v, compact error %v", c.name, opt, werr, gerr)
				}
			}
			if werr == nil && !Equal(got, want) {
				t.Fatalf("%s %+v: compact and text differ:\n%s", c.name, opt, diffRoutings(c.g, got, want, 10))
			}
		}
	}
}

// TestCompactLFTsErrors: damaged, cut, foreign and inconsistent files are
// refused with the error that says why.
func TestCompactLFTsErrors(t *testing.T) {
	g := fixture(t)
	r := fixtureRouting(t, g)
	good := writeCompact(t, g, r)
	content, err := os.ReadFile(filepath.Join("testdata", "fixture.lft.content"))
	if err != nil {
		t.Fatal(err)
	}
	const head = len(compactMagic) + 8 // magic, maxlid, switches
	edit := func(f func(b []byte) []byte) []byte {
		return gzipped(t, f(append([]byte(nil), content...)))
	}
	port := head + 3*8 + 13*8 // the out ports of LID 0 (switches sw-a, sw-b, sw-c)
	for _, c := range []struct {
		name     string
		in       []byte
		sentinel error
	}{
		{"empty", nil, ErrSyntax},
		{"text", []byte("Unicast lids [0-1] of switch"), ErrSyntax},
		{"cut gzip", good[:len(good)-9], ErrTruncated},
		{"cut trailer", good[:len(good)-3], ErrTruncated},
		{"bad checksum", func() []byte { b := append([]byte(nil), good...); b[len(b)-6] ^= 1; return b }(), ErrSyntax},
		{"trailing bytes", append(append([]byte(nil), good...), 0), ErrSyntax},
		{"second member", append(append([]byte(nil), good...), good...), ErrSyntax},
		{"bad magic", edit(func(b []byte) []byte { b[6] = 'X'; return b }), ErrSyntax},
		{"cut content", edit(func(b []byte) []byte { return b[:len(b)-10] }), ErrTruncated},
		{"no end", edit(func(b []byte) []byte { return b[:len(b)-4] }), ErrTruncated},
		{"bad end", edit(func(b []byte) []byte { b[len(b)-2] = 'x'; return b }), ErrSyntax},
		{"data after end", edit(func(b []byte) []byte { return append(b, 'x') }), ErrSyntax},
		{"huge maxlid", edit(func(b []byte) []byte { b[len(compactMagic)+2] = 1; return b }), ErrSyntax},
		{"unknown switch", edit(func(b []byte) []byte { b[head] = 9; return b }), ErrUnknownSwitch},
		{"same switch twice", edit(func(b []byte) []byte { copy(b[head+8:], b[head:head+8]); return b }), ErrDuplicate},
		{"port beyond the switch", edit(func(b []byte) []byte { b[port+3*1] = 5; return b }), ErrPortRange},
		{"LID 0 routed", edit(func(b []byte) []byte { b[port] = 1; return b }), ErrSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCompactLFTs(bytes.NewReader(c.in), "x.lft", g, ReadOptions{})
			wantParseError(t, err, "x.lft", 0, c.sentinel)
		})
	}
	t.Run("missing switch", func(t *testing.T) {
		small := ringGraph(t, 3, 1, nil, 0)
		big := ringGraph(t, 4, 1, nil, 0)
		b := writeCompact(t, small, randomRouting(small, 1, randomOpts{}))
		_, err := ReadCompactLFTs(bytes.NewReader(b), "x.lft", big, ReadOptions{})
		wantParseError(t, err, "x.lft", 0, ErrMissingSwitch)
		_, err = ReadCompactLFTs(bytes.NewReader(b), "x.lft", big, ReadOptions{AllowMissingSwitches: true})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unwritable", func(t *testing.T) {
		bad := r.Clone()
		bad.SetPort(0, 1, 9) // sw-a has 4 ports
		var buf bytes.Buffer
		if err := WriteCompactLFTs(&buf, g, bad); !errors.Is(err, ErrUnwritable) || buf.Len() != 0 {
			t.Fatalf("port 9 on a 4-port switch: %v, %d bytes written", err, buf.Len())
		}
	})
}

// FuzzReadCompactLFTs: the compact reader never panics on any content
// (compressed by the target, or taken as the file itself when raw), and
// what it accepts is what OpenSM's dump of it holds, and survives a write
// and a second read unchanged.
func FuzzReadCompactLFTs(f *testing.F) {
	g := fixture(f)
	content, err := os.ReadFile(filepath.Join("testdata", "fixture.lft.content"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(content, false)
	f.Add(writeCompact(f, g, randomRouting(g, 3, randomOpts{})), true)
	f.Add(content[:40], false)
	f.Fuzz(func(t *testing.T, in []byte, raw bool) {
		file := in
		if !raw {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
			zw.Write(in)
			zw.Close()
			file = buf.Bytes()
		}
		opt := ReadOptions{AllowMissingSwitches: true, SkipUnknownSwitches: true}
		r, err := ReadCompactLFTs(bytes.NewReader(file), "fuzz", g, opt)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteCompactLFTs(&buf, g, r); err != nil {
			t.Fatalf("accepted tables cannot be written: %v", err)
		}
		r2, err := ReadCompactLFTs(&buf, "again", g, ReadOptions{})
		if err != nil {
			t.Fatalf("our own compact file is rejected: %v", err)
		}
		if !Equal(r, r2) {
			t.Fatal("tables changed in a round trip")
		}
		r3, err := readText(t, g, g, r, ReadOptions{})
		if err != nil || !Equal(r, r3) {
			t.Fatalf("OpenSM's dump of accepted tables reads back otherwise (%v)", err)
		}
	})
}

// FuzzReadSL2VLFile: the SL2VL file reader never panics, and what it accepts
// survives a write and a second read unchanged, in its own form and in
// OpenSM's dump.
func FuzzReadSL2VLFile(f *testing.F) {
	addSeeds(f, "fixture.sl2vl")
	f.Add([]byte("nuesm-sl2vl 1\ndefault 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 0\nend\n"))
	g := fixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadSL2VL(bytes.NewReader(in), "fuzz", g)
		if err != nil {
			return
		}
		r := New(g, "fuzz")
		r.SL2VL = m
		for _, c := range []struct {
			write func(w *bytes.Buffer) error
		}{
			{func(w *bytes.Buffer) error { return WriteSL2VL(w, g, r) }},
			{func(w *bytes.Buffer) error { return WriteOpenSMSL2VL(w, g, r) }},
		} {
			var buf bytes.Buffer
			if err := c.write(&buf); err != nil {
				t.Fatalf("accepted tables cannot be written: %v", err)
			}
			br := bufio.NewReader(&buf)
			var m2 SL2VL
			if isSL2VLFile(br) {
				m2, err = ReadSL2VL(br, "again", g)
			} else {
				m2, err = ReadOpenSMSL2VL(br, "again", g)
			}
			if err != nil {
				t.Fatalf("our own file is rejected: %v", err)
			}
			if !m.equal(&m2) {
				t.Fatalf("SL2VL changed in a round trip:\n%s", buf.Bytes())
			}
		}
	})
}
