package flitsim

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nuesm/nuesm/internal/atomicfile"
)

// The files of a sweep: DIR/sweep.csv and DIR/sweep.json, the point files
// of SLURM array tasks (DIR/point-NNNNN.json) and the job array script.

// SweepDoc is sweep.json, and with one row a point file of an array task.
type SweepDoc struct {
	Fabric string `json:"fabric"`
	Points int    `json:"points"`
	Rows   []Row  `json:"rows"`
}

// EncodeJSON writes v as indented JSON without HTML escaping.
func EncodeJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(false)
	return e.Encode(v)
}

// WriteJSONFile writes v to path atomically (EncodeJSON).
func WriteJSONFile(path string, v any) error {
	if err := atomicfile.WriteFile(path, func(w io.Writer) error { return EncodeJSON(w, v) }, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WritePointFile writes doc as DIR/point-NNNNN.json, the output of the
// array task of point index.
func WritePointFile(dir string, index int, doc SweepDoc) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return WriteJSONFile(filepath.Join(dir, fmt.Sprintf("point-%05d.json", index)), doc)
}

// ReadSweepDoc reads DIR/sweep.json.
func ReadSweepDoc(dir string) (SweepDoc, error) {
	var doc SweepDoc
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("%s: %w", dir, err)
	}
	if len(doc.Rows) == 0 {
		return doc, fmt.Errorf("%s: no rows", dir)
	}
	return doc, nil
}

// MergePointFiles reads point files (directories are searched for
// point-*.json) and joins them into the sweep's document, checking that
// every point is there exactly once (MergeRows).
func MergePointFiles(args []string) (SweepDoc, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return SweepDoc{}, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "point-*.json"))
		if err != nil {
			return SweepDoc{}, err
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	var doc SweepDoc
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return doc, err
		}
		var d SweepDoc
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
	rows, err := MergeRows(doc.Rows, doc.Points)
	if err != nil {
		return doc, err
	}
	doc.Rows = rows
	return doc, nil
}

// WriteSweepFiles writes DIR/sweep.csv and DIR/sweep.json and returns
// their paths.
func WriteSweepFiles(dir string, doc SweepDoc) (csvPath, jsonPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	csvPath, jsonPath = filepath.Join(dir, "sweep.csv"), filepath.Join(dir, "sweep.json")
	if err := atomicfile.WriteFile(csvPath, func(w io.Writer) error { return WriteCSV(w, doc.Rows) }, 0o644); err != nil {
		return "", "", fmt.Errorf("write %s: %w", csvPath, err)
	}
	return csvPath, jsonPath, WriteJSONFile(jsonPath, doc)
}

// RowEngines returns the engines of rows in first-seen order.
func RowEngines(rows []Row) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Engine] {
			seen[r.Engine] = true
			out = append(out, r.Engine)
		}
	}
	return out
}

// WriteBest prints per engine the best accepted throughput of a sweep,
// its load, the bounds, the load where it saturates (SaturationLoad), the
// deadlocked runs and why an engine was not simulated.
func WriteBest(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\tbest accepted\tat load\tbound\tsaturates at\tcompletion\tcompletion bound\tdeadlocks\tnote")
	for _, e := range RowEngines(rows) {
		var best Row
		dead, note := 0, ""
		for _, r := range rows {
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
		sat := "-"
		if best.Pattern != Shift.String() && note == "" {
			sat = "stable throughout"
			if l, ok := SaturationLoad(rows, e); ok {
				sat = fmt.Sprintf("load %g", l)
			}
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%g\t%.4f\t%s\t%d\t%.0f\t%d\t%s\n", e, best.Accepted, best.Load, best.Bound, sat, best.Completion, best.CompletionBound, dead, note)
	}
	return tw.Flush()
}

// SlurmArray describes a sweep as a SLURM job array: one task per point,
// each running the sweep command with --point.
type SlurmArray struct {
	Dir       string   // absolute: sweep.sbatch, points/, logs/
	Bin       string   // the flitsim binary the tasks run
	Args      []string // the sweep's arguments, without --point and --out
	Points    int
	Time      string // sbatch --time, "" none
	Partition string // sbatch --partition, "" none
}

// shellQuote quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Write writes DIR/sweep.sbatch and creates DIR/points and DIR/logs; it
// returns the script's path.
func (a SlurmArray) Write() (string, error) {
	for _, d := range []string{"points", "logs"} {
		if err := os.MkdirAll(filepath.Join(a.Dir, d), 0o755); err != nil {
			return "", err
		}
	}
	quoted := make([]string, len(a.Args))
	for i, s := range a.Args {
		quoted[i] = shellQuote(s)
	}
	var b strings.Builder
	path := filepath.Join(a.Dir, "sweep.sbatch")
	fmt.Fprintf(&b, "#!/bin/bash\n# flitsim sweep as a SLURM job array: one task per point (%d points).\n", a.Points)
	fmt.Fprintf(&b, "# Submit: sbatch %s\n# Then:   flitsim merge %s -o OUT\n", shellQuote(path), shellQuote(filepath.Join(a.Dir, "points")))
	fmt.Fprintf(&b, "#SBATCH --job-name=flitsim-sweep\n#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n", a.Points-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(a.Dir, "logs", "flitsim-%A_%a.out"))
	if a.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", a.Time)
	}
	if a.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", a.Partition)
	}
	fmt.Fprintf(&b, "set -euo pipefail\n: \"${SLURM_ARRAY_TASK_ID:?run this script with sbatch}\"\n")
	fmt.Fprintf(&b, "FLITSIM=%s\n", shellQuote(a.Bin))
	fmt.Fprintf(&b, "ARGS=(%s)\n", strings.Join(quoted, " "))
	fmt.Fprintf(&b, "exec \"$FLITSIM\" \"${ARGS[@]}\" --point \"$SLURM_ARRAY_TASK_ID\" --out %s\n", shellQuote(filepath.Join(a.Dir, "points")))
	if err := atomicfile.WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err }, 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
