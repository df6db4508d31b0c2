package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/plot/vg"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/flitsim/plot"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// sweepOnly are the sweep flags an array task must not inherit.
var sweepOnly = map[string]bool{"slurm-array": true, "slurm-time": true, "slurm-partition": true,
	"flitsim-bin": true, "out": true, "point": true, "workers": true, "plots": true}

// shellQuote quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeSlurmArray writes DIR/sweep.sbatch: a job array of n tasks, task i
// running `flitsim sweep` with the same flags and --point i.
func writeSlurmArray(cmd *cobra.Command, args []string, sf sweepFlags, n int) error {
	dir, err := filepath.Abs(sf.slurmArray)
	if err != nil {
		return err
	}
	bin := sf.bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("find the flitsim binary (give --flitsim-bin): %w", err)
		}
	}
	argv := []string{"sweep"}
	for _, a := range args {
		abs, err := filepath.Abs(a)
		if err != nil {
			return err
		}
		argv = append(argv, abs)
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sweepOnly[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				argv = append(argv, "--"+f.Name, v)
			}
			return
		}
		argv = append(argv, "--"+f.Name+"="+f.Value.String())
	})
	for _, d := range []string{"points", "logs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# flitsim sweep as a SLURM job array: one task per point (%d points).\n", n)
	fmt.Fprintf(&b, "# Submit: sbatch %s\n# Then:   flitsim merge %s -o OUT\n", shellQuote(filepath.Join(dir, "sweep.sbatch")), shellQuote(filepath.Join(dir, "points")))
	fmt.Fprintf(&b, "#SBATCH --job-name=flitsim-sweep\n#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n", n-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(dir, "logs", "flitsim-%A_%a.out"))
	if sf.slurmTime != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", sf.slurmTime)
	}
	if sf.slurmPart != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", sf.slurmPart)
	}
	fmt.Fprintf(&b, "set -euo pipefail\n: \"${SLURM_ARRAY_TASK_ID:?run this script with sbatch}\"\n")
	fmt.Fprintf(&b, "FLITSIM=%s\n", shellQuote(bin))
	fmt.Fprintf(&b, "ARGS=(%s)\n", strings.Join(quoted, " "))
	fmt.Fprintf(&b, "exec \"$FLITSIM\" \"${ARGS[@]}\" --point \"$SLURM_ARRAY_TASK_ID\" --out %s\n", shellQuote(filepath.Join(dir, "points")))
	path := filepath.Join(dir, "sweep.sbatch")
	if err := atomicfile.WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err }, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d array tasks); after the jobs: flitsim merge %s -o OUT\n", path, n, filepath.Join(dir, "points"))
	return nil
}

func newMergeCmd() *cobra.Command {
	var out, plots string
	c := &cobra.Command{
		Use:   "merge POINTS_DIR|FILE… -o DIR",
		Short: "Join the point files of a SLURM array sweep into the sweep's CSV, JSON and plots",
		Long: `Read the point-NNNNN.json files written by 'flitsim sweep --point' (the tasks
of a --slurm-array script), check that every point of the sweep is there
exactly once, and write DIR/sweep.csv, DIR/sweep.json and the plots, the
same files a local sweep writes.`,
		Example: `  flitsim merge slurm/points -o out/`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out DIR is required")
			}
			doc, err := mergePoints(args)
			if err != nil {
				return err
			}
			return writeSweep(cmd.OutOrStdout(), out, doc, plots)
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "output directory")
	c.Flags().StringVar(&plots, "plots", "svg", "plot format: svg, png or none")
	return c
}

// mergePoints reads point files (directories are searched for
// point-*.json) and joins them.
func mergePoints(args []string) (sweepDoc, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return sweepDoc{}, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "point-*.json"))
		if err != nil {
			return sweepDoc{}, err
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	var doc sweepDoc
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return doc, err
		}
		var d sweepDoc
		if err := json.Unmarshal(b, &d); err != nil {
			return doc, fmt.Errorf("%s: %w", f, err)
		}
		if i == 0 {
			doc.Fabric, doc.Points = d.Fabric, d.Points
		} else if d.Fabric != doc.Fabric || d.Points != doc.Points {
			return doc, fmt.Errorf("%s: fabric %q with %d points, but %s has %q with %d: not one sweep", f, d.Fabric, d.Points, files[0], doc.Fabric, doc.Points)
		}
		doc.Rows = append(doc.Rows, d.Rows...)
	}
	if len(files) == 0 {
		return doc, fmt.Errorf("no point-*.json files in %s", strings.Join(args, " "))
	}
	rows, err := flitsim.MergeRows(doc.Rows, doc.Points)
	if err != nil {
		return doc, err
	}
	doc.Rows = rows
	return doc, nil
}

// writeSweep writes DIR/sweep.csv, DIR/sweep.json and the plots, and
// prints the best throughput per engine.
func writeSweep(stdout io.Writer, dir string, doc sweepDoc, plots string) error {
	if plots != "svg" && plots != "png" && plots != "none" {
		return fmt.Errorf("--plots %q, expected svg, png or none", plots)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	csvPath := filepath.Join(dir, "sweep.csv")
	if err := atomicfile.WriteFile(csvPath, func(w io.Writer) error { return flitsim.WriteCSV(w, doc.Rows) }, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", csvPath, err)
	}
	if err := writeJSON(stdout, filepath.Join(dir, "sweep.json"), doc); err != nil {
		return err
	}
	if plots != "none" {
		if err := writePlots(dir, doc, plots); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\tbest accepted\tat load\tbound\tcompletion\tcompletion bound\tdeadlocks\tnote")
	for _, e := range plot.Engines(doc.Rows) {
		var best flitsim.Row
		dead, note := 0, ""
		for _, r := range doc.Rows {
			switch {
			case r.Engine != e:
			case r.Error != "":
				note = r.Error
			case r.Deadlock != "":
				dead++
			case r.Accepted > best.Accepted:
				best = r
			}
		}
		note = strings.TrimPrefix(note, "routing: no engine produced a verified routing: ")
		if len(note) > 90 {
			note = note[:87] + "..."
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%g\t%.4f\t%d\t%.0f\t%d\t%s\n", e, best.Accepted, best.Load, best.Bound, best.Completion, best.CompletionBound, dead, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s\n", csvPath, filepath.Join(dir, "sweep.json"))
	return nil
}

func writePlots(dir string, doc sweepDoc, ext string) error {
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
		if p, err := plot.LatencyLoad(ok, title+" — "+ok[0].Pattern); err == nil {
			if err := plot.Save(p, filepath.Join(dir, "latency."+ext), 16*vg.Centimeter, 11*vg.Centimeter); err != nil {
				return err
			}
		}
	}
	p, err := plot.Throughput(ok, title+" — "+ok[0].Pattern)
	if err != nil {
		return err
	}
	if err := plot.Save(p, filepath.Join(dir, "throughput."+ext), 16*vg.Centimeter, 11*vg.Centimeter); err != nil {
		return err
	}
	for _, e := range plot.Engines(ok) {
		r, found := plot.HeatRow(ok, e)
		if !found {
			continue
		}
		h, err := plot.LinkHeat(r, fmt.Sprintf("%s: link utilisation at load %g", e, r.Load))
		if err != nil {
			return err
		}
		name := "heat-" + strings.NewReplacer("/", "-", " ", "_").Replace(e) + "." + ext
		if err := plot.Save(h, filepath.Join(dir, name), 14*vg.Centimeter, 13*vg.Centimeter); err != nil {
			return err
		}
	}
	return nil
}
