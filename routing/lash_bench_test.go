package routing

import (
	"context"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// lashRandom is a 128-switch random regular fabric of degree 6, 2 hosts
// per switch: irregular, so many LASH paths go against the layer orders
// and take the Pearce–Kelly search.
var lashRandom = sync.OnceValues(func() (*fabric.Graph, error) {
	tp, err := topo.Random(128, 6, 2, 5)
	if err != nil {
		return nil, err
	}
	return fabric.Compile(tp.Fabric)
})

func BenchmarkLASH_Random128(b *testing.B) {
	g, err := lashRandom()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := (LASH{}).Route(context.Background(), g, Options{MaxVLs: 15}); err != nil {
			b.Fatal(err)
		}
	}
}
