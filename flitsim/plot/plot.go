// Package plot draws the figures of a flitsim sweep with gonum/plot:
// latency–load curves, throughput bars per engine beside the analytic
// bound, and a switch-to-switch link-load heat map. It is kept out of
// package flitsim so that the simulator does not pull in the plotting
// library. Figures are written as SVG or PNG (by file extension).
package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nuesm/nuesm/flitsim"
)

func engines(rows []flitsim.Row) []string { return flitsim.RowEngines(rows) }

// meanBy averages v(r) over the seeds of each (engine, load); loads come
// in first-appearance order. Deadlocked rows are left out.
func meanBy(rows []flitsim.Row, engine string, v func(flitsim.Row) float64) (loads, means []float64) {
	idx := map[float64]int{}
	var n []int
	for _, r := range rows {
		if r.Engine != engine || r.Deadlock != "" {
			continue
		}
		i, ok := idx[r.Load]
		if !ok {
			i = len(loads)
			idx[r.Load] = i
			loads, means, n = append(loads, r.Load), append(means, 0), append(n, 0)
		}
		means[i] += v(r)
		n[i]++
	}
	for i := range means {
		means[i] /= float64(n[i])
	}
	return loads, means
}

// LatencyLoad plots the mean packet latency against the accepted
// throughput, one curve per engine (points averaged over seeds).
func LatencyLoad(rows []flitsim.Row, title string) (*Figure, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "accepted throughput (fraction of link bandwidth)"
	p.Y.Label.Text = "mean latency (cycles)"
	var args []any
	for _, e := range engines(rows) {
		_, acc := meanBy(rows, e, func(r flitsim.Row) float64 { return r.Accepted })
		_, lat := meanBy(rows, e, func(r flitsim.Row) float64 { return r.LatencyMean })
		pts := make(plotter.XYs, 0, len(acc))
		for i := range acc {
			if lat[i] > 0 { // no measured packet delivered: nothing to draw on a log scale
				pts = append(pts, plotter.XY{X: acc[i], Y: lat[i]})
			}
		}
		if len(pts) > 0 {
			args = append(args, e, pts)
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("plot: no rows without deadlock to plot")
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var names []string
	for i := 0; i < len(args); i += 2 {
		names = append(names, args[i].(string))
	}
	return legendSide(p, names), nil
}

// Throughput draws, per engine, the best accepted throughput of the sweep
// (averaged over seeds; for the shift exchange its throughput) next to
// the analytic bound. Engines whose every point deadlocked show no bar.
func Throughput(rows []flitsim.Row, title string) (*Figure, error) {
	es := engines(rows)
	if len(es) == 0 {
		return nil, fmt.Errorf("plot: no rows")
	}
	sim, bound := make(plotter.Values, len(es)), make(plotter.Values, len(es))
	for i, e := range es {
		_, acc := meanBy(rows, e, func(r flitsim.Row) float64 { return r.Accepted })
		for _, a := range acc {
			sim[i] = max(sim[i], a)
		}
		for _, r := range rows {
			if r.Engine == e {
				bound[i] = math.Min(r.Bound, 1)
			}
		}
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "throughput (fraction of link bandwidth)"
	w := vg.Points(14)
	bs, err := plotter.NewBarChart(sim, w)
	if err != nil {
		return nil, err
	}
	bb, err := plotter.NewBarChart(bound, w)
	if err != nil {
		return nil, err
	}
	bs.Color, bs.Offset = plotutil.Color(0), -w/2
	bb.Color, bb.Offset = color.Gray{Y: 190}, w/2
	bs.LineStyle.Width, bb.LineStyle.Width = 0, 0
	p.Add(bs, bb)
	p.Legend.Add("simulated", bs)
	p.Legend.Add("analytic bound", bb)
	p.NominalX(es...)
	slantLabels(p, es)
	p.Y.Min, p.Y.Max = 0, 1.05
	return legendSide(p, []string{"simulated", "analytic bound"}), nil
}

// colors is a fixed palette.
type colors []color.Color

func (c colors) Colors() []color.Color { return c }

// yellowToRed is palette.Heat reversed: light for idle, dark for busy.
func yellowToRed() palette.Palette {
	c := slices.Clone(palette.Heat(64, 1).Colors())
	slices.Reverse(c)
	return colors(c)
}

// HeatRow picks the row of engine to draw as a heat map: the highest load
// of its first seed without deadlock (ok false when there is none).
func HeatRow(rows []flitsim.Row, engine string) (flitsim.Row, bool) {
	var best flitsim.Row
	ok := false
	for _, r := range rows {
		if r.Engine != engine || r.Deadlock != "" || len(r.Channels) == 0 {
			continue
		}
		if !ok || r.Load > best.Load || (r.Load == best.Load && r.Seed < best.Seed) {
			best, ok = r, true
		}
	}
	return best, ok
}

// Engines lists the engines of rows in first-appearance order.
func Engines(rows []flitsim.Row) []string { return engines(rows) }

// tab10 are ten distinguishable colours (matplotlib's "tab10").
var tab10 = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

// Grouped draws grouped bars: one group per label in groups, one bar per
// series (values[s][g]; NaN leaves a gap), as the thesis' throughput
// comparison per topology and routing.
func Grouped(title, ylabel string, groups, series []string, values [][]float64) (*Figure, error) {
	if len(series) == 0 || len(groups) == 0 {
		return nil, fmt.Errorf("plot: nothing to draw")
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	w := vg.Points(min(10, 240/float64(len(series)*len(groups))+2))
	for s, name := range series {
		vs := make(plotter.Values, len(groups))
		for g := range groups {
			if v := values[s][g]; !math.IsNaN(v) {
				vs[g] = v
			}
		}
		b, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return nil, err
		}
		b.Color = tab10[s%len(tab10)]
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(s)-float64(len(series)-1)/2)
		p.Add(b)
		p.Legend.Add(name, b)
	}
	top := 0.0
	for _, vs := range values {
		for _, v := range vs {
			if !math.IsNaN(v) {
				top = max(top, v)
			}
		}
	}
	p.NominalX(groups...)
	slantLabels(p, groups)
	p.Y.Min, p.Y.Max = 0, max(top, 0.1)*1.05
	return legendSide(p, series), nil
}

// slantLabels tilts the category labels of p's X axis when they are long,
// so that none is clipped or overlaps its neighbour.
func slantLabels(p *plot.Plot, labels []string) {
	long := 0
	for _, l := range labels {
		long = max(long, len(l))
	}
	if long*len(labels) > 60 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
}
