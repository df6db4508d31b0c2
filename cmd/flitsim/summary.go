package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/flitsim/plot"
)

func newSummaryCmd() *cobra.Command {
	var plotPrefix string
	c := &cobra.Command{
		Use:   "summary SWEEP_DIR… [--plot PREFIX]",
		Short: "Compare sweeps: a Markdown table per traffic pattern, engines × fabrics",
		Long: `Read DIR/sweep.json of every sweep given and print, per traffic pattern, a
Markdown table with one row per engine and one column per fabric: the
simulated throughput (the best accepted load of the sweep, averaged over
seeds; the throughput of the shift exchange) and, in parentheses, the
analytic bound, as fractions of the link bandwidth (for the shift exchange
also the phase-by-phase estimate, Bound.PhaseSaturation). Open-loop patterns get
a second table: the saturation point, the highest offered load whose
accepted load is within 5 % of it. A cell says why an
engine was not simulated (VLs needed, cyclic CDG, not applicable). With
--plot, PREFIX-PATTERN.svg (or .png when PREFIX ends in .png) draws the
simulated throughput as grouped bars.`,
		Example: `  flitsim summary out/fattree-shift out/torus-shift --plot out/summary`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSummary(cmd.OutOrStdout(), args, plotPrefix)
		},
	}
	c.Flags().StringVar(&plotPrefix, "plot", "", "also draw grouped bars to PREFIX-PATTERN.svg")
	return c
}

// cell is one engine on one fabric for one pattern.
type cell struct {
	sim, bound float64
	knee       float64 // highest offered load accepted within 5 % (open loop)
	phase      float64 // Row.PhaseBound (shift)
	note       string
	ok         bool
}

// table collects the cells of one pattern.
type table struct {
	fabrics, engines []string
	cells            map[[2]string]cell
}

func add(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

var neededVLs = regexp.MustCompile(`needed (\d+) VLs`)

// why shortens the reason an engine was not simulated.
func why(err string) string {
	switch {
	case neededVLs.MatchString(err):
		return "needs " + neededVLs.FindStringSubmatch(err)[1] + " VLs"
	case strings.Contains(err, "dependency cycle"):
		return "cyclic CDG"
	case strings.Contains(err, "not applicable"):
		return "n/a"
	}
	return "failed"
}

func runSummary(w io.Writer, dirs []string, plotPrefix string) error {
	tables := map[string]*table{}
	var patterns []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "sweep.json"))
		if err != nil {
			return err
		}
		var doc sweepDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if len(doc.Rows) == 0 {
			return fmt.Errorf("%s: no rows", d)
		}
		fab := strings.TrimSuffix(filepath.Base(doc.Fabric), filepath.Ext(doc.Fabric))
		pat := doc.Rows[0].Pattern
		t := tables[pat]
		if t == nil {
			t = &table{cells: map[[2]string]cell{}}
			tables[pat] = t
			patterns = append(patterns, pat)
		}
		t.fabrics = add(t.fabrics, fab)
		for _, e := range plot.Engines(doc.Rows) {
			t.engines = add(t.engines, e)
			t.cells[[2]string{e, fab}] = summarizeEngine(doc.Rows, e)
		}
	}
	for _, pat := range patterns {
		t := tables[pat]
		if pat == flitsim.Shift.String() {
			fmt.Fprintf(w, "\n%s: simulated throughput (analytic bound; phase-by-phase estimate), fraction of link bandwidth\n\n", pat)
		} else {
			fmt.Fprintf(w, "\n%s: simulated throughput (analytic bound), fraction of link bandwidth\n\n", pat)
		}
		fmt.Fprintf(w, "| engine | %s |\n|---|%s\n", strings.Join(t.fabrics, " | "), strings.Repeat("---|", len(t.fabrics)))
		vals := make([][]float64, len(t.engines))
		for i, e := range t.engines {
			fmt.Fprintf(w, "| %s |", e)
			vals[i] = make([]float64, len(t.fabrics))
			for j, f := range t.fabrics {
				c, found := t.cells[[2]string{e, f}]
				vals[i][j] = math.NaN()
				switch {
				case !found:
					fmt.Fprint(w, " |")
				case c.ok && c.phase > 0:
					fmt.Fprintf(w, " %.3f (%.3f; %.3f)%s |", c.sim, c.bound, c.phase, c.note)
					vals[i][j] = c.sim
				case c.ok:
					fmt.Fprintf(w, " %.3f (%.3f)%s |", c.sim, c.bound, c.note)
					vals[i][j] = c.sim
				default:
					fmt.Fprintf(w, " — %s |", c.note)
				}
			}
			fmt.Fprintln(w)
		}
		if pat != flitsim.Shift.String() {
			fmt.Fprintf(w, "\n%s: saturation point, the highest offered load accepted within 5 %% (analytic bound)\n\n", pat)
			fmt.Fprintf(w, "| engine | %s |\n|---|%s\n", strings.Join(t.fabrics, " | "), strings.Repeat("---|", len(t.fabrics)))
			for _, e := range t.engines {
				fmt.Fprintf(w, "| %s |", e)
				for _, f := range t.fabrics {
					c, found := t.cells[[2]string{e, f}]
					switch {
					case !found:
						fmt.Fprint(w, " |")
					case c.ok:
						fmt.Fprintf(w, " %.2f (%.3f) |", c.knee, c.bound)
					default:
						fmt.Fprintf(w, " — %s |", c.note)
					}
				}
				fmt.Fprintln(w)
			}
		}
		if plotPrefix == "" {
			continue
		}
		ext := ".svg"
		prefix := plotPrefix
		if strings.HasSuffix(prefix, ".png") {
			prefix, ext = strings.TrimSuffix(prefix, ".png"), ".png"
		}
		p, err := plot.Grouped(pat+": simulated throughput", "fraction of link bandwidth", t.fabrics, t.engines, vals)
		if err != nil {
			return err
		}
		if err := plot.Save(p, prefix+"-"+pat+ext, 24*vg.Centimeter, 11*vg.Centimeter); err != nil {
			return err
		}
	}
	return nil
}

// summarizeEngine is an engine's best throughput over the sweep's loads
// (averaged over seeds) and its bound; deadlocked points are skipped and
// counted in the note.
func summarizeEngine(rows []flitsim.Row, e string) cell {
	type acc struct {
		sum, off float64
		n        int
	}
	byLoad := map[float64]*acc{}
	var c cell
	dead, total := 0, 0
	for _, r := range rows {
		if r.Engine != e {
			continue
		}
		total++
		switch {
		case r.Error != "":
			c.note = why(r.Error)
			continue
		case r.Deadlock != "":
			dead++
			continue
		}
		c.bound, c.phase = r.Bound, r.PhaseBound
		a := byLoad[r.Load]
		if a == nil {
			a = &acc{}
			byLoad[r.Load] = a
		}
		a.sum += r.Accepted
		a.off += r.Offered
		a.n++
	}
	for _, a := range byLoad {
		acc := a.sum / float64(a.n)
		c.sim, c.ok = max(c.sim, acc), true
		if off := a.off / float64(a.n); acc >= 0.95*off {
			c.knee = max(c.knee, off)
		}
	}
	if dead > 0 {
		c.note = fmt.Sprintf(" deadlock in %d of %d runs", dead, total)
		if !c.ok {
			c.note = "deadlock"
		}
	}
	return c
}
