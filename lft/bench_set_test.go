package lft_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/lft"
)

// benchSet reads the table set in $NUESM_BENCH_SET (a directory written
// by nuesm route), or skips: the bench of large fabrics
// (bench/output/run.sh) routes one first.
func benchSet(b *testing.B) (*ibnetdiscover.Loaded, *lft.Routing) {
	dir := os.Getenv("NUESM_BENCH_SET")
	if dir == "" {
		b.Skip("NUESM_BENCH_SET names no table set")
	}
	l, err := ibnetdiscover.LoadFile(filepath.Join(dir, lft.FabricFile))
	if err != nil {
		b.Fatal(err)
	}
	r, err := lft.ReadTableSet(dir, l.Graph, lft.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return l, r
}

// BenchmarkTableSetWrite writes a set as files (each synced and renamed,
// as route and the daemon write them) in three layouts: the older one
// (OpenSM's LFT and SL2VL dumps), the one route writes (nuesm.lft beside
// OpenSM's LFT dump) and the compact one (route --compact, a generation
// for the deployer).
func BenchmarkTableSetWrite(b *testing.B) {
	l, r := benchSet(b)
	g := l.Graph
	older := func(dir string) error {
		for name, write := range map[string]func(io.Writer, *fabric.Graph, *lft.Routing) error{
			lft.LFTsFile: lft.WriteOpenSMLFTs, lft.OpenSMSL2VLFile: lft.WriteOpenSMSL2VL, lft.SLFile: lft.WriteSL,
			lft.QoSPolicyFile: lft.WriteQoSPolicyPaths,
		} {
			if err := atomicfile.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { return write(w, g, r) }, 0o644); err != nil {
				return err
			}
		}
		return atomicfile.WriteFile(filepath.Join(dir, lft.FabricFile), func(w io.Writer) error { _, err := w.Write(l.Text); return err }, 0o644)
	}
	for _, c := range []struct {
		name  string
		write func(dir string) error
	}{
		{"older", older},
		{"route", (&lft.TableSet{Graph: g, Routing: r, Fabric: l.Text, OpenSMLFTs: true}).WriteDir},
		{"compact", (&lft.TableSet{Graph: g, Routing: r, Fabric: l.Text}).WriteDir},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				if err := c.write(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTableSetRead reads a set back (what verify, diff, plan and the
// daemon's next reroute do) from the older layout and the compact one.
func BenchmarkTableSetRead(b *testing.B) {
	l, r := benchSet(b)
	g := l.Graph
	older, compact := b.TempDir(), b.TempDir()
	for name, write := range map[string]func(string, *fabric.Graph, *lft.Routing) error{
		lft.LFTsFile: lft.WriteOpenSMLFTsFile, lft.OpenSMSL2VLFile: lft.WriteOpenSMSL2VLFile, lft.SLFile: lft.WriteSLFile,
	} {
		if err := write(filepath.Join(older, name), g, r); err != nil {
			b.Fatal(err)
		}
	}
	if err := (&lft.TableSet{Graph: g, Routing: r}).WriteDir(compact); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, dir string }{{"older", older}, {"compact", compact}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := lft.ReadTableSet(c.dir, g, lft.ReadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if !lft.Equal(got, r) {
					b.Fatal("read back otherwise")
				}
			}
		})
	}
}
