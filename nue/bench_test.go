package nue

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

var (
	benchOnce   sync.Map // name -> *fabric.Graph
	benchMakers = map[string]func() (*topo.Topology, error){
		"fattree12-3": func() (*topo.Topology, error) { return topo.FatTree(12, 3, 0) },
		"fattree18-3": func() (*topo.Topology, error) { return topo.FatTree(18, 3, 0) },
		"torus8x8x8":  func() (*topo.Topology, error) { return topo.Torus([]int{8, 8, 8}, 4, false) },
		"clos3-36":    func() (*topo.Topology, error) { return topo.Clos3(36) },
		"clos3-56":    func() (*topo.Topology, error) { return topo.Clos3(56) },
		"dragonfly8":  func() (*topo.Topology, error) { return topo.Dragonfly(8, 16, 8, 0) },
		"random128-8": func() (*topo.Topology, error) { return topo.Random(128, 4, 8, 1) },
	}
)

func benchGraph(b *testing.B, name string) *fabric.Graph {
	b.Helper()
	if g, ok := benchOnce.Load(name); ok {
		return g.(*fabric.Graph)
	}
	tp, err := benchMakers[name]()
	if err != nil {
		b.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		b.Fatal(err)
	}
	benchOnce.Store(name, g)
	return g
}

func benchEngine(b *testing.B, engine, fab string, k int) {
	g := benchGraph(b, fab)
	e, err := routing.Lookup(engine)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Route(context.Background(), g, routing.Options{MaxVLs: k}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNue_FatTree3_k12(b *testing.B)    { benchEngine(b, "nue", "fattree12-3", 8) }
func BenchmarkMinHop_FatTree3_k12(b *testing.B) { benchEngine(b, "minhop", "fattree12-3", 8) }
func BenchmarkNue_FatTree3_k18(b *testing.B)    { benchEngine(b, "nue", "fattree18-3", 8) }
func BenchmarkMinHop_FatTree3_k18(b *testing.B) { benchEngine(b, "minhop", "fattree18-3", 8) }
func BenchmarkNue_Clos3_r36(b *testing.B)       { benchEngine(b, "nue", "clos3-36", 8) }
func BenchmarkMinHop_Clos3_r36(b *testing.B)    { benchEngine(b, "minhop", "clos3-36", 8) }
func BenchmarkNue_Torus8x8x8(b *testing.B)      { benchEngine(b, "nue", "torus8x8x8", 8) }
func BenchmarkMinHop_Torus8x8x8(b *testing.B)   { benchEngine(b, "minhop", "torus8x8x8", 8) }

// The scale targets take tens of seconds per run: they only run when
// asked for by name (make bench-nue), not in the default benchmark sweep.
func BenchmarkNueScale_Clos3_r36(b *testing.B)       { benchEngine(b, "nue", "clos3-36", 8) }
func BenchmarkNueScale_Dragonfly_p8(b *testing.B)    { benchEngine(b, "nue", "dragonfly8", 8) }
func BenchmarkMinHopScale_Clos3_r36(b *testing.B)    { benchEngine(b, "minhop", "clos3-36", 8) }
func BenchmarkMinHopScale_Dragonfly_p8(b *testing.B) { benchEngine(b, "minhop", "dragonfly8", 8) }

// BenchmarkNueScale_Clos3_r56VerifyK8: the largest subnet InfiniBand
// allows in practice (43,904 CAs, 3,920 switches, 47,824 LIDs), routed
// with Nue at 8 VLs and verified (cdg.Verify with switch delivery), as
// a published routing is. Run by name (make bench-nue), under
// /usr/bin/time -v for the peak memory.
func BenchmarkNueScale_Clos3_r56VerifyK8(b *testing.B) {
	g := benchGraph(b, "clos3-56")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _, err := Route(context.Background(), g, routing.Options{MaxVLs: 8})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 8, SwitchDelivery: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChain routes and verifies as nuesm route does (routing.RouteChain:
// the engine, then the verifier with the engine's options, the workers
// the chain's choice), the figure bench/opensm compares with OpenSM's nue.
func benchChain(b *testing.B, fab string, k int) {
	benchChainGraph(b, benchGraph(b, fab), k)
}

func benchChainGraph(b *testing.B, g *fabric.Graph, k int) {
	e, err := routing.Lookup("nue")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer enginetest.ReportCPU(b, enginetest.CPUTime())
	for i := 0; i < b.N; i++ {
		res, err := routing.RouteChain(context.Background(), g, []routing.Engine{e}, routing.Options{MaxVLs: k})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Report.OK() {
			b.Fatal("not verified")
		}
	}
}

// The random fabric of bench/opensm (128 switches of degree 4, 8 CAs
// each, seed 1), route and verify, at 1 and 8 VLs.
func BenchmarkNueChain_Random128_k1(b *testing.B) { benchChain(b, "random128-8", 1) }
func BenchmarkNueChain_Random128_k8(b *testing.B) { benchChain(b, "random128-8", 8) }
func BenchmarkNue_Random128_k1(b *testing.B)      { benchEngine(b, "nue", "random128-8", 1) }
func BenchmarkNue_Random128_k8(b *testing.B)      { benchEngine(b, "nue", "random128-8", 8) }

// corpusGraph is a sample dump of ../shared/corpus, compiled once, LIDs
// assigned where the dump has none (as nuesm route does); the benchmark
// is skipped when the corpus is absent.
func corpusGraph(b *testing.B, name string) *fabric.Graph {
	b.Helper()
	if g, ok := benchOnce.Load("corpus/" + name); ok {
		return g.(*fabric.Graph)
	}
	file := filepath.Join("..", "..", "shared", "corpus", "ibnetdiscover", name+".topo")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		b.Skipf("SKIPPING: %s absent (../shared not there)", file)
	}
	g := compileDump(b, file)
	benchOnce.Store("corpus/"+name, g)
	return g
}

// The corpus fabrics of bench/opensm whose routing OpenSM's log resolves
// (milliseconds): the k=4 fat tree (80 switches) and the 8-switch
// cluster, route and verify at 1 and 8 VLs. Their time is mostly fixed
// costs (set-up per layer, per VL, per run).
func BenchmarkNueChain_FatTreeK4_k1(b *testing.B) {
	benchChainGraph(b, corpusGraph(b, "fattree-k4-n3-80sw-128ca"), 1)
}
func BenchmarkNueChain_FatTreeK4_k8(b *testing.B) {
	benchChainGraph(b, corpusGraph(b, "fattree-k4-n3-80sw-128ca"), 8)
}
func BenchmarkNueChain_Cluster8_k1(b *testing.B) {
	benchChainGraph(b, corpusGraph(b, "hpc-cluster-2014-8sw-144ca"), 1)
}
func BenchmarkNueChain_Cluster8_k8(b *testing.B) {
	benchChainGraph(b, corpusGraph(b, "hpc-cluster-2014-8sw-144ca"), 8)
}
