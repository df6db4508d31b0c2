package plot

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/nuesm/nuesm/flitsim"
)

func rows() []flitsim.Row {
	var rs []flitsim.Row
	for i, e := range []string{"nue/4", "dor"} {
		for j, l := range []float64{0.2, 0.5, 0.8} {
			for s := uint64(1); s <= 2; s++ {
				rs = append(rs, flitsim.Row{
					Point:    flitsim.Point{Index: len(rs), Engine: e, Load: l, Seed: s},
					Pattern:  "uniform",
					Accepted: l * (0.9 - 0.1*float64(i)), LatencyMean: 10 + 20*float64(j), Bound: 0.9,
					Channels: []flitsim.ChannelLoad{{From: 0, To: 1, Util: l}, {From: 1, To: 0, Util: l / 2}, {From: 1, To: 2, Util: 0.1}},
				})
			}
		}
	}
	rs = append(rs, flitsim.Row{Point: flitsim.Point{Index: len(rs), Engine: "minhop", Load: 0.2, Seed: 1}, Deadlock: "deadlock"})
	return rs
}

// TestPlots draws every figure to SVG and PNG and checks the files name
// what they show.
func TestPlots(t *testing.T) {
	dir := t.TempDir()
	rs := rows()
	if got := Engines(rs); strings.Join(got, ",") != "nue/4,dor,minhop" {
		t.Errorf("engines %v", got)
	}
	if r, ok := HeatRow(rs, "dor"); !ok || r.Load != 0.8 || r.Seed != 1 {
		t.Errorf("heat row %+v", r.Point)
	}
	if _, ok := HeatRow(rs, "minhop"); ok {
		t.Error("heat row of a deadlocked engine")
	}
	lat, err := LatencyLoad(rs, "t")
	if err != nil {
		t.Fatal(err)
	}
	thr, err := Throughput(rs, "t")
	if err != nil {
		t.Fatal(err)
	}
	hr, _ := HeatRow(rs, "nue/4")
	heat, err := LinkHeat(hr, "heat")
	if err != nil {
		t.Fatal(err)
	}
	grp, err := Grouped("g", "y", []string{"fat tree", "torus"}, []string{"nue", "dor"}, [][]float64{{0.5, 0.4}, {math.NaN(), 0.6}})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]struct {
		fig  *Figure
		want []string
	}{
		"lat.svg":  {lat, []string{"nue/4", "dor", "mean latency"}},
		"thr.svg":  {thr, []string{"analytic bound", "minhop"}},
		"heat.svg": {heat, []string{"from switch", "to switch", "utilisation"}},
		"grp.svg":  {grp, []string{"fat tree", "torus"}},
	} {
		path := filepath.Join(dir, name)
		if err := SaveFigure(p.fig, path, 10*vg.Centimeter, 8*vg.Centimeter); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		for _, w := range p.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
		if strings.Contains(string(b), "<image") {
			t.Errorf("%s embeds a raster image", name)
		}
	}
	if err := SaveFigure(thr, filepath.Join(dir, "thr.png"), 10*vg.Centimeter, 8*vg.Centimeter); err != nil {
		t.Error(err)
	}
	if err := SaveFigure(thr, filepath.Join(dir, "thr.pdf"), 10*vg.Centimeter, 8*vg.Centimeter); err == nil {
		t.Error("pdf accepted")
	}
	if _, err := LatencyLoad(rs[len(rs)-1:], "t"); err == nil {
		t.Error("latency plot of deadlocked rows only")
	}
	if _, err := LinkHeat(flitsim.Row{}, "t"); err == nil {
		t.Error("heat map without channels")
	}
}

// TestLatencyLoadNoDelivery: a point whose measured packets were not
// delivered (mean latency 0, e.g. far beyond saturation) is left out of
// the log-scale latency plot instead of making it panic.
func TestLatencyLoadNoDelivery(t *testing.T) {
	rs := rows()
	rs = append(rs, flitsim.Row{Point: flitsim.Point{Index: len(rs), Engine: "dor", Load: 1, Seed: 1}, Pattern: "uniform", Accepted: 0.03})
	p, err := LatencyLoad(rs, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveFigure(p, filepath.Join(t.TempDir(), "lat.svg"), 4*vg.Inch, 3*vg.Inch); err != nil {
		t.Fatal(err)
	}
}
