package lft_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"

	_ "github.com/nuesm/nuesm/sar" // registers nue, dfsssp and the sar engines
)

// TestTableSetRoundTrip: a table set written by WriteDir, with and
// without OpenSM's LFT dump, reads back (ReadTableSet, from the directory,
// its compact LFT file or its OpenSM dump) as the same Routing, for
// engines whose SLs are per destination (with a QoS policy), per source
// switch (no policy) or all 0; so does a set in the older form (OpenSM's
// LFT and SL2VL dumps only).
func TestTableSetRoundTrip(t *testing.T) {
	torus, err := topo.Torus([]int{4, 4}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := topo.FatTree(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		engine  string
		tp      *topo.Topology
		perDest bool // SLs per destination (else per source: QoS match rules with source groups)
	}{{"nue", torus, true}, {"dfsssp", torus, false}, {"dor", torus, false}, {"lash", torus, true}, {"updn", tree, true}} {
		g, err := fabric.Compile(c.tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		e, err := routing.Lookup(c.engine)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: 4})
		if err != nil {
			t.Fatalf("%s: %v", c.engine, err)
		}
		for _, osm := range []bool{true, false} {
			set := &lft.TableSet{Graph: g, Routing: r, Fabric: []byte("the dump\n"), Summary: map[string]string{"engine": c.engine}, OpenSMLFTs: osm}
			if err := set.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			paths := []string{dir, filepath.Join(dir, lft.CompactLFTsFile)}
			if osm {
				paths = append(paths, filepath.Join(dir, lft.LFTsFile))
			}
			readBack(t, c.engine, g, r, paths...)
			checkSetFiles(t, c.engine, dir, set, true)
		}
		if r.SL.PerDest() != c.perDest {
			t.Fatalf("%s: SLs per destination %v, want %v", c.engine, r.SL.PerDest(), c.perDest)
		}
		old := t.TempDir()
		for name, write := range map[string]func(string, *fabric.Graph, *lft.Routing) error{
			lft.LFTsFile: lft.WriteOpenSMLFTsFile, lft.SLFile: lft.WriteSLFile, lft.OpenSMSL2VLFile: lft.WriteOpenSMSL2VLFile,
		} {
			if err := write(filepath.Join(old, name), g, r); err != nil {
				t.Fatal(err)
			}
		}
		readBack(t, c.engine+" (older form)", g, r, old, filepath.Join(old, lft.LFTsFile))
	}
}

// readBack reads the set at every path and compares it with r.
func readBack(t *testing.T, engine string, g *fabric.Graph, r *lft.Routing, paths ...string) {
	t.Helper()
	for _, p := range paths {
		got, err := lft.ReadTableSet(p, g, lft.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		if !lft.Equal(got, r) {
			t.Fatalf("%s: the set read from %s differs from the routing written", engine, p)
		}
	}
}

// checkSetFiles checks the files WriteDir left in dir: the fabric, the
// summary, the QoS policy exactly when qos and OpenSM's LFT dump exactly
// when set.OpenSMLFTs (a stale one from the previous set is removed), no
// SL2VL dump of the older form, and Keys naming them.
func checkSetFiles(t *testing.T, engine, dir string, set *lft.TableSet, qos bool) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, lft.FabricFile)); err != nil || !bytes.Equal(b, set.Fabric) {
		t.Errorf("%s: %s: %q, %v", engine, lft.FabricFile, b, err)
	}
	var sum map[string]string
	if b, err := os.ReadFile(filepath.Join(dir, lft.SummaryFile)); err != nil || json.Unmarshal(b, &sum) != nil || sum["engine"] != engine {
		t.Errorf("%s: %s: %v %v", engine, lft.SummaryFile, sum, err)
	}
	_, err := os.Stat(filepath.Join(dir, lft.QoSPolicyFile))
	if (err == nil) != qos {
		t.Errorf("%s: QoS policy present %v, want %v", engine, err == nil, qos)
	}
	_, err = os.Stat(filepath.Join(dir, lft.LFTsFile))
	if (err == nil) != set.OpenSMLFTs {
		t.Errorf("%s: OpenSM LFT dump present %v, want %v", engine, err == nil, set.OpenSMLFTs)
	}
	if _, err := os.Stat(filepath.Join(dir, lft.OpenSMSL2VLFile)); err == nil {
		t.Errorf("%s: %s written", engine, lft.OpenSMSL2VLFile)
	}
	keys := set.Keys()
	want := []string{"fabric", "lfts", "sl", "sl2vl"}
	if qos {
		want = append(want, "qos_policy")
	}
	if set.OpenSMLFTs {
		want = append(want, "opensm_lfts")
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: Keys %v, want %v", engine, keys, want)
	}
	if p, ok := lft.FabricPath(filepath.Join(dir, lft.CompactLFTsFile)); !ok || p != filepath.Join(dir, lft.FabricFile) {
		t.Errorf("%s: FabricPath = %s, %v", engine, p, ok)
	}
}
