package flitsim

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strings"
)

// A summary compares sweeps: per traffic pattern, one row per engine and
// one column per fabric.

// SummaryCell is one engine on one fabric for one pattern.
type SummaryCell struct {
	// Sim is the best accepted load over the sweep's loads (averaged over
	// seeds); Bound the analytic bound; Knee the highest offered load
	// accepted within 5 % (open loop); Phase Row.PhaseBound (shift).
	Sim, Bound, Knee, Phase float64
	// Note says why the engine was not simulated, or how many runs
	// deadlocked.
	Note string
	OK   bool
}

// SummaryTable collects the cells of one pattern.
type SummaryTable struct {
	Pattern          string
	Fabrics, Engines []string
	Cells            map[[2]string]SummaryCell // {engine, fabric}
}

// Values returns the simulated throughput per engine and fabric (NaN
// where there is none), for grouped bars.
func (t *SummaryTable) Values() [][]float64 {
	vals := make([][]float64, len(t.Engines))
	for i, e := range t.Engines {
		vals[i] = make([]float64, len(t.Fabrics))
		for j, f := range t.Fabrics {
			vals[i][j] = math.NaN()
			if c, ok := t.Cells[[2]string{e, f}]; ok && c.OK {
				vals[i][j] = c.Sim
			}
		}
	}
	return vals
}

func addName(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// Summarize builds one table per pattern from sweep documents, patterns in
// first-seen order; a fabric's name is its file's base name.
func Summarize(docs []SweepDoc) []*SummaryTable {
	var tables []*SummaryTable
	byPattern := map[string]*SummaryTable{}
	for _, doc := range docs {
		if len(doc.Rows) == 0 {
			continue
		}
		fab := strings.TrimSuffix(filepath.Base(doc.Fabric), filepath.Ext(doc.Fabric))
		pat := doc.Rows[0].Pattern
		t := byPattern[pat]
		if t == nil {
			t = &SummaryTable{Pattern: pat, Cells: map[[2]string]SummaryCell{}}
			byPattern[pat] = t
			tables = append(tables, t)
		}
		t.Fabrics = addName(t.Fabrics, fab)
		for _, e := range RowEngines(doc.Rows) {
			t.Engines = addName(t.Engines, e)
			t.Cells[[2]string{e, fab}] = summarizeEngine(doc.Rows, e)
		}
	}
	return tables
}

// WriteMarkdown prints the table: simulated throughput (bound; phase
// estimate), and for open-loop patterns the saturation point.
func (t *SummaryTable) WriteMarkdown(w io.Writer) {
	shift := t.Pattern == Shift.String()
	if shift {
		fmt.Fprintf(w, "\n%s: simulated throughput (analytic bound; phase-by-phase estimate), fraction of link bandwidth\n\n", t.Pattern)
	} else {
		fmt.Fprintf(w, "\n%s: simulated throughput (analytic bound), fraction of link bandwidth\n\n", t.Pattern)
	}
	t.grid(w, func(c SummaryCell) string {
		if c.Phase > 0 {
			return fmt.Sprintf("%.3f (%.3f; %.3f)%s", c.Sim, c.Bound, c.Phase, c.Note)
		}
		return fmt.Sprintf("%.3f (%.3f)%s", c.Sim, c.Bound, c.Note)
	})
	if shift {
		return
	}
	fmt.Fprintf(w, "\n%s: saturation point, the highest offered load accepted within 5 %% (analytic bound)\n\n", t.Pattern)
	t.grid(w, func(c SummaryCell) string { return fmt.Sprintf("%.2f (%.3f)", c.Knee, c.Bound) })
}

// grid prints one Markdown table, ok cells by cell.
func (t *SummaryTable) grid(w io.Writer, cell func(SummaryCell) string) {
	fmt.Fprintf(w, "| engine | %s |\n|---|%s\n", strings.Join(t.Fabrics, " | "), strings.Repeat("---|", len(t.Fabrics)))
	for _, e := range t.Engines {
		fmt.Fprintf(w, "| %s |", e)
		for _, f := range t.Fabrics {
			c, found := t.Cells[[2]string{e, f}]
			switch {
			case !found:
				fmt.Fprint(w, " |")
			case c.OK:
				fmt.Fprintf(w, " %s |", cell(c))
			default:
				fmt.Fprintf(w, " — %s |", c.Note)
			}
		}
		fmt.Fprintln(w)
	}
}

var neededVLs = regexp.MustCompile(`needed (\d+) VLs`)

// whyNot shortens the reason an engine was not simulated.
func whyNot(err string) string {
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

// summarizeEngine is an engine's best throughput over the sweep's loads
// (averaged over seeds) and its bound; deadlocked points are skipped and
// counted in the note.
func summarizeEngine(rows []Row, e string) SummaryCell {
	type acc struct {
		sum, off float64
		n        int
	}
	byLoad := map[float64]*acc{}
	var c SummaryCell
	dead, total := 0, 0
	for _, r := range rows {
		if r.Engine != e {
			continue
		}
		total++
		switch {
		case r.Error != "":
			c.Note = whyNot(r.Error)
			continue
		case r.Deadlock != "":
			dead++
			continue
		}
		c.Bound, c.Phase = r.Bound, r.PhaseBound
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
		c.Sim, c.OK = max(c.Sim, acc), true
		if off := a.off / float64(a.n); acc >= 0.95*off {
			c.Knee = max(c.Knee, off)
		}
	}
	if dead > 0 {
		c.Note = fmt.Sprintf(" deadlock in %d of %d runs", dead, total)
		if !c.OK {
			c.Note = "deadlock"
		}
	}
	return c
}
