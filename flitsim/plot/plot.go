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
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

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
func LatencyLoad(rows []flitsim.Row, title string) (*plot.Plot, error) {
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
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return p, nil
}

// Throughput draws, per engine, the best accepted throughput of the sweep
// (averaged over seeds; for the shift exchange its throughput) next to
// the analytic bound. Engines whose every point deadlocked show no bar.
func Throughput(rows []flitsim.Row, title string) (*plot.Plot, error) {
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
	p.Legend.Top = true
	p.NominalX(es...)
	p.Y.Min, p.Y.Max = 0, 1.15
	return p, nil
}

// grid is a switch × switch matrix of channel utilisation.
type grid struct {
	n int
	v []float64
}

func (g grid) Dims() (c, r int)   { return g.n, g.n }
func (g grid) Z(c, r int) float64 { return g.v[r*g.n+c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() (m float64)   { return 0 }
func (g grid) Max() (m float64)   { return 1 }
func (g grid) set(r, c int, x float64) {
	if math.IsNaN(g.v[r*g.n+c]) {
		g.v[r*g.n+c] = 0
	}
	g.v[r*g.n+c] += x
}

// LinkHeat draws the channel utilisation of row r as a matrix: row = the
// switch a channel leaves, column = the switch it enters (parallel cables
// add up), from 0 (light yellow) to 1 (dark red); white where no cable.
func LinkHeat(r flitsim.Row, title string) (*plot.Plot, error) {
	n := 0
	for _, c := range r.Channels {
		n = max(n, int(c.From)+1, int(c.To)+1)
	}
	if n == 0 {
		return nil, fmt.Errorf("plot: point %d has no channel loads", r.Index)
	}
	g := grid{n: n, v: make([]float64, n*n)}
	for i := range g.v {
		g.v[i] = math.NaN()
	}
	for _, c := range r.Channels {
		g.set(int(c.From), int(c.To), c.Util)
	}
	h := plotter.NewHeatMap(g, yellowToRed())
	h.Min, h.Max = 0, 1
	h.NaN = color.White
	h.Rasterized = true // one image, not n² SVG paths
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "to switch"
	p.Y.Label.Text = "from switch"
	p.Add(h)
	return p, nil
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

// Save writes p to path; the extension (.svg or .png) picks the format.
func Save(p *plot.Plot, path string, width, height vg.Length) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("plot: %s: expected a .svg or .png file", path)
	}
	if err := p.Save(width, height, path); err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	return nil
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
func Grouped(title, ylabel string, groups, series []string, values [][]float64) (*plot.Plot, error) {
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
	p.Legend.Top = true
	p.NominalX(groups...)
	p.Y.Min, p.Y.Max = 0, max(top, 0.1)*1.5 // room for the legend
	return p, nil
}
