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
	"error", "acyclic", "vls", "avg_hops", "max_efi", "throughput", "bound", "completion_cycles", "deadlock"}

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
			strconv.FormatInt(p.Completion, 10), strconv.FormatBool(p.Deadlock)}
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
	Routed     int     // seeds with a measurement
	Deadlocks  int     // of those, runs that deadlocked
	Refused    int     // seeds where the engine gave no safe tables
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
}

// Summarize reduces r to per-year means.
func (r *Results) Summarize() *Summary {
	c := r.Config
	s := &Summary{Years: c.Years, Engines: c.Engines, Patterns: c.Patterns, Cells: map[string][]Cell{},
		Links: make([]float64, c.Years+1), Switches: make([]float64, c.Years+1), Repaired: make([]float64, c.Years+1)}
	sums := map[string][]float64{}
	counted := map[[2]uint64]bool{}
	for _, p := range r.Points {
		k := p.Engine + "/" + p.Pattern
		if s.Cells[k] == nil {
			s.Cells[k] = make([]Cell, c.Years+1)
			sums[k] = make([]float64, c.Years+1)
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
		}
		if id := [2]uint64{p.Seed, uint64(p.Year)}; !counted[id] {
			counted[id] = true
			s.Links[p.Year] += float64(p.LinkFailures)
			s.Switches[p.Year] += float64(p.SwitchFailures)
			s.Repaired[p.Year] += float64(p.Repaired)
		}
	}
	for k, cells := range s.Cells {
		for y := range cells {
			if cells[y].Routed > 0 {
				cells[y].Throughput = sums[k][y] / float64(cells[y].Routed)
			} else {
				cells[y].Throughput = math.NaN()
			}
		}
	}
	if n := float64(len(c.Seeds)); n > 0 {
		for y := range s.Links {
			s.Links[y] /= n
			s.Switches[y] /= n
			s.Repaired[y] /= n
		}
	}
	return s
}

// WriteText writes the summary as tables: failures per year, then per
// pattern the mean throughput of every engine per year and its change
// from year 0 to the last year.
func (s *Summary) WriteText(w io.Writer, seeds int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "year\t"
	for y := 0; y <= s.Years; y++ {
		head += strconv.Itoa(y) + "\t"
	}
	fmt.Fprintf(tw, "failures (mean over %d seeds; critical ones repaired)\t\n", seeds)
	fmt.Fprintln(tw, head)
	row := func(name string, v []float64) {
		fmt.Fprint(tw, name, "\t")
		for _, x := range v {
			fmt.Fprintf(tw, "%.1f\t", x)
		}
		fmt.Fprintln(tw)
	}
	row("links failed", s.Links)
	row("switches failed", s.Switches)
	row("critical repaired", s.Repaired)
	for _, pat := range s.Patterns {
		fmt.Fprintf(tw, "\t\n%s: accepted throughput (fraction of link bandwidth)\t\n", pat)
		fmt.Fprintln(tw, "engine\t"+strings.TrimPrefix(head, "year\t")+"change\t")
		for _, e := range s.Engines {
			cells := s.Cells[e+"/"+pat]
			if cells == nil { // no point of this engine and pattern: all n/a
				cells = make([]Cell, s.Years+1)
			}
			fmt.Fprint(tw, e, "\t")
			for _, c := range cells {
				fmt.Fprint(tw, c.String(), "\t")
			}
			first, last := cells[0].Throughput, cells[len(cells)-1].Throughput
			if first > 0 && !math.IsNaN(last) {
				fmt.Fprintf(tw, "%+.1f %%\t", 100*(last-first)/first)
			} else {
				fmt.Fprint(tw, "-\t")
			}
			fmt.Fprintln(tw)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nn/a: no seed routed; * some seeds refused (mean of the others); ! deadlocks counted as 0")
	return err
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
