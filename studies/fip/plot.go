package fip

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot draws the throughput degradation of one pattern: per engine the
// mean accepted throughput over the seeds against the year, and the
// routing-independent bound, as SVG. Years where no seed routed are gaps.
func (s *Summary) Plot(w io.Writer, pattern, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "year (failures accumulate; critical ones repaired)"
	p.Y.Label.Text = pattern + ": accepted throughput (fraction of link bandwidth)"
	p.Y.Min, p.Y.Max = 0, 1.05
	p.Legend.Top = true
	found := false
	for i, e := range s.Engines {
		cells, ok := s.Cells[e+"/"+pattern]
		if !ok {
			continue
		}
		found = true
		var pts plotter.XYs
		for y, c := range cells {
			if math.IsNaN(c.Throughput) {
				continue
			}
			pts = append(pts, plotter.XY{X: float64(y), Y: c.Throughput})
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		p.Legend.Add(e, l, sc)
	}
	if !found {
		return fmt.Errorf("fip: plot: no results for pattern %q", pattern)
	}
	if lim := s.Limits[pattern]; lim != nil && !math.IsNaN(lim[0]) {
		var pts plotter.XYs
		for y, v := range lim {
			pts = append(pts, plotter.XY{X: float64(y), Y: v})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Width = vg.Points(2)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("bound (any routing)", l)
	}
	p.X.Min, p.X.Max = 0, float64(s.Years)
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for y := 0; y <= s.Years; y++ {
			ts = append(ts, plot.Tick{Value: float64(y), Label: fmt.Sprint(y)})
		}
		return ts
	})
	wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, "svg")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
