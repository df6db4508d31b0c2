package main

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	fplot "github.com/nuesm/nuesm/flitsim/plot"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"

	_ "github.com/nuesm/nuesm/sar"              // registers every engine of the product
	_ "github.com/nuesm/nuesm/studies/novacube" // registers "pora"
)

// routed is a generated fabric routed by a verified engine.
type routed struct {
	tp *topo.Topology
	g  *fabric.Graph
	r  *lft.Routing
}

// route generates kind with params and routes it with engine (VL limit
// vls); the tables are verified deadlock-free by the routing chain.
func route(ctx context.Context, kind string, params map[string]string, engine string, vls int) (*routed, error) {
	tp, err := topo.Generate(kind, params)
	if err != nil {
		return nil, err
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		return nil, err
	}
	es, err := routing.ParseChain(engine)
	if err != nil {
		return nil, err
	}
	res, err := routing.RouteChain(ctx, g, es, routing.Options{MaxVLs: vls, Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w", kind, params, err)
	}
	return &routed{tp: tp, g: g, r: res.Routing}, nil
}

// job is one simulation.
type job struct {
	net *flitsim.Network
	tr  flitsim.Traffic
	opt flitsim.RunOptions
}

// runAll runs the jobs on workers goroutines (0 = GOMAXPROCS) and returns
// their results in job order; a deadlock is an error (the routings are
// verified, so it would be a simulator bug).
func runAll(ctx context.Context, jobs []job, workers int) ([]*flitsim.Result, error) {
	out := make([]*flitsim.Result, len(jobs))
	err := parallel.For(ctx, len(jobs), workers, func(_, i int) error {
		var err error
		if out[i], err = jobs[i].net.Run(ctx, jobs[i].tr, jobs[i].opt); err != nil {
			return fmt.Errorf("run %d (%s, load %g): %w", i, jobs[i].tr.Pattern, jobs[i].tr.Load, err)
		}
		return nil
	})
	return out, err
}

// loadRange returns from, from+step, …, to (rounded to 1e-9).
func loadRange(from, to, step float64) []float64 {
	var out []float64
	for i := 0; ; i++ {
		x := math.Round((from+float64(i)*step)*1e9) / 1e9
		if x > to+1e-9 {
			return out
		}
		out = append(out, x)
	}
}

// saturation reads a load sweep (offered loads increasing): sat is the
// highest offered load up to which the mean latency stays within 3× the
// latency at the lowest load (the knee of the latency–load curve), peak
// the highest accepted throughput. Loads are fractions of the link
// bandwidth.
func saturation(offered, accepted, latency []float64) (sat, peak float64) {
	knee := len(latency) > 0
	for i := range offered {
		if knee && latency[i] <= 3*latency[0] {
			sat = offered[i]
		} else {
			knee = false
		}
		peak = max(peak, accepted[i])
	}
	return sat, peak
}

// hopStats returns the mean and the largest number of switch-to-switch
// hops over every ordered pair of distinct nodes, following the tables.
func hopStats(n *flitsim.Network) (mean float64, most int) {
	N := int32(n.NumNodes())
	sum, pairs := 0, 0
	for s := int32(0); s < N; s++ {
		for d := int32(0); d < N; d++ {
			if s == d {
				continue
			}
			h := len(n.Path(s, d)) - 2 // minus injection and ejection
			sum += h
			pairs++
			most = max(most, h)
		}
	}
	if pairs == 0 {
		return 0, 0
	}
	return float64(sum) / float64(pairs), most
}

// bfsHops returns the mean shortest switch-to-switch distance between the
// switches of every ordered pair of distinct nodes (the floor any minimal
// routing reaches).
func bfsHops(n *flitsim.Network) float64 {
	g := n.Graph()
	S := g.NumSwitches()
	dist, queue := make([]int32, S), make([]int32, S)
	N := int32(n.NumNodes())
	sum, pairs := 0.0, 0
	for s := int32(0); s < N; s++ {
		g.BFS(n.NodeSwitch(s), dist, queue)
		for d := int32(0); d < N; d++ {
			if d != s {
				sum += float64(dist[n.NodeSwitch(d)])
				pairs++
			}
		}
	}
	return sum / float64(max(pairs, 1))
}

// series is one curve of a line plot.
type series struct {
	name string
	x, y []float64
}

// linePlot draws the curves (points with y <= 0 or NaN left out) and saves
// the figure to path (.svg).
func linePlot(path, title, xlabel, ylabel string, ss []series, logY bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	dashes := [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}
	drawn := 0
	for i, s := range ss {
		var pts plotter.XYs
		for k := range s.x {
			if y := s.y[k]; y > 0 && !math.IsNaN(y) && !math.IsInf(y, 0) {
				pts = append(pts, plotter.XY{X: s.x[k], Y: y})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		l.Color, sc.Color = c, c
		l.Dashes = dashes[(i/len(palette))%len(dashes)]
		sc.Shape = shapes[i%len(shapes)]
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("%s: nothing to plot", path)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return fplot.Save(p, path, 6*vg.Inch, 4*vg.Inch)
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}}

// table writes a Markdown table.
func table(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
}

// f2, f3 and f1 format numbers for the tables.
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }
func f2(x float64) string { return fmt.Sprintf("%.2f", x) }
func f3(x float64) string { return fmt.Sprintf("%.3f", x) }
