package cdg_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// minRouting routes every LID along BFS shortest paths, each switch taking
// its lowest-numbered port towards the destination, with SL lid % sls.
func minRouting(t *testing.T, g *fabric.Graph, sls int) *lft.Routing {
	t.Helper()
	r := lft.New(g, "test-min")
	S := g.NumSwitches()
	dist, queue := make([]int32, S), make([]int32, S)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		dsw, dport, _ := lft.Target(g, lid)
		if dsw < 0 {
			continue
		}
		r.SL.ByDest[lid] = uint8(lid % sls)
		g.BFS(dsw, dist, queue)
		for u := int32(0); int(u) < S; u++ {
			if u == dsw {
				r.SetPort(u, lid, dport)
				continue
			}
			for c := g.Off[u]; c < g.Off[u+1] && dist[u] > 0; c++ {
				if dist[g.Head[c]] == dist[u]-1 {
					r.SetPort(u, lid, g.OutPort[c])
					break
				}
			}
		}
	}
	r.NumVLs = sls
	return r
}

func graphOf(t *testing.T, make func() (*topo.Topology, error)) *fabric.Graph {
	t.Helper()
	tp, err := make()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// earlyRun hands final's columns and SLs to an Early LID by LID (every
// other endpoint LID, in descending order; the rest at Finish) on tables
// it fills as an engine would, and returns Finish's report on them.
// step > 0 walks on the test's goroutine after every step LIDs handed
// over (as Early's goroutine would, deterministically); 0 leaves the
// walks to Early's goroutine. change, if set, alters the tables after
// the handing over, before Finish.
func earlyRun(t *testing.T, g *fabric.Graph, final *lft.Routing, vls, step int, change func(*lft.Routing)) (*lft.Routing, *cdg.Report, error, int) {
	t.Helper()
	r := lft.New(g, final.Engine)
	r.NumVLs, r.SL2VL = final.NumVLs, final.SL2VL
	opt := cdg.Options{SwitchDelivery: true}
	var e *cdg.Early
	if step > 0 {
		e = cdg.NewEarlyManual(g, r, opt, vls)
	} else {
		e = cdg.NewEarly(g, r, opt, vls)
	}
	if e == nil {
		t.Fatal("no early verification for these tables")
	}
	put := func(lid int) {
		for x := int32(0); int(x) < g.NumSwitches(); x++ {
			r.SetPort(x, lid, final.Port(x, lid))
		}
		r.SL.ByDest[lid] = final.SL.ByDest[lid]
	}
	n := 0
	for lid := g.MaxLID(); lid >= 1; lid-- {
		if lid%2 == 1 {
			continue
		}
		put(lid)
		e.Final(lid)
		if n++; step > 0 && n%step == 0 {
			cdg.DrainEarly(e)
		}
	}
	if step > 0 {
		cdg.DrainEarly(e)
	}
	for lid := 1; lid <= g.MaxLID(); lid += 2 {
		put(lid)
	}
	if change != nil {
		change(r)
	}
	rep, err := e.Finish()
	return r, rep, err, cdg.EarlyWalked(e)
}

// sameAsVerify fails unless rep and err are Verify's on r.
func sameAsVerify(t *testing.T, g *fabric.Graph, r *lft.Routing, rep *cdg.Report, err error) {
	t.Helper()
	want, werr := cdg.Verify(g, r, cdg.Options{SwitchDelivery: true})
	if fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Errorf("error %v, Verify's %v", err, werr)
	}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("report\n%v\nVerify's\n%v", rep, want)
	}
}

type earlyCase struct {
	name string
	g    *fabric.Graph
	r    *lft.Routing
	vls  int
}

func earlyCases(t *testing.T) []earlyCase {
	ft := graphOf(t, func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) })
	ring := graphOf(t, func() (*topo.Topology, error) { return topo.Ring(5, 2, nil) })
	broken := minRouting(t, ft, 2)
	// A dead end for one LID at one switch: the pair walk and its
	// examples.
	lid := ft.MaxLID() / 2
	dsw, _, _ := lft.Target(ft, lid)
	broken.SetPort((dsw+1)%int32(ft.NumSwitches()), lid, lft.NoPort)
	return []earlyCase{
		{"fattree/1 SL", ft, minRouting(t, ft, 1), 1},
		{"fattree/3 SLs", ft, minRouting(t, ft, 3), 3},
		{"ring/cycle", ring, minRouting(t, ring, 1), 1},
		{"fattree/dead end", ft, broken, 2},
	}
}

// TestEarlyMatchesVerify: whatever the early walks did, Finish reports
// what Verify reports on the final tables: delivery, CDG, cycles and
// examples of failing pairs.
func TestEarlyMatchesVerify(t *testing.T) {
	for _, c := range earlyCases(t) {
		for _, step := range []int{1, 7, 0} {
			t.Run(fmt.Sprintf("%s/step %d", c.name, step), func(t *testing.T) {
				r, rep, err, walked := earlyRun(t, c.g, c.r, c.vls, step, nil)
				if step > 0 && walked == 0 {
					t.Fatal("nothing walked early")
				}
				sameAsVerify(t, c.g, r, rep, err)
			})
		}
	}
}

// TestEarlySeesLateChange: tables changed after their destinations were
// walked early (an engine breaking its word) are verified as they end up,
// not as they were walked: a report from the early walks would pass every
// one of these.
func TestEarlySeesLateChange(t *testing.T) {
	ft := graphOf(t, func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) })
	final := minRouting(t, ft, 3)
	lid := ft.MaxLID() - 2 // handed over, so walked early
	dsw, _, _ := lft.Target(ft, lid)
	if dsw < 0 {
		t.Fatal("no endpoint at the test LID")
	}
	// A switch one hop from the destination's switch, and back: a loop.
	c := ft.Off[dsw]
	nb := ft.Head[c]
	back := ft.InPort[c]
	changes := map[string]func(*lft.Routing){
		"loop": func(r *lft.Routing) {
			r.SetPort(dsw, lid, ft.OutPort[c])
			r.SetPort(nb, lid, back)
		},
		"SL":                         func(r *lft.Routing) { r.SL.ByDest[lid] = (r.SL.ByDest[lid] + 1) % 3 },
		"SL beyond the VLs laid out": func(r *lft.Routing) { r.SL.ByDest[lid] = 5 },
		"dead end": func(r *lft.Routing) {
			r.SetPort((dsw+1)%int32(ft.NumSwitches()), lid, lft.NoPort)
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			r, rep, err, walked := earlyRun(t, ft, final, 3, 1, change)
			if walked == 0 {
				t.Fatal("nothing walked early")
			}
			if ok := err == nil; ok {
				if name != "SL" {
					t.Errorf("changed tables pass: %v", rep)
				}
			}
			sameAsVerify(t, ft, r, rep, err)
		})
	}
}
