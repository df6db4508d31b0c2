package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is a plot with an optional side panel to the right of it, outside
// its data area: a colour bar or a legend, so that nothing covers the data.
type Figure struct {
	Plot      *plot.Plot
	Side      func(c draw.Canvas) // nil: no panel
	SideWidth vg.Length
}

// Draw draws the figure onto c.
func (f *Figure) Draw(c draw.Canvas) {
	if f.Side == nil {
		f.Plot.Draw(c)
		return
	}
	w := c.Max.X - c.Min.X
	f.Plot.Draw(draw.Crop(c, 0, -f.SideWidth, 0, 0))
	f.Side(draw.Crop(c, w-f.SideWidth, 0, 0, 0))
}

// Save writes p to path; the extension (.svg or .png) picks the format.
func Save(p *plot.Plot, path string, width, height vg.Length) error {
	return SaveFigure(&Figure{Plot: p}, path, width, height)
}

// SaveFigure writes f to path as SVG or PNG (by the extension). Figures are
// vector paths and text only (no embedded raster images), so every SVG
// viewer, librsvg included, shows them.
func SaveFigure(f *Figure, path string, width, height vg.Length) error {
	ext := strings.ToLower(filepath.Ext(path))
	var c interface {
		vg.CanvasSizer
	}
	var write func(*os.File) error
	switch ext {
	case ".svg":
		sc := vgsvg.New(width, height)
		c, write = sc, func(o *os.File) error { _, err := sc.WriteTo(o); return err }
	case ".png":
		ic := vgimg.New(width, height)
		c, write = ic, func(o *os.File) error { _, err := vgimg.PngCanvas{Canvas: ic}.WriteTo(o); return err }
	default:
		return fmt.Errorf("plot: %s: expected a .svg or .png file", path)
	}
	f.Draw(draw.New(c))
	o, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := write(o); err != nil {
		o.Close()
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	return o.Close()
}

// legendSide moves p's legend into a side panel and returns the figure.
func legendSide(p *plot.Plot, names []string) *Figure {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	w := vg.Length(0)
	for _, n := range names {
		w = max(w, leg.TextStyle.Width(n))
	}
	leg.Top, leg.Left = true, true
	side := w + leg.ThumbnailWidth + leg.Padding*4 + vg.Centimeter
	return &Figure{Plot: p, SideWidth: side, Side: func(c draw.Canvas) {
		c.Min.X += vg.Centimeter / 2
		c.Min.Y += p.X.Tick.Label.Height("0") * 3 // keep clear of the axis labels' band
		c.Max.Y -= p.Title.TextStyle.Height(p.Title.Text)
		leg.Draw(c)
	}}
}
