package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nuesm/nuesm/flitsim"
)

// cells draws matrix entries as filled unit squares centred on their
// (column, row): vector paths, not an embedded image, so they line up with
// the axis ticks and render in every SVG viewer.
type cells struct {
	n   int
	at  []cell
	pal []color.Color
}

type cell struct {
	col, row int
	v        float64 // in [0, 1]
}

func (cs cells) color(v float64) color.Color {
	i := int(v * float64(len(cs.pal)))
	return cs.pal[min(max(i, 0), len(cs.pal)-1)]
}

// Plot implements plot.Plotter.
func (cs cells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, e := range cs.at {
		x0, x1 := trX(float64(e.col)-0.5), trX(float64(e.col)+0.5)
		y0, y1 := trY(float64(e.row)-0.5), trY(float64(e.row)+0.5)
		sq := c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		c.FillPolygon(cs.color(e.v), sq)
		if len(sq) > 0 { // a thin outline tells an idle cable from no cable
			c.StrokeLines(draw.LineStyle{Color: color.Gray{Y: 200}, Width: vg.Points(0.3)}, append(sq, sq[0]))
		}
	}
}

// DataRange implements plot.DataRanger: the squares' extent.
func (cs cells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(cs.n) - 0.5, -0.5, float64(cs.n) - 0.5
}

// colorBar draws the palette from 0 (bottom) to 1 (top) as stacked bands.
type colorBar struct{ pal []color.Color }

// Plot implements plot.Plotter.
func (b colorBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	k := float64(len(b.pal))
	for i, col := range b.pal {
		y0, y1 := trY(float64(i)/k), trY(float64(i+1)/k)
		c.FillPolygon(col, []vg.Point{{X: trX(0), Y: y0}, {X: trX(1), Y: y0}, {X: trX(1), Y: y1}, {X: trX(0), Y: y1}})
	}
}

// DataRange implements plot.DataRanger.
func (colorBar) DataRange() (xmin, xmax, ymin, ymax float64) { return 0, 1, 0, 1 }

// integerTicks labels integer positions (switch indices), at most about
// ten of them.
type integerTicks struct{}

// Ticks implements plot.Ticker.
func (integerTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	step := math.Max(1, math.Ceil((hi-lo+1)/10))
	var ts []plot.Tick
	for v := lo; v <= hi; v++ {
		if math.Mod(v-lo, step) == 0 {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprint(int(v))})
		}
	}
	return ts
}

// LinkHeat draws the channel utilisation of row r as a matrix: row = the
// switch a channel leaves, column = the switch it enters (parallel cables
// add up, capped at 1), from 0 (light yellow) to 1 (dark red), white where
// no cable, with a colour bar beside the matrix.
func LinkHeat(r flitsim.Row, title string) (*Figure, error) {
	n := 0
	for _, c := range r.Channels {
		n = max(n, int(c.From)+1, int(c.To)+1)
	}
	if n == 0 {
		return nil, fmt.Errorf("plot: point %d has no channel loads", r.Index)
	}
	sum := map[[2]int32]float64{}
	var order [][2]int32
	for _, c := range r.Channels {
		k := [2]int32{c.From, c.To}
		if _, ok := sum[k]; !ok {
			order = append(order, k)
		}
		sum[k] += c.Util
	}
	pal := yellowToRed().Colors()
	cs := cells{n: n, pal: pal}
	for _, k := range order {
		cs.at = append(cs.at, cell{col: int(k[1]), row: int(k[0]), v: math.Min(sum[k], 1)})
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "to switch"
	p.Y.Label.Text = "from switch"
	p.X.Tick.Marker, p.Y.Tick.Marker = integerTicks{}, integerTicks{}
	p.Add(cs)
	bar := plot.New()
	bar.Add(colorBar{pal: pal})
	bar.Y.Label.Text = "utilisation"
	bar.X.Tick.Marker = plot.ConstantTicks{}
	bar.Title.Text = " " // aligns the bar's top with the matrix's
	side := 2.6 * vg.Centimeter
	return &Figure{Plot: p, SideWidth: side, Side: func(c draw.Canvas) {
		bar.Draw(draw.Crop(c, 0, 0, p.X.Label.TextStyle.Height("x")*2, 0))
	}}, nil
}
