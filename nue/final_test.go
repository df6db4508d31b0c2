package nue

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// recordFinals keeps every column and SL as routing.Options.Final
// receives it.
type recordFinals struct {
	g      *fabric.Graph
	r      *lft.Routing
	vls    int
	starts int
	cols   map[int][]uint8
	sls    map[int]uint8
}

func (f *recordFinals) Start(r *lft.Routing, vls int) {
	f.r, f.vls, f.cols, f.sls = r, vls, map[int][]uint8{}, map[int]uint8{}
	f.starts++
}

func (f *recordFinals) Final(lid int) {
	col := make([]uint8, f.g.NumSwitches())
	for x := range col {
		col[x] = f.r.Port(int32(x), lid)
	}
	f.cols[lid], f.sls[lid] = col, f.r.SL.ByDest[lid]
}

// finalGraphs are the fabrics the Final tests route: generated direct and
// indirect ones and the corpus dumps.
func finalGraphs(t *testing.T) map[string]*fabric.Graph {
	gs := map[string]*fabric.Graph{}
	tp, err := topo.FatTree(4, 3, 0)
	gs["fattree 4,3"] = build(t, tp, err)
	tp, err = topo.Torus([]int{4, 4, 3}, 2, false)
	gs["torus 4x4x3"] = build(t, tp, err)
	tp, err = topo.Random(24, 4, 3, 5)
	gs["random 24"] = build(t, tp, err)
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "ibnetdiscover", "*.topo"))
	for _, f := range files {
		gs[filepath.Base(f)] = compileDump(t, f)
	}
	return gs
}

// TestFinalColumnsStayFinal: every destination Nue reports final keeps
// its column and SL to the end, in the tables it returns, with SLs in the
// VLs it announced; and it reports every endpoint LID (else the early
// walks would leave them to the end).
func TestFinalColumnsStayFinal(t *testing.T) {
	for name, g := range finalGraphs(t) {
		for _, k := range []int{1, 2, 8} {
			f := &recordFinals{g: g}
			r, err := Engine{}.Route(context.Background(), g, routing.Options{MaxVLs: k, Workers: 1, Final: f})
			if err != nil {
				t.Fatalf("%s k=%d: %v", name, k, err)
			}
			if f.starts == 0 || f.r != r {
				t.Fatalf("%s k=%d: Final saw %d starts, last on other tables", name, k, f.starts)
			}
			if r.MaxVL()+1 != f.vls {
				t.Errorf("%s k=%d: announced %d VLs, uses %d", name, k, f.vls, r.MaxVL()+1)
			}
			endpoints := 0
			for lid := 1; lid <= g.MaxLID(); lid++ {
				if sw, term := g.Owner(lid); sw >= 0 || term >= 0 {
					endpoints++
				}
			}
			if len(f.cols) != endpoints {
				t.Errorf("%s k=%d: %d of %d endpoint LIDs reported final", name, k, len(f.cols), endpoints)
			}
			for lid, col := range f.cols {
				for x, p := range col {
					if q := r.Port(int32(x), lid); q != p {
						t.Fatalf("%s k=%d: LID %d at switch %d: port %d when reported final, %d at the end", name, k, lid, x, p, q)
					}
				}
				if f.sls[lid] != r.SL.ByDest[lid] {
					t.Fatalf("%s k=%d: LID %d: SL %d when reported final, %d at the end", name, k, lid, f.sls[lid], r.SL.ByDest[lid])
				}
			}
		}
	}
}

// TestChainEarlyVerify: a chain that verifies Nue's destinations while
// Nue routes (small fabrics, more than one core) gives the tables of one
// goroutine and Verify's report on them.
func TestChainEarlyVerify(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("SKIPPING: one core, the chain verifies after routing")
	}
	for name, g := range finalGraphs(t) {
		if !routing.SmallTables(g) {
			t.Fatalf("%s: not small", name)
		}
		for _, k := range []int{1, 8} {
			label := fmt.Sprintf("%s k=%d", name, k)
			res, err := routing.RouteChain(context.Background(), g, []routing.Engine{Engine{}}, routing.Options{MaxVLs: k})
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			one, err := routing.RouteChain(context.Background(), g, []routing.Engine{Engine{}}, routing.Options{MaxVLs: k, Workers: 1})
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if !lft.Equal(res.Routing, one.Routing) {
				t.Errorf("%s: tables differ from one goroutine's", label)
			}
			want, err := routing.Verify(g, res.Routing, Engine{}, routing.Options{MaxVLs: k})
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if !reflect.DeepEqual(res.Report, want) {
				t.Errorf("%s: report\n%v\nVerify's\n%v", label, res.Report, want)
			}
		}
	}
}
