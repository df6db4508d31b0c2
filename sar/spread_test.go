package sar

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestSpreadScatter: on the k=8 3-level fat tree with a scattered job mix
// (no locality, where every engine puts one destination's inflow onto
// one channel into its switch), sar-nue's spreading gives a strictly
// lower effective EFI than plain Nue and than sar-nue without it, never
// a higher worst-job EFI, never below the bound (a lower bound for any
// destination-based routing), verified, and the same tables on a second
// run.
func TestSpreadScatter(t *testing.T) {
	tp, err := topo.FatTree(8, 3, 0)
	g := compile(t, tp, err)
	all, err := Mix(g, MixConfig{Alloc: AllocScatter}, 1)
	if err != nil {
		t.Fatal(err)
	}
	jobs := MultiSwitch(g, all)
	opt := routing.Options{MaxVLs: 8, Jobs: jobs}
	ctx := context.Background()
	plain, err := nue.Engine{}.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	off, err := NueEngine{NoSpread: true}.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NueEngine{}.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := routing.Verify(g, r, NueEngine{}, opt); err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	again, err := NueEngine{}.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !lft.Equal(r, again) {
		t.Error("two runs on the same jobs gave different tables")
	}
	var m [3]*Metrics
	for i, x := range []*lft.Routing{plain, off, r} {
		if m[i], err = Measure(g, x, jobs); err != nil {
			t.Fatal(err)
		}
	}
	bound := Bound(g, jobs)
	t.Logf("%d jobs: bound %d, nue %d, sar-nue without spreading %d, sar-nue %d (worst job %d, %d, %d)", len(jobs), bound,
		m[0].EffectiveEFI, m[1].EffectiveEFI, m[2].EffectiveEFI, m[0].MaxJobEFI, m[1].MaxJobEFI, m[2].MaxJobEFI)
	if m[2].EffectiveEFI >= m[0].EffectiveEFI || m[2].EffectiveEFI >= m[1].EffectiveEFI {
		t.Errorf("effective EFI %d, not below nue's %d and unspread sar-nue's %d", m[2].EffectiveEFI, m[0].EffectiveEFI, m[1].EffectiveEFI)
	}
	if m[2].MaxJobEFI > m[1].MaxJobEFI {
		t.Errorf("worst job EFI %d, unspread %d", m[2].MaxJobEFI, m[1].MaxJobEFI)
	}
	if m[2].EffectiveEFI < bound {
		t.Errorf("effective EFI %d below the bound %d: Measure or Bound is wrong", m[2].EffectiveEFI, bound)
	}
}

// TestSpreadNeverWorse: spreading Nue's tables on fabrics with cycles
// (tori, a random graph), at one VL and at eight, with jobs scattered at
// random, always yields verified tables (the dependency graph kept
// acyclic, no pair lost) and never a higher effective EFI or worst-job
// EFI; it moves entries on most of them.
func TestSpreadNeverWorse(t *testing.T) {
	torus, err := topo.Torus([]int{6, 6}, 4, false)
	gt := compile(t, torus, err)
	random, err := topo.Random(24, 4, 2, 11)
	gr := compile(t, random, err)
	moved, cases := 0, 0
	for _, f := range []struct {
		name string
		g    *fabric.Graph
	}{{"torus6x6", gt}, {"random24", gr}} {
		name, g := f.name, f.g
		for _, vls := range []int{1, 8} {
			for seed := uint64(1); seed <= 2; seed++ {
				jobs := randomJobs(g, seed)
				opt := routing.Options{MaxVLs: vls}
				r, err := nue.Engine{}.Route(context.Background(), g, opt)
				if err != nil {
					t.Fatal(err)
				}
				vopt := routing.VerifyOptions(NueEngine{}, opt)
				s, n, err := spread(context.Background(), g, r, jobs, vopt)
				if err != nil {
					t.Fatalf("%s, %d VLs, seed %d: %v", name, vls, seed, err)
				}
				if rep, err := cdg.Verify(g, s, vopt); err != nil {
					t.Fatalf("%s, %d VLs, seed %d: %v\n%s", name, vls, seed, err, rep)
				}
				m0, err := Measure(g, r, jobs)
				if err != nil {
					t.Fatal(err)
				}
				m1, err := Measure(g, s, jobs)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s, %d VLs, seed %d: %d entries moved, effective EFI %d -> %d, worst job %d -> %d",
					name, vls, seed, n, m0.EffectiveEFI, m1.EffectiveEFI, m0.MaxJobEFI, m1.MaxJobEFI)
				if m1.EffectiveEFI > m0.EffectiveEFI || m1.MaxJobEFI > m0.MaxJobEFI {
					t.Errorf("%s, %d VLs, seed %d: worse", name, vls, seed)
				}
				cases++
				if n > 0 {
					moved++
				}
			}
		}
	}
	if 2*moved < cases {
		t.Errorf("entries moved on %d of %d cases", moved, cases)
	}
}

