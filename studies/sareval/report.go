package sareval

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/nuesm/nuesm/sar"
)

// Gain is (other − ref) / other: how much lower the reference engine's
// effective EFI is than another's, as a fraction of the other's.
func Gain(ref, other int64) float64 {
	if other == 0 {
		return 0
	}
	return float64(other-ref) / float64(other)
}

// meanJobEFI is the mean of the per-job effective EFIs of m.
func meanJobEFI(m *sar.Metrics) float64 {
	if len(m.Jobs) == 0 {
		return 0
	}
	var s int64
	for _, j := range m.Jobs {
		s += j.EffectiveEFI
	}
	return float64(s) / float64(len(m.Jobs))
}

// Summary condenses the mixes of one allocation: per engine the means
// over the mixes where it has tables, and how the reference engine (the
// first of Config.Engines) compares.
type Summary struct {
	Alloc   sar.Alloc
	Mixes   int
	Engines []EngineSummary
	// BestOther counts the mixes where the reference's effective EFI is
	// at most that of every other engine with tables; Compared the mixes
	// where the reference and another engine have tables.
	BestOther, Compared int
}

// EngineSummary is one engine's means over the mixes where it has
// tables.
type EngineSummary struct {
	Engine       string
	Mixes        int     // mixes with tables
	EffectiveEFI float64 // mean effective EFI
	OverBound    float64 // mean effective EFI / bound
	BoundGain    float64 // mean Gain(bound, engine): the most any routing could gain over it
	MaxJobEFI    float64 // mean worst-off job's effective EFI
	MeanJobEFI   float64 // mean over mixes of the mean per-job effective EFI
	DarkFiber    float64 // mean dark-fiber percentage
	// RefGain is the mean Gain(reference, engine) over the RefMixes
	// mixes where both have tables, RefMin and RefMax its extremes;
	// RefNotWorse counts those where the reference's effective EFI is at
	// most this engine's.
	RefGain, RefMin, RefMax float64
	RefMixes, RefNotWorse   int
	Err                     string // the first failure, if it never had tables
}

// Summarize condenses the mixes of allocation alloc.
func (r *Result) Summarize(alloc sar.Alloc) Summary {
	n := len(r.Config.Engines)
	s := Summary{Alloc: alloc, Engines: make([]EngineSummary, n)}
	for i, e := range r.Config.Engines {
		s.Engines[i] = EngineSummary{Engine: e, RefMin: math.Inf(1), RefMax: math.Inf(-1)}
	}
	for _, mr := range r.Mixes {
		if mr.Alloc != alloc {
			continue
		}
		s.Mixes++
		ref := mr.Outcome[0].Metrics
		best, others := int64(math.MaxInt64), 0
		for i, o := range mr.Outcome {
			es := &s.Engines[i]
			if o.Metrics == nil {
				if es.Err == "" {
					es.Err = o.Err
				}
				continue
			}
			m := o.Metrics
			es.Mixes++
			es.EffectiveEFI += float64(m.EffectiveEFI)
			if mr.Bound > 0 {
				es.OverBound += float64(m.EffectiveEFI) / float64(mr.Bound)
			}
			if m.EffectiveEFI > 0 {
				es.BoundGain += Gain(mr.Bound, m.EffectiveEFI)
			}
			es.MaxJobEFI += float64(m.MaxJobEFI)
			es.MeanJobEFI += meanJobEFI(m)
			es.DarkFiber += m.DarkFiber
			if ref == nil || i == 0 {
				continue
			}
			gain := Gain(ref.EffectiveEFI, m.EffectiveEFI)
			es.RefGain += gain
			es.RefMin, es.RefMax = min(es.RefMin, gain), max(es.RefMax, gain)
			es.RefMixes++
			if ref.EffectiveEFI <= m.EffectiveEFI {
				es.RefNotWorse++
			}
			best, others = min(best, m.EffectiveEFI), others+1
		}
		if ref != nil && others > 0 {
			s.Compared++
			if ref.EffectiveEFI <= best {
				s.BestOther++
			}
		}
	}
	for i := range s.Engines {
		es := &s.Engines[i]
		if k := float64(es.Mixes); k > 0 {
			es.EffectiveEFI /= k
			es.OverBound /= k
			es.BoundGain /= k
			es.MaxJobEFI /= k
			es.MeanJobEFI /= k
			es.DarkFiber /= k
			es.Err = ""
		}
		if es.RefMixes > 0 {
			es.RefGain /= float64(es.RefMixes)
		} else {
			es.RefMin, es.RefMax = 0, 0
		}
	}
	return s
}

