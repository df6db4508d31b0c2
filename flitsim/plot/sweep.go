package plot

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"

	"gonum.org/v1/plot/vg"

	"github.com/nuesm/nuesm/flitsim"
)

// WriteSweep draws a sweep's figures into dir as ext ("svg" or "png"):
// latency.EXT (latency against accepted throughput per engine; not for
// the shift exchange), throughput.EXT (best throughput per engine beside
// the bound) and heat-ENGINE.EXT (link utilisation at the highest load).
// Rows with an error are left out; no rows, no files.
func WriteSweep(dir string, doc flitsim.SweepDoc, ext string) error {
	var ok []flitsim.Row
	for _, r := range doc.Rows {
		if r.Error == "" {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	title := doc.Fabric
	if len(title) > 60 {
		title = title[:60]
	}
	if ok[0].Pattern != flitsim.Shift.String() {
		if p, err := LatencyLoad(ok, title+" — "+ok[0].Pattern); err == nil {
			if err := SaveFigure(p, filepath.Join(dir, "latency."+ext), 16*vg.Centimeter, 11*vg.Centimeter); err != nil {
				return err
			}
		}
	}
	p, err := Throughput(ok, title+" — "+ok[0].Pattern)
	if err != nil {
		return err
	}
	if err := SaveFigure(p, filepath.Join(dir, "throughput."+ext), 16*vg.Centimeter, 11*vg.Centimeter); err != nil {
		return err
	}
	for _, e := range Engines(ok) {
		r, found := HeatRow(ok, e)
		if !found {
			continue
		}
		h, err := LinkHeat(r, fmt.Sprintf("%s: link utilisation at load %g", e, r.Load))
		if err != nil {
			return err
		}
		name := "heat-" + fileWord(e) + "." + ext
		if err := SaveFigure(h, filepath.Join(dir, name), 14*vg.Centimeter, 13*vg.Centimeter); err != nil {
			return err
		}
	}
	return nil
}

// WriteSummary draws a summary table's simulated throughput as grouped
// bars to PREFIX-PATTERN.svg (.png when prefix ends in .png).
func WriteSummary(t *flitsim.SummaryTable, prefix string) error {
	ext := ".svg"
	if strings.HasSuffix(prefix, ".png") {
		prefix, ext = strings.TrimSuffix(prefix, ".png"), ".png"
	}
	p, err := Grouped(t.Pattern+": simulated throughput", "fraction of link bandwidth", t.Fabrics, t.Engines, t.Values())
	if err != nil {
		return err
	}
	return SaveFigure(p, prefix+"-"+t.Pattern+ext, 24*vg.Centimeter, 11*vg.Centimeter)
}

// fileWord turns an engine label into a file name part: '/' (the VL
// limit) becomes '-', any other character outside [A-Za-z0-9._-] (a
// spec's ':', '=', parentheses, spaces) '_'.
func fileWord(label string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/':
			return '-'
		case r == '.' || r == '-' || r == '_' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			return r
		}
		return '_'
	}, label)
}
