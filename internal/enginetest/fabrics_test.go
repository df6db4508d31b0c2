package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/topo"
)

// corpusDir holds the ibnetdiscover sample dumps, relative to this
// package's directory (/work/main/internal/enginetest ->
// /work/shared/corpus/ibnetdiscover).
const corpusDir = "../../../shared/corpus/ibnetdiscover"

// shape is what the shape-specific engines look for.
type shape uint8

const (
	other     shape = iota
	torus           // a torus with some wrapping dimension of size >= 4 (DOR needs a dateline)
	torusK3         // a torus whose wrapping dimensions all have size 3 (no dateline needed)
	mesh            // a mesh, or a hypercube (a torus of 2s): DOR on 1 VL
	tree            // a fat tree of the generators (k-ary n-tree, XGFT, Clos)
	maybeTree       // a dump that may or may not be recognised as a fat tree
)

// fabricCase is one fabric of the conformance table.
type fabricCase struct {
	name   string
	family string // the topo generator kind, or "corpus"
	short  bool   // part of the -short subset
	shape  shape
	failed bool // links were failed on purpose
	build  func() (*fabric.Fabric, error)

	once sync.Once
	g    *fabric.Graph
	err  error
}

// graph builds and compiles the fabric once.
func (c *fabricCase) graph() (*fabric.Graph, error) {
	c.once.Do(func() {
		f, err := c.build()
		if err != nil {
			c.err = err
			return
		}
		c.g, c.err = fabric.Compile(f)
	})
	return c.g, c.err
}

func gen(tp *topo.Topology, err error) (*fabric.Fabric, error) {
	if err != nil {
		return nil, err
	}
	return tp.Fabric, nil
}

// failLinks fails the given fraction of the switch-to-switch cables of a
// generated fabric, in an order drawn from seed. Failures may disconnect
// CAs (the verifier then counts those pairs as unconnected).
func failLinks(build func() (*topo.Topology, error), frac float64, seed uint64) func() (*fabric.Fabric, error) {
	return func() (*fabric.Fabric, error) {
		tp, err := build()
		if err != nil {
			return nil, err
		}
		f, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{LinkFraction: frac, Seed: seed})
		return f, err
	}
}

// failCount fails n switch-to-switch cables, like failLinks.
func failCount(build func() (*topo.Topology, error), n int, seed uint64) func() (*fabric.Fabric, error) {
	return func() (*fabric.Fabric, error) {
		tp, err := build()
		if err != nil {
			return nil, err
		}
		f, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: n, Seed: seed})
		return f, err
	}
}

// withLMC returns a function that reassigns every LID of f with the given
// LMC, making every other switch's port 0 enhanced (so that it takes the
// LMC too).
func withLMC(f *fabric.Fabric, err error) func(lmc uint8) (*fabric.Fabric, error) {
	return func(lmc uint8) (*fabric.Fabric, error) {
		if err != nil {
			return nil, err
		}
		f = f.Clone()
		for i := range f.Nodes {
			n := &f.Nodes[i]
			for p := range n.Ports {
				n.Ports[p].LID, n.Ports[p].LMC = 0, 0
			}
			n.Enhanced = n.Kind == fabric.Switch && i%2 == 1
		}
		if err := f.AssignLIDs(lmc); err != nil {
			return nil, err
		}
		return f, nil
	}
}

