package enginetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// shuffleRecords returns the dump with its node records (the paragraphs
// holding a Switch, Ca or Rt header) in an order drawn from seed, each
// record's lines intact. Other paragraphs (comments, group headings) keep
// their places, and records move only among the records between two of
// them, so a grouped dump keeps its groups.
func shuffleRecords(text []byte, seed uint64) []byte {
	paras := strings.Split(strings.ReplaceAll(string(text), "\r\n", "\n"), "\n\n")
	isRecord := func(p string) bool {
		for _, l := range strings.Split(p, "\n") {
			if strings.HasPrefix(l, "Switch") || strings.HasPrefix(l, "Ca") || strings.HasPrefix(l, "Rt") {
				return true
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(seed, 0x6f72646572))
	for i := 0; i < len(paras); {
		j := i
		for j < len(paras) && isRecord(paras[j]) {
			j++
		}
		run := paras[i:j]
		rng.Shuffle(len(run), func(a, b int) { run[a], run[b] = run[b], run[a] })
		i = max(j, i+1)
	}
	out := strings.Join(paras, "\n\n")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out)
}

// orderDump is a dump of the node-order test.
type orderDump struct {
	name string
	text []byte
}

// orderDumps are the corpus dumps and generated fabrics with failures,
// written as dumps.
func orderDumps(t *testing.T) []orderDump {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.topo"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample dumps in %s (%v)", corpusDir, err)
	}
	var ds []orderDump
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, orderDump{filepath.Base(f), text})
	}
	gens := []struct {
		name  string
		build func() (*topo.Topology, error)
		fail  int
	}{
		{"fattree4-3-fail3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, 3},
		{"torus4x4x3", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 3}, 1, false) }, 0},
		{"torus4x4x3-fail2", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 3}, 1, false) }, 2},
		{"mesh4x3", func() (*topo.Topology, error) { return topo.Torus([]int{4, 3}, 2, true) }, 0},
		{"random24-fail3", func() (*topo.Topology, error) { return topo.Random(24, 4, 2, 11) }, 3},
		{"novacube4-2", func() (*topo.Topology, error) { return topo.NovaCube(4, 2, 1) }, 0},
	}
	for _, gf := range gens {
		f, err := failCount(gf.build, gf.fail, 7)()
		if err != nil {
			t.Fatalf("%s: %v", gf.name, err)
		}
		var buf bytes.Buffer
		if err := ibnetdiscover.Write(&buf, f); err != nil {
			t.Fatalf("%s: %v", gf.name, err)
		}
		ds = append(ds, orderDump{gf.name, buf.Bytes()})
	}
	return ds
}

// loadDump loads a dump as nuesm route does.
func loadDump(t *testing.T, text []byte, name string) *ibnetdiscover.Loaded {
	t.Helper()
	l, err := ibnetdiscover.Load(text, name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// guidOrder lists the node GUIDs of a fabric in its node order.
func guidOrder(f *fabric.Fabric) []uint64 {
	gs := make([]uint64, len(f.Nodes))
	for i := range f.Nodes {
		gs[i] = f.Nodes[i].GUID
	}
	return gs
}

// tablesOf routes g with an engine and returns the table files the
// routing writes (or its error), file by file.
func tablesOf(g *fabric.Graph, engine string, vls int) map[string]string {
	e, err := newEngine(engine)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: vls, Workers: 1})
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	set := &lft.TableSet{Graph: g, Routing: r, OpenSMLFTs: true}
	out := map[string]string{}
	for _, f := range set.Tables() {
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			return map[string]string{"error": fmt.Sprintf("%s: %v", f.Name, err)}
		}
		out[f.Name] = b.String()
	}
	return out
}

// TestNodeOrder routes every dump with every engine, at 1 and 8 VLs, as
// dumped and with its node records shuffled (as ibnetdiscover run from
// another host lists them): the table files must be identical byte for
// byte, so a rescan from another host changes no table.
func TestNodeOrder(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	var mu sync.Mutex
	routed := map[string]bool{} // engines that produced tables at least once
	t.Run("dump", func(t *testing.T) {
		for _, d := range orderDumps(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				orig := loadDump(t, d.text, d.name)
				var shuffled []*ibnetdiscover.Loaded
				moved := false
				for _, seed := range seeds {
					l := loadDump(t, shuffleRecords(d.text, seed), d.name)
					moved = moved || !slices.Equal(guidOrder(l.Fabric), guidOrder(orig.Fabric))
					shuffled = append(shuffled, l)
				}
				if !moved && len(orig.Fabric.Nodes) > 2 {
					t.Fatalf("no shuffle changed the order of the %d nodes", len(orig.Fabric.Nodes))
				}
				for _, engine := range suiteEngines() {
					for _, vls := range []int{1, maxVLs} {
						want := tablesOf(orig.Graph, engine, vls)
						if _, failed := want["error"]; !failed {
							mu.Lock()
							routed[engine] = true
							mu.Unlock()
						}
						for i, l := range shuffled {
							if diff := tablesDiff(want, tablesOf(l.Graph, engine, vls)); diff != "" {
								t.Errorf("%s at %d VLs, records shuffled with seed %d: %s", engine, vls, seeds[i], diff)
							}
						}
					}
				}
			})
		}
	})
	for _, e := range suiteEngines() {
		if !routed[e] {
			t.Errorf("%s routed none of the dumps", e)
		}
	}
}

// tablesDiff names the first difference between two sets of table files.
func tablesDiff(want, got map[string]string) string {
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			return fmt.Sprintf("%s missing (has %v)", name, keys(got))
		case g != w:
			return fmt.Sprintf("%s differs: %s", name, firstLineDiff(w, g))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			return fmt.Sprintf("%s is new", name)
		}
	}
	return ""
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func firstLineDiff(a, b string) string {
	a, b = gunzipped(a), gunzipped(b)
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(la), len(lb)); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q, shuffled %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, shuffled %d", len(la), len(lb))
}

// gunzipped returns the content of a gzip file (nuesm.lft), else s.
func gunzipped(s string) string {
	zr, err := gzip.NewReader(strings.NewReader(s))
	if err != nil {
		return s
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return s
	}
	return string(b)
}
