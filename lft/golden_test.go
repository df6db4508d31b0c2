package lft

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// TestGolden writes the fixture routing in every format and compares with
// testdata/fixture.* (go test -update rewrites them), then reads each file
// back.
func TestGolden(t *testing.T) {
	g := fixture(t)
	r := fixtureRouting(t, g)
	pd := perDestFixture(t, g)
	for _, c := range []struct {
		file  string
		r     *Routing
		write func(io.Writer, *fabric.Graph, *Routing) error
	}{
		{"fixture.lfts.dump", r, WriteOpenSMLFTs},
		{"fixture.sl2vl.dump", r, WriteOpenSMSL2VL},
		{"fixture.sl2vl", r, WriteSL2VL},
		{"fixture.lft.content", r, compactContent},
		{"fixture.sl", r, WriteSL},
		{"fixture-perdest.sl", pd, WriteSL},
		{"fixture.qos-policy", pd, WriteQoSPolicy},
	} {
		t.Run(c.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := c.write(&buf, g, c.r); err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, buf.Bytes())
		})
	}

	t.Run("read back", func(t *testing.T) {
		got, err := ReadOpenSMLFTsFile(filepath.Join("testdata", "fixture.lfts.dump"), g)
		if err != nil {
			t.Fatal(err)
		}
		want := New(g, "")
		for s := range want.Switches {
			copy(want.Row(int32(s)), r.Row(int32(s)))
		}
		if !Equal(got, want) {
			t.Errorf("LFTs differ:\n%s", diffRoutings(g, got, want, 10))
		}
		content, err := os.ReadFile(filepath.Join("testdata", "fixture.lft.content"))
		if err != nil {
			t.Fatal(err)
		}
		got, err = ReadCompactLFTs(bytes.NewReader(gzipped(t, content)), "fixture.lft", g, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(got, want) {
			t.Errorf("compact LFTs differ:\n%s", diffRoutings(g, got, want, 10))
		}
		for _, file := range []string{"fixture.sl2vl.dump", "fixture.sl2vl"} {
			m, err := ReadSL2VLFile(filepath.Join("testdata", file), g)
			if err != nil {
				t.Fatal(err)
			}
			if !m.equal(&r.SL2VL) {
				t.Errorf("%s: SL2VL read back as %+v, want %+v", file, m, r.SL2VL)
			}
		}
		for _, c := range []struct {
			file string
			r    *Routing
		}{{"fixture.sl", r}, {"fixture-perdest.sl", pd}} {
			sl, vls, err := ReadSLFile(filepath.Join("testdata", c.file), g)
			if err != nil {
				t.Fatal(err)
			}
			if !sl.equal(&c.r.SL) || vls != c.r.NumVLs {
				t.Errorf("%s: SL table differs", c.file)
			}
		}
	})
}

// compactContent writes the decompressed content of WriteCompactLFTs:
// the golden file holds it, as the compressed bytes are the compressor's
// choice.
func compactContent(w io.Writer, g *fabric.Graph, r *Routing) error {
	var buf bytes.Buffer
	if err := WriteCompactLFTs(&buf, g, r); err != nil {
		return err
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, zr)
	return err
}

// gzipped compresses b into one gzip member.
func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteFileVariants checks that the ...File writers produce the same
// bytes as the io.Writer ones and leave no temporary files.
func TestWriteFileVariants(t *testing.T) {
	g := fixture(t)
	r := perDestFixture(t, g)
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		write func(io.Writer, *fabric.Graph, *Routing) error
		file  func(string, *fabric.Graph, *Routing) error
	}{
		{"lfts", WriteOpenSMLFTs, WriteOpenSMLFTsFile},
		{"sl2vl", WriteOpenSMSL2VL, WriteOpenSMSL2VLFile},
		{"nuesm.sl2vl", WriteSL2VL, WriteSL2VLFile},
		{"nuesm.lft", WriteCompactLFTs, WriteCompactLFTsFile},
		{"sl", WriteSL, WriteSLFile},
		{"qos", WriteQoSPolicy, WriteQoSPolicyFile},
	} {
		var buf bytes.Buffer
		if err := c.write(&buf, g, r); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.name)
		if err := c.file(path, g, r); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("%s: file differs from the writer's output", c.name)
		}
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 6 {
		t.Errorf("directory holds %d entries, want 6", len(es))
	}
	// A failing writer leaves the old file alone.
	bad := r.Clone()
	bad.SetPort(0, 1, 9) // sw-a has 4 ports
	path := filepath.Join(dir, "lfts")
	before, _ := os.ReadFile(path)
	if err := WriteOpenSMLFTsFile(path, g, bad); err == nil {
		t.Fatal("port 9 on a 4-port switch was written")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("failed write changed the file")
	}
}
