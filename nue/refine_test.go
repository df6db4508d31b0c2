package nue

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestRefine: refinement passes give verified tables within the VL
// limit, deterministic whatever the workers and schedule; one pass is
// Route; without jobs the kept pass's max EFI is no worse than the first
// pass's.
func TestRefine(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func() (*topo.Topology, error)
	}{
		{"fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
		{"torus4x4x3", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 3}, 2, false) }},
		{"random24", func() (*topo.Topology, error) { return topo.Random(24, 4, 2, 11) }},
	} {
		tp, err := c.gen()
		g := build(t, tp, err)
		jobs := []routing.Job{{ID: "a", Terms: []int32{0, 3, 5, 8, 13}}, {ID: "b", Terms: []int32{1, 2, 9, 10, 11, 20}}}
		for _, opt := range []routing.Options{{MaxVLs: 2}, {MaxVLs: 4, Jobs: jobs, SAR: true}} {
			one, err := Engine{}.Route(context.Background(), g, opt)
			if err != nil {
				t.Fatal(err)
			}
			if r1, err := (Engine{}).RouteRefined(context.Background(), g, opt, 1); err != nil || !lft.Equal(one, r1) {
				t.Fatalf("%s: one pass differs from Route (%v)", c.name, err)
			}
			var ref *lft.Routing
			for _, workers := range []int{1, 2, 1} {
				for _, sched := range []Schedule{Sequential, LockStep} {
					o := opt
					o.Workers = workers
					r, err := Engine{Config: Config{Schedule: sched}}.RouteRefined(context.Background(), g, o, 4)
					if err != nil {
						t.Fatal(err)
					}
					if rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: opt.MaxVLs, SwitchDelivery: true}); err != nil {
						t.Fatalf("%s %s: %v\n%s", c.name, sched, err, rep)
					}
					if sched != Sequential {
						continue
					}
					if ref == nil {
						ref = r
					} else if !lft.Equal(ref, r) {
						t.Fatalf("%s: refined routing differs with %d workers", c.name, workers)
					}
				}
			}
			if opt.SAR {
				continue
			}
			m1, err := routing.Measure(g, one, 0)
			if err != nil {
				t.Fatal(err)
			}
			m4, err := routing.Measure(g, ref, 0)
			if err != nil {
				t.Fatal(err)
			}
			if m4.MaxEFI > m1.MaxEFI {
				t.Errorf("%s: max EFI %d after 4 passes, %d after one", c.name, m4.MaxEFI, m1.MaxEFI)
			}
			t.Logf("%s: max EFI %d after one pass, %d after 4", c.name, m1.MaxEFI, m4.MaxEFI)
		}
	}
}

// TestRefineProgress: the passes report as one run, up to its total.
func TestRefineProgress(t *testing.T) {
	tp, err := topo.FatTree(4, 2, 0)
	g := build(t, tp, err)
	var last, total int
	opt := routing.Options{Workers: 1, Progress: func(done, all int) {
		if done < last || (total != 0 && all != total) {
			t.Errorf("progress %d/%d after %d/%d", done, all, last, total)
		}
		last, total = done, all
	}}
	if _, err := (Engine{}).RouteRefined(context.Background(), g, opt, 3); err != nil {
		t.Fatal(err)
	}
	if last != total || total == 0 {
		t.Fatalf("progress ended at %d/%d", last, total)
	}
}
