package enginetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// determinismFabrics are the fabrics of the determinism check: between
// them every engine routes at least one (DOR a torus, ftree a tree, PORA a
// NovaCube), with parallel cables, LMC and failures among them; the first
// five are the -short subset.
var determinismFabrics = []string{"torus4x4", "clos3-4", "random16", "torus4x4-lmc2", "novacube4-2", "dragonfly-g2-parallel", "fattree4-3-3pct", "kautz3-3", "torus6x6x6"}

// TestDeterminism runs every engine three times on the same fabric, twice
// with 4 workers and once with 1: the tables (or the refusal) must be
// identical each time.
func TestDeterminism(t *testing.T) {
	names := determinismFabrics
	if testing.Short() {
		names = names[:5]
	}
	byName := map[string]*fabricCase{}
	for _, c := range fabricCases() {
		byName[c.name] = c
	}
	var mu sync.Mutex
	routed := map[string]bool{} // engines that produced tables at least once
	t.Run("fabric", func(t *testing.T) {
		for _, name := range names {
			c := byName[name]
			if c == nil {
				t.Fatalf("no fabric %q in the table", name)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				g, err := c.graph()
				if err != nil {
					t.Fatal(err)
				}
				for _, engine := range suiteEngines() {
					a := route(engine, g, 4)
					for i, workers := range []int{4, 1} {
						if b := route(engine, g, workers); !a.same(b) {
							t.Errorf("%s: run %d (%d workers) differs from the first: %s vs %s", engine, i+2, workers, b, a)
						}
					}
					if a.r != nil {
						mu.Lock()
						routed[engine] = true
						mu.Unlock()
					}
				}
			})
		}
	})
	for _, e := range suiteEngines() {
		if !routed[e] {
			t.Errorf("%s routed none of the determinism fabrics %v", e, names)
		}
	}
}

// run is one engine run: tables or an error.
type run struct {
	r   *lft.Routing
	err string
}

func route(engine string, g *fabric.Graph, workers int) run {
	e, err := newEngine(engine)
	if err != nil {
		return run{err: err.Error()}
	}
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: maxVLs, Workers: workers})
	if err != nil {
		return run{err: err.Error()}
	}
	return run{r: r}
}

func (a run) same(b run) bool {
	if a.r == nil || b.r == nil {
		return a.r == nil && b.r == nil && a.err == b.err
	}
	return lft.Equal(a.r, b.r) && a.r.Engine == b.r.Engine
}

func (a run) String() string {
	if a.r == nil {
		return "error " + a.err
	}
	return fmt.Sprintf("tables (%d VLs, %d entries, per-dest SLs %v)", a.r.NumVLs, a.r.Entries(), a.r.SL.PerDest())
}