// fabricCases is the one table every engine runs on. Small fabrics form
// the -short subset; medium ones stay within seconds per engine; large
// instances belong to the benchmarks.
func fabricCases() []*fabricCase {
	cs := []*fabricCase{
		// Rings: shortest paths close cycles (MinHop's known answer).
		{name: "ring5", family: "ring", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.Ring(5, 1, nil)) }},
		{name: "ring5-shortcut", family: "ring", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.Ring(5, 1, []int{2, 4})) }},
		{name: "ring12-shortcut", family: "ring", build: func() (*fabric.Fabric, error) { return gen(topo.Ring(12, 2, []int{0, 6})) }},
		// Tori and meshes, even and odd sizes.
		{name: "torus4x4", family: "torus", short: true, shape: torus, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{4, 4}, 2, false)) }},
		{name: "torus5x5", family: "torus", shape: torus, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{5, 5}, 2, false)) }},
		{name: "torus3x3x3", family: "torus", short: true, shape: torusK3, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{3, 3, 3}, 1, false)) }},
		{name: "torus3x4x5", family: "torus", shape: torus, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{3, 4, 5}, 1, false)) }},
		{name: "torus4x4x4", family: "torus", shape: torus, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{4, 4, 4}, 2, false)) }},
		{name: "mesh4x4", family: "mesh", short: true, shape: mesh, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{4, 4}, 1, true)) }},
		{name: "mesh3x4x3", family: "mesh", shape: mesh, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{3, 4, 3}, 2, true)) }},
		{name: "hypercube4", family: "hypercube", short: true, shape: mesh, build: func() (*fabric.Fabric, error) { return gen(topo.Hypercube(4, 2)) }},
		{name: "hypercube6", family: "hypercube", shape: mesh, build: func() (*fabric.Fabric, error) { return gen(topo.Hypercube(6, 1)) }},
		// Trees.
		{name: "fattree2-3", family: "fattree", short: true, shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.FatTree(2, 3, 0)) }},
		{name: "fattree4-3", family: "fattree", shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.FatTree(4, 3, 0)) }},
		{name: "xgft2-4.4-1.2", family: "xgft", short: true, shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.XGFT(2, []int{4, 4}, []int{1, 2})) }},
		{name: "xgft3-3.3.3-1.3.2", family: "xgft", shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.XGFT(3, []int{3, 3, 3}, []int{1, 3, 2})) }},
		{name: "clos2-4", family: "clos2", short: true, shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.Clos2(4)) }},
		{name: "clos2-12", family: "clos2", shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.Clos2(12)) }},
		{name: "clos3-4", family: "clos3", short: true, shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.Clos3(4)) }},
		{name: "clos3-6", family: "clos3", shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.Clos3(6)) }},
		{name: "clos4-4-3", family: "clos4", short: true, shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.Clos4(4, 3)) }},
		{name: "clos4-6-4", family: "clos4", shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.Clos4(6, 4)) }},
		// Direct low-diameter networks.
		{name: "kautz2-3", family: "kautz", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.Kautz(2, 3, 2)) }},
		{name: "kautz3-3", family: "kautz", build: func() (*fabric.Fabric, error) { return gen(topo.Kautz(3, 3, 2)) }},
		{name: "dragonfly1", family: "dragonfly", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.DragonflyBalanced(1)) }},
		{name: "dragonfly2", family: "dragonfly", build: func() (*fabric.Fabric, error) { return gen(topo.DragonflyBalanced(2)) }},
		{name: "dragonfly-g2-parallel", family: "dragonfly", build: func() (*fabric.Fabric, error) { return gen(topo.Dragonfly(2, 3, 2, 2)) }},
		{name: "fbfly4x4", family: "fbfly", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.FlattenedButterfly([]int{4, 4}, 2)) }},
		{name: "fbfly4x3x2", family: "fbfly", build: func() (*fabric.Fabric, error) { return gen(topo.FlattenedButterfly([]int{4, 3, 2}, 2)) }},
		{name: "slimfly3", family: "slimfly", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.SlimFly(3, 2)) }},
		{name: "slimfly5", family: "slimfly", build: func() (*fabric.Fabric, error) { return gen(topo.SlimFly(5, 2)) }},
		{name: "novacube4-2", family: "novacube", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.NovaCube(4, 2, 1)) }},
		{name: "novacube5-2", family: "novacube", build: func() (*fabric.Fabric, error) { return gen(topo.NovaCube(5, 2, 2)) }},
		{name: "rsi-full5-3", family: "rsi", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.RSI("full-5", 3, 1)) }},
		{name: "rsi-hypercube16-2", family: "rsi", build: func() (*fabric.Fabric, error) { return gen(topo.RSI("hypercube-16", 2, 2)) }},
		{name: "random16", family: "random", short: true, build: func() (*fabric.Fabric, error) { return gen(topo.Random(16, 3, 2, 1)) }},
		{name: "random32", family: "random", build: func() (*fabric.Fabric, error) { return gen(topo.Random(32, 4, 2, 7)) }},
		// Medium: a few hundred CAs, still well under a second per engine.
		{name: "torus6x6x6", family: "torus", shape: torus, build: func() (*fabric.Fabric, error) { return gen(topo.Torus([]int{6, 6, 6}, 2, false)) }},
		{name: "fattree8-3", family: "fattree", shape: tree, build: func() (*fabric.Fabric, error) { return gen(topo.FatTree(8, 3, 0)) }},
		{name: "dragonfly3", family: "dragonfly", build: func() (*fabric.Fabric, error) { return gen(topo.DragonflyBalanced(3)) }},
		{name: "kautz4-3", family: "kautz", build: func() (*fabric.Fabric, error) { return gen(topo.Kautz(4, 3, 3)) }},
		{name: "slimfly5-h4", family: "slimfly", build: func() (*fabric.Fabric, error) { return gen(topo.SlimFly(5, 4)) }},
		{name: "random64", family: "random", build: func() (*fabric.Fabric, error) { return gen(topo.Random(64, 6, 3, 3)) }},
		// LMC > 0: several LIDs per CA port (and per enhanced switch).
		{name: "torus4x4-lmc2", family: "torus", short: true, shape: torus, build: func() (*fabric.Fabric, error) { return withLMC(gen(topo.Torus([]int{4, 4}, 1, false)))(2) }},
		{name: "fattree4-3-lmc1", family: "fattree", shape: tree, build: func() (*fabric.Fabric, error) { return withLMC(gen(topo.FatTree(4, 3, 0)))(1) }},
		{name: "kautz2-3-lmc1", family: "kautz", build: func() (*fabric.Fabric, error) { return withLMC(gen(topo.Kautz(2, 3, 2)))(1) }},
		// A switch graph in two pieces: any two failed cables split a ring.
		{name: "ring8-split", family: "ring", short: true, failed: true, build: func() (*fabric.Fabric, error) {
			return failCount(func() (*topo.Topology, error) { return topo.Ring(8, 1, nil) }, 2, 1)()
		}},
	}
	// Failed links, fixed seeds: 1 %, 3 %, 5 % of the cables.
	for _, p := range []struct {
		pct  int
		seed uint64
	}{{1, 101}, {3, 103}, {5, 105}} {
		frac := float64(p.pct) / 100
		cs = append(cs,
			&fabricCase{name: fmt.Sprintf("torus4x4x4-%dpct", p.pct), family: "torus", shape: torus, failed: true,
				build: failLinks(func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 4}, 2, false) }, frac, p.seed)},
			&fabricCase{name: fmt.Sprintf("fattree4-3-%dpct", p.pct), family: "fattree", shape: tree, failed: true,
				build: failLinks(func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, frac, p.seed)},
			&fabricCase{name: fmt.Sprintf("kautz3-3-%dpct", p.pct), family: "kautz", failed: true, short: p.pct == 5,
				build: failLinks(func() (*topo.Topology, error) { return topo.Kautz(3, 3, 2) }, frac, p.seed)},
		)
	}
	return append(cs, corpusCases()...)
}

