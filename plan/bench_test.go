package plan

import (
	"context"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// reroute is a benchmark fixture: a fabric as it is now and the tables
// before and after a reroute.
type reroute struct {
	g        *fabric.Graph
	old, new *lft.Routing
}

var (
	ftFailOnce sync.Once
	ftFail     reroute
	ftSAROnce  sync.Once
	ftSAR      reroute
)

// fatTreeFailure: fat tree k=8 n=3 (192 switches, 512 hosts) routed by
// Nue, then 1 % of its cables fail and Nue routes around them.
func fatTreeFailure(b *testing.B) reroute {
	ftFailOnce.Do(func() {
		tp, err := topo.FatTree(8, 3, 0)
		g0 := compile(b, tp, err)
		old := routeWith(b, g0, "nue", routing.Options{MaxVLs: 4})
		g := failLinks(b, tp, 0.01, 1)
		ftFail = reroute{g: g, old: old.Clone(), new: routeWith(b, g, "nue", routing.Options{MaxVLs: 4})}
	})
	return ftFail
}

// fatTreeSAR: fat tree k=12 n=3 (432 switches, 1,728 hosts) routed by
// sar-nue for one job mix, then for another (jobs ended and started).
func fatTreeSAR(b *testing.B) reroute {
	ftSAROnce.Do(func() {
		tp, err := topo.FatTree(12, 3, 0)
		g := compile(b, tp, err)
		jobsA := []routing.Job{{ID: "a", Terms: span(0, 400)}, {ID: "b", Terms: span(500, 900)}, {ID: "c", Terms: span(1000, 1500)}}
		jobsB := []routing.Job{{ID: "b", Terms: span(500, 900)}, {ID: "d", Terms: span(100, 300)}, {ID: "e", Terms: span(1200, 1728)}}
		ftSAR = reroute{g: g,
			old: routeWith(b, g, "sar-nue", routing.Options{MaxVLs: 8, Jobs: jobsA}),
			new: routeWith(b, g, "sar-nue", routing.Options{MaxVLs: 8, Jobs: jobsB})}
	})
	return ftSAR
}

func benchPlan(b *testing.B, fx reroute, opt Options, check bool) {
	b.Helper()
	ctx := context.Background()
	var p *Plan
	for b.Loop() {
		var err error
		p, err = Build(ctx, fx.g, fx.old, fx.new, opt)
		if err != nil {
			b.Fatal(err)
		}
		if check {
			rep, err := Verify(ctx, fx.g, fx.old, fx.new, p, opt)
			if err != nil {
				b.Fatalf("%v\n%s", err, rep)
			}
		}
	}
	m := p.Metrics()
	b.ReportMetric(float64(m.Steps), "steps")
	b.ReportMetric(float64(m.Blocks), "blocks")
	b.ReportMetric(float64(m.ChangedPairs), "changed-pairs")
	b.ReportMetric(float64(m.PausedPairs), "paused-pairs")
}

func BenchmarkBuild_FatTree8x3_Nue_1pctFail(b *testing.B) {
	fx := fatTreeFailure(b)
	b.Run("strict", func(b *testing.B) { benchPlan(b, fx, Options{MaxVLs: 8}, false) })
	b.Run("reorder", func(b *testing.B) { benchPlan(b, fx, Options{MaxVLs: 8, AllowReorder: true}, false) })
}

func BenchmarkVerify_FatTree8x3_Nue_1pctFail(b *testing.B) {
	fx := fatTreeFailure(b)
	opt := Options{MaxVLs: 8, AllowReorder: true}
	p, err := Build(context.Background(), fx.g, fx.old, fx.new, opt)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Verify(context.Background(), fx.g, fx.old, fx.new, p, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlan_FatTree12x3_SAR is "nuesm plan --verify" on the SAR
// reroute of the issue: build and prove.
func BenchmarkPlan_FatTree12x3_SAR(b *testing.B) {
	fx := fatTreeSAR(b)
	b.Run("strict", func(b *testing.B) { benchPlan(b, fx, Options{MaxVLs: 8}, true) })
	b.Run("reorder", func(b *testing.B) { benchPlan(b, fx, Options{MaxVLs: 8, AllowReorder: true}, true) })
}