// WriteMarkdown writes the study as Markdown: per allocation a table of
// the mixes (effective EFI of every engine, the bound) and a summary per
// engine.
func (r *Result) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ref := r.Config.Engines[0]
	ew.printf("### %s (%d hosts, %d switches, %d VLs)\n", r.Fabric, r.Hosts, r.Switches, r.Config.VLs)
	for _, alloc := range r.Config.Allocs {
		ew.printf("\n#### %s placement, %d seeds: effective EFI per mix\n\n", alloc, len(r.Config.Seeds))
		ew.printf("| seed | jobs (multi-switch / running) | hosts busy | bound |")
		for _, e := range r.Config.Engines {
			ew.printf(" %s |", e)
		}
		ew.printf("\n|---|---|---|---|")
		for range r.Config.Engines {
			ew.printf("---|")
		}
		ew.printf("\n")
		for _, mr := range r.Mixes {
			if mr.Alloc != alloc {
				continue
			}
			ew.printf("| %d | %d / %d | %d | %d |", mr.Seed, len(mr.Jobs), mr.Running, mr.Busy, mr.Bound)
			for _, o := range mr.Outcome {
				if o.Metrics == nil {
					ew.printf(" n/a |")
				} else {
					ew.printf(" %d |", o.Metrics.EffectiveEFI)
				}
			}
			ew.printf("\n")
		}
		s := r.Summarize(alloc)
		ew.printf("\nSummary (means over the mixes; gain = (engine − %s) / engine, effective EFI):\n\n", ref)
		ew.printf("| engine | effective EFI | × bound | bound's gain | worst job EFI | mean job EFI | dark fiber %% | %s's gain: mean (min … max) | %s ≤ engine | route s |\n", ref, ref)
		ew.printf("|---|---|---|---|---|---|---|---|---|---|\n")
		for i, es := range s.Engines {
			if es.Mixes == 0 {
				ew.printf("| %s | n/a: %s | | | | | | | | |\n", es.Engine, short(es.Err, 100))
				continue
			}
			gain := "—"
			notWorse := "—"
			if i > 0 {
				gain = fmt.Sprintf("%.1f %% (%.1f … %.1f)", 100*es.RefGain, 100*es.RefMin, 100*es.RefMax)
				notWorse = fmt.Sprintf("%d of %d", es.RefNotWorse, es.RefMixes)
			}
			ew.printf("| %s | %.1f | %.2f | %.1f %% | %.1f | %.1f | %.1f | %s | %s | %.2f |\n", es.Engine, es.EffectiveEFI, es.OverBound,
				100*es.BoundGain, es.MaxJobEFI, es.MeanJobEFI, es.DarkFiber, gain, notWorse, r.RouteSeconds[i])
		}
		ew.printf("\n%s is at most the best other engine on %d of %d mixes. Bound's gain: the mean gain over the engine that the bound\n"+
			"would give, the most any destination-based routing can reach.\n", ref, s.BestOther, s.Compared)
	}
	return ew.err
}

// WriteCSV writes one line per mix and engine.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"fabric", "alloc", "seed", "running", "busy", "jobs", "bound", "engine",
		"effective_efi", "max_job_efi", "mean_job_efi", "dark_fiber_percent", "dark_cables", "cables", "error"})
	for _, mr := range r.Mixes {
		for _, o := range mr.Outcome {
			row := []string{r.Fabric, string(mr.Alloc), u(mr.Seed), strconv.Itoa(mr.Running), strconv.Itoa(mr.Busy),
				strconv.Itoa(len(mr.Jobs)), i64(mr.Bound), o.Engine}
			if m := o.Metrics; m != nil {
				row = append(row, i64(m.EffectiveEFI), i64(m.MaxJobEFI), strconv.FormatFloat(meanJobEFI(m), 'f', 2, 64),
					strconv.FormatFloat(m.DarkFiber, 'f', 2, 64), strconv.Itoa(m.DarkCables), strconv.Itoa(m.Cables), "")
			} else {
				row = append(row, "", "", "", "", "", "", o.Err)
			}
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJobsCSV writes one line per mix, engine and job: the job's own
// effective EFI.
func (r *Result) WriteJobsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"fabric", "alloc", "seed", "engine", "job", "terminals", "effective_efi"})
	for _, mr := range r.Mixes {
		for _, o := range mr.Outcome {
			if o.Metrics == nil {
				continue
			}
			for _, j := range o.Metrics.Jobs {
				_ = cw.Write([]string{r.Fabric, string(mr.Alloc), u(mr.Seed), o.Engine, j.ID, strconv.Itoa(j.Terminals), i64(j.EffectiveEFI)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// short cuts s to at most n runes, marking the cut.
func short(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + " …"
	}
	return s
}

func u(x uint64) string  { return strconv.FormatUint(x, 10) }
func i64(x int64) string { return strconv.FormatInt(x, 10) }

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