// corpusCases lists the sample dumps; LIDs are assigned where a dump has
// none.
func corpusCases() []*fabricCase {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.topo"))
	sort.Strings(files)
	var cs []*fabricCase
	for _, file := range files {
		fi, err := os.Stat(file)
		c := &fabricCase{name: filepath.Base(file), family: "corpus", short: err == nil && fi.Size() < 10000, shape: maybeTree}
		c.build = func() (*fabric.Fabric, error) {
			res, err := ibnetdiscover.ParseFile(file)
			if err != nil {
				return nil, err
			}
			if err := res.Fabric.AssignLIDs(0); err != nil {
				return nil, err
			}
			return res.Fabric, nil
		}
		cs = append(cs, c)
	}
	return cs
}

// requireCorpus skips loudly when the corpus is absent, so that a checkout
// without the shared corpus still runs the generated fabrics.
func requireCorpus(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("SKIP LOUDLY: the ibnetdiscover corpus is missing at %s (%v); the conformance table runs without the sample dumps", corpusDir, err)
	}
}

// TestCorpusInTable makes a missing corpus visible as a skipped test, and
// checks that every sample dump in it compiles.
func TestCorpusInTable(t *testing.T) {
	requireCorpus(t)
	cs := corpusCases()
	if len(cs) == 0 {
		t.Fatalf("no *.topo files in %s", corpusDir)
	}
	for _, c := range cs {
		g, err := c.graph()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		t.Logf("%-34s %3d switches, %4d terminals, max LID %d", c.name, g.NumSwitches(), len(g.Terms), g.MaxLID())
	}
}

// TestTableCoversGenerators: every generator kind of package topo has
// fabrics in the table, in the -short subset too, and with failed links
// and LMC > 0 somewhere.
func TestTableCoversGenerators(t *testing.T) {
	all, short := map[string]bool{}, map[string]bool{}
	var failed, lmc, parallel bool
	for _, c := range fabricCases() {
		all[c.family] = true
		if c.short {
			short[c.family] = true
		}
		failed = failed || c.failed
		lmc = lmc || strings.Contains(c.name, "lmc")
		parallel = parallel || strings.Contains(c.name, "parallel")
	}
	for _, gen := range topo.Generators() {
		if !all[gen.Kind] {
			t.Errorf("no fabric of generator %q in the table", gen.Kind)
		}
		if !short[gen.Kind] {
			t.Errorf("no fabric of generator %q in the -short subset", gen.Kind)
		}
	}
	if !failed || !lmc || !parallel {
		t.Errorf("the table lacks failed links (%v), LMC > 0 (%v) or parallel cables (%v)", failed, lmc, parallel)
	}
}
