package dfsssp

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// Benchmark fixtures, built once.
var (
	benchOnce                                          sync.Once
	benchFatTree, benchTorus4, benchTorus8, benchKautz *fabric.Graph
)

func benchFixtures(b *testing.B) {
	benchOnce.Do(func() {
		build := func(tp *topo.Topology, err error) *fabric.Graph {
			if err != nil {
				b.Fatal(err)
			}
			g, err := fabric.Compile(tp.Fabric)
			if err != nil {
				b.Fatal(err)
			}
			return g
		}
		benchFatTree = build(topo.FatTree(12, 3, 0))
		benchTorus4 = build(topo.Torus([]int{4, 4, 4}, 1, false))
		benchTorus8 = build(topo.Torus([]int{8, 8, 8}, 4, false))
		benchKautz = build(topo.Kautz(7, 3, 6))
	})
}

// BenchmarkSSSP_FatTree_k12n3: 432 switches, 1,728 hosts, 2,160
// destination LIDs.
func BenchmarkSSSP_FatTree_k12n3(b *testing.B) {
	benchFixtures(b)
	for b.Loop() {
		if _, err := RouteSSSP(context.Background(), benchFatTree, routing.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDFSSSP_FatTree_k12n3: the same with the layering (1 VL needed).
func BenchmarkDFSSSP_FatTree_k12n3(b *testing.B) {
	benchFixtures(b)
	for b.Loop() {
		if _, _, err := RouteDFSSSP(context.Background(), benchFatTree, routing.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDFSSSP_Torus4x4x4: 64 switches with one host each.
func BenchmarkDFSSSP_Torus4x4x4(b *testing.B) {
	benchFixtures(b)
	for b.Loop() {
		if _, _, err := RouteDFSSSP(context.Background(), benchTorus4, routing.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDFSSSP_Torus8x8x8_fails: the known-answer fabric (512
// switches, 2,048 hosts); the run ends with a VLError after layering 8
// layers.
func BenchmarkDFSSSP_Torus8x8x8_fails(b *testing.B) {
	benchFixtures(b)
	for b.Loop() {
		if _, _, err := RouteDFSSSP(context.Background(), benchTorus8, routing.Options{}); !errors.Is(err, routing.ErrNeedVLs) {
			b.Fatal(err)
		}
	}
}

// BenchmarkDFSSSP_Kautz7_3_fails: 392 switches, 2,352 hosts; a VLError.
func BenchmarkDFSSSP_Kautz7_3_fails(b *testing.B) {
	benchFixtures(b)
	for b.Loop() {
		if _, _, err := RouteDFSSSP(context.Background(), benchKautz, routing.Options{}); !errors.Is(err, routing.ErrNeedVLs) {
			b.Fatal(err)
		}
	}
}
