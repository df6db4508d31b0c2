package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// DOR's dateline classes live in per-port SL2VL tables, Nue's layers in
// SLs: a reroute between them changes SLs, SL2VL tables and paths. The
// planner drains the changed pairs (SL2VL tables cannot be ordered per
// destination), both directions verify, and the one-shot update does not.
func TestSL2VLReroute(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	g := compile(t, tp, err)
	dor := routeWith(t, g, "dor", routing.Options{MaxVLs: 4})
	nue := routeWith(t, g, "nue", routing.Options{MaxVLs: 4})
	if dor.SL2VL.Uniform() {
		t.Fatal("fixture: DOR without SL2VL tables")
	}
	for _, c := range [][2]*lft.Routing{{dor, nue}, {nue, dor}} {
		old, new := c[0], c[1]
		for _, opt := range []Options{{MaxVLs: 4}, {MaxVLs: 8, AllowReorder: true}} {
			p := build(t, g, old, new, opt)
			rep := verify(t, g, old, new, p, opt)
			if !rep.OK() {
				t.Fatalf("%s -> %s %+v:\n%s", old.Engine, new.Engine, opt, rep)
			}
			if m := p.Metrics(); m.SL2VLWrites == 0 || m.DrainPhases != 1 {
				t.Fatalf("%s -> %s: %d SL2VL writes, %d drain phases", old.Engine, new.Engine, m.SL2VLWrites, m.DrainPhases)
			}
		}
		one := OneShot(mustDiff(t, g, old, new))
		if rep := verify(t, g, old, new, one, Options{MaxVLs: 8, AllowReorder: true}); rep.OK() {
			t.Fatalf("%s -> %s: one-shot update accepted", old.Engine, new.Engine)
		}
	}
}

// The initial plan (nothing routed before) and the full drain are safe
// for any pair of safe routings, SL2VL tables included.
func TestInitialAndFullDrain(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	g := compile(t, tp, err)
	dor := routeWith(t, g, "dor", routing.Options{MaxVLs: 4})
	nue := routeWith(t, g, "nue", routing.Options{MaxVLs: 4})
	for _, r := range []*lft.Routing{dor, nue} {
		p, err := Initial(g, r)
		if err != nil {
			t.Fatal(err)
		}
		if rep := verify(t, g, Empty(g), r, p, Options{MaxVLs: 4}); !rep.OK() || p.Metrics().WriteSteps != 2 {
			t.Fatalf("initial plan for %s (%d steps):\n%s", r.Engine, len(p.Steps), rep)
		}
	}
	full := FullDrain(g, mustDiff(t, g, dor, nue))
	rep := verify(t, g, dor, nue, full, Options{MaxVLs: 4})
	if !rep.OK() || rep.ReorderPairs != 0 || full.Metrics().DrainPhases != 1 {
		t.Fatalf("full drain:\n%s", rep)
	}
	if p := FullDrain(g, mustDiff(t, g, dor, dor)); len(p.Steps) != 0 {
		t.Fatalf("full drain of equal routings has %d steps", len(p.Steps))
	}
}

// The JSON forms carry every write and name steps and strategies.
func TestJSON(t *testing.T) {
	g, old, new := ringReroute(t)
	opt := Options{MaxVLs: 1, AllowReorder: true}
	p := build(t, g, old, new, opt)
	pj := p.JSON(g)
	pj.Verify = verify(t, g, old, new, p, opt).JSON()
	b, err := json.Marshal(pj)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"write"`, `"kind":"pause"`, `"strategy":"in-place"`, `"strategy":"drained"`, `"safe":true`, `"method":"exhaustive"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("plan JSON lacks %s:\n%s", want, b)
		}
	}
	n := 0
	for _, s := range pj.Steps {
		for _, sw := range s.LFT {
			n += len(sw.Entries)
		}
	}
	if n != p.Metrics().Writes {
		t.Fatalf("JSON lists %d writes, the plan has %d", n, p.Metrics().Writes)
	}
}