// TestSpreadAll checks spread=all without jobs: on the 4×4×4 torus with 2
// hosts per switch, where one tree per destination crowds its sources'
// paths onto one channel, the all-to-all max channel load falls below
// plain Nue's, the tables verify, two runs agree, and with jobs running
// the option changes nothing.
func TestSpreadAll(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4, 4}, 2, false)
	g := compile(t, tp, err)
	ctx := context.Background()
	opt := routing.Options{MaxVLs: 8}
	plain, err := nue.Engine{}.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	e := NueEngine{SpreadAll: true}
	r, err := e.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := routing.Verify(g, r, e, opt); err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	again, err := e.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !lft.Equal(r, again) {
		t.Error("two runs gave different tables")
	}
	all := []routing.Job{allTerminals(g)}
	if len(all[0].Terms) != len(g.Terms) {
		t.Fatalf("the all-terminals job has %d of %d terminals", len(all[0].Terms), len(g.Terms))
	}
	m0, err := Measure(g, plain, all)
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Measure(g, r, all)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("all-to-all max channel load: nue %d, sar-nue:spread=all %d (bound %d)", m0.EffectiveEFI, m1.EffectiveEFI, Bound(g, all))
	if m1.EffectiveEFI >= m0.EffectiveEFI {
		t.Errorf("spread=all left the max channel load at %d (nue: %d)", m1.EffectiveEFI, m0.EffectiveEFI)
	}
	jobs := randomJobs(g, 1)
	jopt := routing.Options{MaxVLs: 8, Jobs: jobs}
	withJobs, err := e.Route(ctx, g, jopt)
	if err != nil {
		t.Fatal(err)
	}
	on, err := NueEngine{}.Route(ctx, g, jopt)
	if err != nil {
		t.Fatal(err)
	}
	if !lft.Equal(withJobs, on) {
		t.Error("with jobs, spread=all routed differently from spread=on")
	}
}

// sar-nue with layers=N spreads paths on Nue's N layers first (their SLs
// per destination) and the layers over the VLs after: the LFTs are those
// of the spreading alone, the VLs the limit's, and the tables verify.
func TestSpreadThenLayersOverVLs(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4, 4}, 2, false)
	g := compile(t, tp, err)
	ctx := context.Background()
	opt := routing.Options{MaxVLs: 8}
	e, err := NueEngine{}.Configure(map[string]string{"spread": "all", "layers": "4"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := routing.Verify(g, r, e, opt); err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	kept := e.(NueEngine)
	kept.Config.KeepLayerVLs = true
	four, err := kept.Route(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumVLs != 8 || four.NumVLs != 4 || !four.SL.PerDest() {
		t.Fatalf("VLs: %d spread over VLs, %d kept per layer (per destination: %v); want 8 and 4", r.NumVLs, four.NumVLs, four.SL.PerDest())
	}
	plain, err := nue.Engine{}.Route(ctx, g, routing.Options{MaxVLs: 4})
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for _, d := range g.Terms {
			if d.Switch < 0 {
				continue
			}
			if r.Port(s, int(d.LID)) != four.Port(s, int(d.LID)) {
				t.Fatalf("switch %d, LID %d: port %d, want %d", s, d.LID, r.Port(s, int(d.LID)), four.Port(s, int(d.LID)))
			}
			if r.Port(s, int(d.LID)) != plain.Port(s, int(d.LID)) {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Error("no entry differs from Nue's with 4 VLs: the paths were not spread")
	}
}
