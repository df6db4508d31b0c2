package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	_ "github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// checkLive builds a live update old -> new, proves every stage with
// Verify, and checks every state the steps pass through on its own with
// every destination live: no loop, no CDG cycle within the VL limit.
func checkLive(t *testing.T, g *fabric.Graph, old, new *lft.Routing, vls int) []Stage {
	t.Helper()
	opt := Options{MaxVLs: vls, AllowReorder: true}
	stages, err := BuildLive(context.Background(), g, old, new, opt)
	if err != nil {
		t.Fatal(err)
	}
	cur := old.Clone()
	var steps, writes, dark int
	for k, st := range stages {
		if k == 0 && st.From != old || k > 0 && st.From != stages[k-1].To {
			t.Fatalf("stage %d does not start where stage %d ended", k+1, k)
		}
		rep := verify(t, g, st.From, st.To, st.Plan, opt)
		if !rep.OK() {
			t.Fatalf("stage %d of %d unsafe:\n%s", k+1, len(stages), rep)
		}
		dark += len(st.Plan.Blackout)
		for i := range st.Plan.Steps {
			s := &st.Plan.Steps[i]
			steps++
			if s.Kind == Pause || s.Kind == Resume {
				t.Fatalf("stage %d step %d of a live plan is a %s", k+1, i+1, s.Kind)
			}
			if s.Kind != Write {
				continue
			}
			writes += len(s.LFT)
			for _, w := range s.LFT {
				cur.SetPort(w.Switch, int(w.LID), w.New)
			}
			for _, c := range s.SL {
				lft.ApplySL(&cur.SL, g.NumSwitches(), c)
			}
			cur.NumVLs = max(cur.NumVLs, cur.MaxVL()+1)
			r, _ := cdg.Verify(g, cur, cdg.Options{MaxVLs: vls})
			if r == nil || r.Loops > 0 || r.Cycle != nil {
				t.Fatalf("state after stage %d step %d (%s) unsafe: %v", k+1, i+1, s.Note, r.Err())
			}
		}
	}
	if !lft.Equal(cur, new) && lftDiffers(g, cur, new) {
		t.Fatal("the stages do not end at the new tables")
	}
	t.Logf("%d stages, %d steps, %d LFT writes, %d destinations blacked out", len(stages), steps, writes, dark)
	return stages
}

func lftDiffers(g *fabric.Graph, a, b *lft.Routing) bool {
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for lid := 1; lid <= g.MaxLID(); lid++ {
			if a.Port(s, lid) != b.Port(s, lid) {
				return true
			}
		}
	}
	return false
}

// Live updates after cable failures: full Nue reroutes and minimal
// repairs (routing.Repair) on a torus, a Dragonfly and a fat tree; and
// engine changes on the torus.
func TestBuildLiveAfterFailures(t *testing.T) {
	tor, _ := topo.Torus([]int{4, 4, 4}, 1, false)
	df, _ := topo.Dragonfly(2, 4, 2, 9)
	ft, _ := topo.FatTree(4, 3, 0)
	for _, c := range []struct {
		name string
		tp   *topo.Topology
		vls  int
	}{{"torus4x4x4", tor, 8}, {"torus4x4x4-4vl", tor, 4}, {"dragonfly", df, 4}, {"fattree4", ft, 4}} {
		g0, err := fabric.Compile(c.tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		old := routeWith(t, g0, "nue", routing.Options{MaxVLs: c.vls})
		for _, frac := range []float64{0.01, 0.05} {
			t.Run(fmt.Sprintf("%s/%.0fpct", c.name, frac*100), func(t *testing.T) {
				g := failLinks(t, c.tp, frac, 7)
				checkLive(t, g, old, routeWith(t, g, "nue", routing.Options{MaxVLs: c.vls}), c.vls)
				rep, _, err := routing.Repair(context.Background(), g, old)
				if err == nil {
					checkLive(t, g, old, rep, c.vls)
				} else {
					t.Logf("no repair: %v", err)
				}
			})
		}
	}
}

// An engine change on the torus: Nue to DFSSSP (SLs per source switch).
func TestBuildLiveEngineChange(t *testing.T) {
	tor, err := topo.Torus([]int{4, 4, 4}, 1, false)
	g := compile(t, tor, err)
	nue := routeWith(t, g, "nue", routing.Options{MaxVLs: 8})
	df := routeWith(t, g, "dfsssp", routing.Options{MaxVLs: 8})
	checkLive(t, g, nue, df, 8)
	checkLive(t, g, df, nue, 8)
}

// The blackout stage verifies only because its destinations may drop:
// without Plan.Blackout, Verify finds the dropped pairs.
func TestBuildLiveBlackoutIsChecked(t *testing.T) {
	tor, err := topo.Torus([]int{4, 4, 4}, 1, false)
	g := compile(t, tor, err)
	nue := routeWith(t, g, "nue", routing.Options{MaxVLs: 8})
	df := routeWith(t, g, "dfsssp", routing.Options{MaxVLs: 8})
	stages := checkLive(t, g, nue, df, 8)
	opt := Options{MaxVLs: 8, AllowReorder: true}
	found := false
	for _, st := range stages {
		if len(st.Plan.Blackout) == 0 {
			continue
		}
		found = true
		rep := verify(t, g, st.From, st.To, st.Plan, opt)
		if rep.BlackoutPairs == 0 {
			t.Errorf("a blackout stage reports no blacked-out pairs")
		}
		p := *st.Plan
		p.Blackout = nil
		if rep := verify(t, g, st.From, st.To, &p, opt); rep.OK() {
			t.Errorf("the blackout stage verifies without naming its destinations: drops are not checked")
		}
	}
	if !found {
		t.Fatal("no blackout stage: the test proves nothing")
	}
}

// A change of the SL2VL tables is refused: no live plan orders it.
func TestBuildLiveRefusesSL2VLChange(t *testing.T) {
	tor, err := topo.Torus([]int{4, 4, 4}, 1, false)
	g := compile(t, tor, err)
	old := routeWith(t, g, "nue", routing.Options{MaxVLs: 8})
	new := old.Clone()
	new.SL2VL.Default[15] = (old.SL2VL.Default[15] + 1) % 8
	_, err = BuildLive(context.Background(), g, old, new, Options{MaxVLs: 8})
	if !errors.Is(err, ErrNeedsDrain) {
		t.Fatalf("SL2VL change: %v, expected ErrNeedsDrain", err)
	}
	t.Log(err)
}

// A failed switch: its LID has no owner on the fabric left, so the
// entries towards it change in a last stage of their own; the stages end
// exactly at the new tables.
func TestBuildLiveSwitchFailure(t *testing.T) {
	ft, err := topo.FatTree(4, 3, 0)
	g0 := compile(t, ft, err)
	old0 := routeWith(t, g0, "nue", routing.Options{MaxVLs: 4})
	f, _, err := topo.InjectFailures(ft.Fabric, topo.FailureSpec{Switches: 1, Seed: 3, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := lft.WriteOpenSMLFTs(&buf, g0, old0); err != nil {
		t.Fatal(err)
	}
	old, err := lft.ReadLFTs(&buf, "old", g, lft.ReadOptions{SkipUnknownSwitches: true})
	if err != nil {
		t.Fatal(err)
	}
	old.SL, old.NumVLs = old0.SL, old0.NumVLs
	new := routeWith(t, g, "nue", routing.Options{MaxVLs: 4})
	stages := checkLive(t, g, old, new, 4)
	t.Logf("%d switches left; last stage: %s", g.NumSwitches(), stages[len(stages)-1].Plan.Steps[0].Note)
}
