package fip

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Results is a study's output: what was run and its points. It is what
// the JSON form holds, what SLURM array tasks write and what Merge joins.
type Results struct {
	Fabric string  `json:"fabric"` // a name for the fabric (file or generator)
	Config Config  `json:"config"`
	Points []Point `json:"points"`
}

// WriteJSON writes r as indented JSON.
func (r *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// ReadJSON reads results written by WriteJSON; name is for errors.
func ReadJSON(rd io.Reader, name string) (*Results, error) {
	var r Results
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(r.Points) == 0 {
		return nil, fmt.Errorf("%s: no points, expected the output of nuesm study fip --json", name)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}

// Merge joins results of the same study run for different seeds (the
// tasks of a SLURM array) into the results one run over all the seeds
// gives: same fabric and settings required, seeds must not repeat.
func Merge(parts []*Results) (*Results, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("fip: merge: nothing to merge")
	}
	out := &Results{Fabric: parts[0].Fabric, Config: parts[0].Config}
	out.Config.Seeds = nil
	key := func(r *Results) string {
		c := r.Config
		c.Seeds = nil
		b, _ := json.Marshal(struct {
			F string
			C Config
		}{r.Fabric, c})
		return string(b)
	}
	want := key(parts[0])
	seen := map[uint64]bool{}
	for i, p := range parts {
		if key(p) != want {
			return nil, fmt.Errorf("fip: merge: part %d is another study (fabric or settings differ from part 0)", i)
		}
		for _, s := range p.Config.Seeds {
			if seen[s] {
				return nil, fmt.Errorf("fip: merge: seed %d in more than one part", s)
			}
			seen[s] = true
			out.Config.Seeds = append(out.Config.Seeds, s)
		}
		out.Points = append(out.Points, p.Points...)
	}
	slices.Sort(out.Config.Seeds)
	// Study's order: seed, then year, engine and pattern as generated.
	slices.SortStableFunc(out.Points, func(a, b Point) int {
		if a.Seed != b.Seed {
			if a.Seed < b.Seed {
				return -1
			}
			return 1
		}
		return 0
	})
	return out, nil
}

var csvHeader = []string{"seed", "year", "engine", "pattern", "link_failures", "switch_failures", "repaired",
	"error", "acyclic", "vls", "avg_hops", "max_efi", "throughput", "bound", "completion_cycles", "deadlock",
	"limit", "fabric_concurrent", "fabric_concurrent_low", "fabric_mean", "fabric_cut", "fabric_cut_name"}

// WriteCSV writes one line per point.
func (r *Results) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
	for _, p := range r.Points {
		rec := []string{strconv.FormatUint(p.Seed, 10), strconv.Itoa(p.Year), p.Engine, p.Pattern,
			strconv.Itoa(p.LinkFailures), strconv.Itoa(p.SwitchFailures), strconv.Itoa(p.Repaired),
			p.Error, strconv.FormatBool(p.Acyclic), strconv.Itoa(p.VLs), f(p.AvgHops),
			strconv.FormatInt(p.MaxEFI, 10), f(p.Throughput), f(p.Bound),
			strconv.FormatInt(p.Completion, 10), strconv.FormatBool(p.Deadlock),
			f(p.Limit(r.Config.Load)), f(p.Fabric.Concurrent), f(p.Fabric.ConcurrentLow), f(p.Fabric.Mean),
			f(p.Fabric.Cut), p.Fabric.CutName}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Cell is the mean over seeds of one engine, pattern and year.
type Cell struct {
	Throughput float64 // mean over the routed seeds; a deadlocked run counts 0
	// Limit is the mean over the same seeds of the routing-independent
	// bound (Point.Limit); NaN when the pattern has none. PathBound is the
	// mean of the routing's own bound (Point.Bound).
	Limit, PathBound float64
	Routed           int // seeds with a measurement
	Deadlocks        int // of those, runs that deadlocked
	Refused          int // seeds where the engine gave no safe tables
}

// Summary is Results reduced to means over seeds.
type Summary struct {
	Years    int
	Engines  []string
	Patterns []string
	Cells    map[string][]Cell // engine + "/" + pattern -> per year 0..Years
	// Failures per year (mean over seeds): links and switches applied,
	// critical failures repaired.
	Links, Switches, Repaired []float64
	// Limits holds per pattern the mean over all seeds of Point.Limit per
	// year, Fair the mean of FabricBound.Concurrent (λ*: the rate every
	// host reaches at once under uniform demand).
	Limits map[string][]float64
	Fair   []float64
}

// Summarize reduces r to per-year means.
func (r *Results) Summarize() *Summary {
	c := r.Config
	ny := c.Years + 1
	s := &Summary{Years: c.Years, Engines: c.Engines, Patterns: c.Patterns, Cells: map[string][]Cell{},
		Links: make([]float64, ny), Switches: make([]float64, ny), Repaired: make([]float64, ny),
		Limits: map[string][]float64{}, Fair: make([]float64, ny)}
	sums := map[string][]float64{}
	lims, paths := map[string][]float64{}, map[string][]float64{}
	counted := map[string]bool{}
	for _, p := range r.Points {
		k := p.Engine + "/" + p.Pattern
		if s.Cells[k] == nil {
			s.Cells[k] = make([]Cell, ny)
			sums[k], lims[k], paths[k] = make([]float64, ny), make([]float64, ny), make([]float64, ny)
		}
		if s.Limits[p.Pattern] == nil {
			s.Limits[p.Pattern] = make([]float64, ny)
		}
		if p.Year < 0 || p.Year > c.Years {
			continue
		}
		cell := &s.Cells[k][p.Year]
		switch {
		case p.Error != "":
			cell.Refused++
		default:
			cell.Routed++
			if p.Deadlock {
				cell.Deadlocks++
			}
			sums[k][p.Year] += p.Throughput
			lims[k][p.Year] += p.Limit(c.Load)
			paths[k][p.Year] += p.Bound
		}
		if id := fmt.Sprint(p.Seed, "/", p.Year, "/", p.Pattern); !counted[id] {
			counted[id] = true
			s.Limits[p.Pattern][p.Year] += p.Limit(c.Load)
		}
		if id := fmt.Sprint(p.Seed, "/", p.Year); !counted[id] {
			counted[id] = true
			s.Links[p.Year] += float64(p.LinkFailures)
			s.Switches[p.Year] += float64(p.SwitchFailures)
			s.Repaired[p.Year] += float64(p.Repaired)
			s.Fair[p.Year] += p.Fabric.Concurrent
		}
	}
	for k, cells := range s.Cells {
		for y := range cells {
			if n := float64(cells[y].Routed); n > 0 {
				cells[y].Throughput, cells[y].Limit, cells[y].PathBound = sums[k][y]/n, lims[k][y]/n, paths[k][y]/n
			} else {
				cells[y].Throughput, cells[y].Limit, cells[y].PathBound = math.NaN(), math.NaN(), math.NaN()
			}
		}
	}
	if n := float64(len(c.Seeds)); n > 0 {
		for y := range s.Links {
			s.Links[y] /= n
			s.Switches[y] /= n
			s.Repaired[y] /= n
			s.Fair[y] /= n
		}
		for _, v := range s.Limits {
			for y := range v {
				v[y] /= n
			}
		}
	}
	return s
}

// AtBound is the share of the routing-independent bound from which a
// figure counts as at the bound (its loss is the fabric's): the bounds are
// known to about 1 % (FabricBound.ConcurrentLow) and simulations vary by a
// few percent between seeds.
const AtBound = 0.95

// WriteText writes the summary as tables: failures per year, then per
// pattern the routing-independent bound and the mean throughput of every
// engine per year with its change from year 0 to the last year split into
// the part the bound explains and the part the routing does, then the
// share of the bound each engine reached.
func (s *Summary) WriteText(w io.Writer, seeds int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "year\t"
	for y := 0; y <= s.Years; y++ {
		head += strconv.Itoa(y) + "\t"
	}
	fmt.Fprintf(tw, "failures (mean over %d seeds; critical ones repaired)\n", seeds)
	fmt.Fprintln(tw, head)
	for _, r := range []struct {
		name string
		v    []float64
	}{{"links failed", s.Links}, {"switches failed", s.Switches}, {"critical repaired", s.Repaired}} {
		writeRow(tw, r.name, r.v, "%.1f")
		fmt.Fprintln(tw)
	}
	years := strings.TrimPrefix(head, "year\t")
	if len(s.Patterns) > 0 {
		s.writePathBounds(tw, years)
	}
	for _, pat := range s.Patterns {
		s.writePattern(tw, pat, years)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, textLegend, 100*(1-AtBound))
	return err
}

// textLegend explains WriteText's marks and columns; its verb is the
// margin of AtBound in percent.
const textLegend = `
n/a: no seed routed; * some seeds refused (mean of the others); ! deadlocks counted as 0
paths' bound: what the engine's paths allow if every channel ran at full rate (flitsim's Bound).
bound: what the best possible routing reaches on the damaged fabric (mean over the seeds):
  shift: the max concurrent flow of the all-to-all demand (any paths, fractional);
  uniform at load 1: the most mean accepted throughput with no pair served beyond its offer;
  all hosts at once: the max concurrent flow again, the rate every host can get.
by bound: the change the bound alone explains (at the engine's year-0 share of it);
by routing: the rest, from the engine's share of the bound changing.
=: within %.0f %% of the bound, the loss is the fabric's (physics); below it, the routing's
  (or the simulated switches', as at year 0 under uniform load)
`

// writeRow writes a row's name and its values, each followed by a tab.
func writeRow(tw io.Writer, name string, v []float64, format string) {
	fmt.Fprint(tw, name, "\t")
	for _, x := range v {
		fmt.Fprintf(tw, format+"\t", x)
	}
}

// writePathBounds writes the paths' bound of every engine per year. Every
// pattern here has the uniform all-to-all demand on average, so the
// paths' bound is the same for each.
func (s *Summary) writePathBounds(tw io.Writer, years string) {
	fmt.Fprintf(tw, "\npaths' bound: 1/max channel load of the engine's routing under uniform demand\n")
	fmt.Fprintln(tw, "engine\t"+years)
	for _, e := range s.Engines {
		fmt.Fprint(tw, e, "\t")
		for _, c := range s.cells(e, s.Patterns[0]) {
			if c.Routed == 0 {
				fmt.Fprint(tw, "n/a\t")
			} else {
				fmt.Fprintf(tw, "%.3f\t", c.PathBound)
			}
		}
		fmt.Fprintln(tw)
	}
}

// writePattern writes pattern pat's throughput table (with the bound, its
// change split by bound and by routing) and, where the bound is known, the
// share of it each engine reached.
func (s *Summary) writePattern(tw io.Writer, pat, years string) {
	lim := s.Limits[pat]
	hasLim := lim != nil && !math.IsNaN(lim[0])
	fmt.Fprintf(tw, "\n%s: accepted throughput (fraction of link bandwidth)\n", pat)
	fmt.Fprintln(tw, "engine\t"+years+"change\tby bound\tby routing\t")
	if hasLim {
		writeRow(tw, "bound: any routing", lim, "%.3f")
		fmt.Fprintf(tw, "%s\t\t\t\n", pctChange(lim[0], lim[s.Years]))
		if pat == "uniform" {
			writeRow(tw, "all hosts at once", s.Fair, "%.3f")
			fmt.Fprintf(tw, "%s\t\t\t\n", pctChange(s.Fair[0], s.Fair[s.Years]))
		}
	}
	for _, e := range s.Engines {
		cells := s.cells(e, pat)
		fmt.Fprint(tw, e, "\t")
		for _, c := range cells {
			fmt.Fprint(tw, c.String(), "\t")
		}
		first, last := cells[0], cells[len(cells)-1]
		fmt.Fprintf(tw, "%s\t", pctChange(first.Throughput, last.Throughput))
		if hasLim && first.Throughput > 0 && !math.IsNaN(last.Throughput) {
			byBound := (last.Limit - first.Limit) / first.Limit
			total := (last.Throughput - first.Throughput) / first.Throughput
			fmt.Fprintf(tw, "%+.1f %%\t%+.1f %%\t", 100*byBound, 100*(total-byBound))
		} else {
			fmt.Fprint(tw, "-\t-\t")
		}
		fmt.Fprintln(tw)
	}
	if !hasLim {
		return
	}
	fmt.Fprintf(tw, "\n%s: share of the bound reached (%%; = at the bound)\n", pat)
	fmt.Fprintln(tw, "engine\t"+years)
	for _, e := range s.Engines {
		fmt.Fprint(tw, e, "\t")
		for _, c := range s.cells(e, pat) {
			fmt.Fprint(tw, c.Share(), "\t")
		}
		fmt.Fprintln(tw)
	}
}

// cells returns the cells of engine e and pattern pat, all n/a when the
// results hold none.
func (s *Summary) cells(e, pat string) []Cell {
	if c := s.Cells[e+"/"+pat]; c != nil {
		return c
	}
	c := make([]Cell, s.Years+1)
	for i := range c {
		c[i].Throughput, c[i].Limit = math.NaN(), math.NaN()
	}
	return c
}

// pctChange renders the relative change from a to b, "-" when undefined.
func pctChange(a, b float64) string {
	if !(a > 0) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", 100*(b-a)/a)
}

// Share renders the cell's throughput as a percentage of its bound, with
// = when it is at the bound (AtBound).
func (c Cell) Share() string {
	if c.Routed == 0 || !(c.Limit > 0) {
		return "n/a"
	}
	v := c.Throughput / c.Limit
	s := strconv.FormatFloat(100*v, 'f', 0, 64)
	if v >= AtBound {
		s += "="
	}
	return s
}

// String renders a cell: the mean, with * when some seeds gave no safe
// tables and ! when some runs deadlocked.
func (c Cell) String() string {
	if c.Routed == 0 {
		return "n/a"
	}
	s := strconv.FormatFloat(c.Throughput, 'f', 3, 64)
	if c.Refused > 0 {
		s += "*"
	}
	if c.Deadlocks > 0 {
		s += "!"
	}
	return s
}

// ReadFiles reads and merges JSON results files.
func ReadFiles(paths []string) (*Results, error) {
	var parts []*Results
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		r, err := ReadJSON(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		parts = append(parts, r)
	}
	return Merge(parts)
}
