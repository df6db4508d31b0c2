package sm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// Old tables that are unsafe on their own (MinHop on a ring has a
// dependency cycle) admit no live plan: the planner falls back to the full
// drain, says so, and does not fail the reroute.
func TestPlannerFallsBackToDrain(t *testing.T) {
	tp, err := topo.Ring(5, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	route := func(engine string) *lft.Routing {
		e, err := routing.Lookup(engine)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	old, new := route("minhop"), route("updn")
	res, err := NewPlanner(1).Plan(context.Background(), g, old, new)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary.Note, "full drain") || res.Summary.DrainPhases != 1 {
		t.Fatalf("fallback: %+v", res.Summary)
	}
	var b strings.Builder
	if err := res.Write(&b); err != nil {
		t.Fatal(err)
	}
	var pj struct{ Steps []struct{ Kind string } }
	if err := json.Unmarshal([]byte(b.String()), &pj); err != nil || len(pj.Steps) == 0 || pj.Steps[0].Kind != "pause" {
		t.Fatalf("plan.json does not start with the drain's pause step: %v\n%s", err, b.String())
	}
}
