package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/studies/fip"
)

func init() { registerStudy(newFipCmd) }

type fipFlags struct {
	useDefault          bool
	engines, patterns   string
	seeds               string
	vls, years, workers int
	linkRate, swRate    float64
	load                float64
	warmup, measure     int64
	out, part, array    string
	switching           string
	binary              string
}

func newFipCmd() *cobra.Command {
	var ff fipFlags
	cmd := &cobra.Command{
		Use:   "fip FABRIC",
		Short: "Fail-in-place study: failures year by year, reroute with each engine, simulate throughput",
		Long: `fip runs the fail-in-place study of the Nue thesis (seed 001 §2). Each year a
further fraction of the original switch-to-switch cables and switches fails and
stays failed; critical failures (ones that would cut hosts off) are repaired
and counted. After each year every engine reroutes the damaged fabric, the
verifier checks its tables, and the flit-level simulator measures accepted
throughput (all-to-all shift exchange, uniform random at the offered load)
beside the analytic bound. Several seeds give several failure sequences.

Output (-o DIR): fip.csv (one line per seed, year, engine, pattern), fip.json
(the same with the settings), summary.txt (means over seeds per year and the
change from year 0), and the summary on stdout.

As a SLURM job array: --slurm-array DIR writes DIR/fip.sbatch, one array task
per seed writing DIR/part-<seed>.json; then "nuesm study fip merge DIR/part-*.json
-o DIR" joins them into what one local run would have written.

Examples:
  nuesm gen fattree --k 4 --n 3 -o ft.topo
  nuesm study fip ft.topo --engines nue,dfsssp,updn,minhop,ftree --seeds 1,2,3 -o fip/
  nuesm study fip ft.topo --slurm-array fip/ && sbatch fip/fip.sbatch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runFip(cmd, args, ff) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&ff.useDefault, "default", false, "use the embedded default fabric")
	fl.StringVar(&ff.engines, "engines", "nue,dfsssp,updn,minhop", "engines to compare (comma-separated)")
	fl.StringVar(&ff.patterns, "patterns", "shift,uniform", "traffic patterns: "+strings.Join(flitsim.Patterns(), ", "))
	fl.StringVar(&ff.seeds, "seeds", "1,2,3", "failure sequences (comma-separated seeds)")
	fl.IntVar(&ff.vls, "vls", 8, "VL limit of the engines")
	fl.IntVar(&ff.years, "years", 8, "years of failures")
	fl.Float64Var(&ff.linkRate, "link-rate", 0.01, "fraction of the switch-to-switch cables failing per year")
	fl.Float64Var(&ff.swRate, "switch-rate", 0.01, "fraction of the switches failing per year")
	fl.Float64Var(&ff.load, "load", 1, "offered load of open-loop patterns (1 = saturation)")
	fl.Int64Var(&ff.warmup, "warmup", 0, "warm-up cycles per run (0 = flitsim's default)")
	fl.Int64Var(&ff.measure, "measure", 0, "measured cycles per run (0 = flitsim's default)")
	fl.StringVar(&ff.switching, "switching", "vct", "switching: vct or wormhole")
	fl.IntVar(&ff.workers, "workers", 0, "parallel cases (0 = all cores)")
	fl.StringVarP(&ff.out, "output", "o", "", "directory for fip.csv, fip.json, summary.txt")
	fl.StringVar(&ff.part, "json", "", "write only the JSON results to this file (a SLURM array task)")
	fl.StringVar(&ff.array, "slurm-array", "", "write DIR/fip.sbatch (one task per seed) instead of running")
	fl.StringVar(&ff.binary, "nuesm-binary", "", "the nuesm the array tasks run (default: this one)")
	cmd.AddCommand(newFipMergeCmd())
	return cmd
}

func (ff fipFlags) config() (fip.Config, error) {
	cfg := fip.Config{
		Engines: splitList(ff.engines), Patterns: splitList(ff.patterns), VLs: ff.vls, Years: ff.years,
		LinkRate: ff.linkRate, SwitchRate: ff.swRate, Load: ff.load,
		Cycles: fip.Cycles{Warmup: ff.warmup, Measure: ff.measure}, Workers: ff.workers,
	}
	for _, s := range splitList(ff.seeds) {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cfg, fmt.Errorf("--seeds: %q is not a seed (expected non-negative integers)", s)
		}
		cfg.Seeds = append(cfg.Seeds, v)
	}
	// fip.Config reads zero as "the default": given on the command line it
	// is a mistake, not a request for the default.
	switch {
	case ff.years < 1:
		return cfg, fmt.Errorf("--years %d, expected 1 or more", ff.years)
	case !(ff.load > 0 && ff.load <= 1):
		return cfg, fmt.Errorf("--load %g, expected (0, 1]", ff.load)
	case ff.linkRate == 0 && ff.swRate == 0:
		return cfg, fmt.Errorf("--link-rate and --switch-rate both 0: nothing would fail")
	}
	sw, err := flitsim.ParseSwitching(ff.switching)
	if err != nil {
		return cfg, err
	}
	cfg.Sim.Switching = sw
	return cfg, cfg.Validate()
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func runFip(cmd *cobra.Command, args []string, ff fipFlags) error {
	cfg, err := ff.config()
	if err != nil {
		return usageError(err)
	}
	if ff.array != "" {
		return writeFipArray(cmd, args, ff, cfg)
	}
	if ff.out == "" && ff.part == "" {
		return usageError(fmt.Errorf("give -o DIR (or --json FILE for one array task)"))
	}
	l, err := loadGraph(cmd.ErrOrStderr(), args, ff.useDefault)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep := newReporter(cmd.ErrOrStderr(), "fip", false)
	rep.Phase("cases (seed x year x engine)")
	pts, err := fip.Study(ctx, l.Fabric, cfg, rep.Update)
	rep.Stop()
	if err != nil {
		return err
	}
	cfg = cfg.WithDefaults()
	cfg.Workers = 0 // not a setting of the results
	r := &fip.Results{Fabric: filepath.Base(l.File), Config: cfg, Points: pts}
	if ff.part != "" {
		if err := atomicfile.WriteFile(ff.part, r.WriteJSON, 0o644); err != nil {
			return err
		}
		if ff.out == "" {
			return nil
		}
	}
	return writeFipOutputs(cmd.OutOrStdout(), ff.out, r)
}

// writeFipOutputs writes the CSV, JSON and summary into dir and prints the
// summary.
func writeFipOutputs(w io.Writer, dir string, r *fip.Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s := r.Summarize()
	for name, write := range map[string]func(io.Writer) error{
		"fip.csv":     r.WriteCSV,
		"fip.json":    r.WriteJSON,
		"summary.txt": func(w io.Writer) error { return s.WriteText(w, len(r.Config.Seeds)) },
	} {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), write, 0o644); err != nil {
			return err
		}
	}
	var plots []string
	for _, pat := range r.Config.Patterns {
		name := "fip-" + pat + ".svg"
		title := fmt.Sprintf("%s: fail-in-place, %d seeds", r.Fabric, len(r.Config.Seeds))
		if err := atomicfile.WriteFile(filepath.Join(dir, name), func(w io.Writer) error { return s.Plot(w, pat, title) }, 0o644); err != nil {
			return err
		}
		plots = append(plots, name)
	}
	fmt.Fprintf(w, "fail-in-place: %s, %d years, %d seeds, %g of the links and %g of the switches per year\n\n",
		r.Fabric, r.Config.Years, len(r.Config.Seeds), r.Config.LinkRate, r.Config.SwitchRate)
	if err := s.WriteText(w, len(r.Config.Seeds)); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s/{fip.csv,fip.json,summary.txt,%s}\n", dir, strings.Join(plots, ","))
	return nil
}

// writeFipArray writes an sbatch script whose array tasks run this same
// study one seed each.
func writeFipArray(cmd *cobra.Command, args []string, ff fipFlags, cfg fip.Config) error {
	if len(args) != 1 {
		return usageError(fmt.Errorf("--slurm-array needs a FABRIC file the array tasks can read"))
	}
	dir, err := filepath.Abs(ff.array)
	if err != nil {
		return err
	}
	fab, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	if _, err := os.Stat(fab); err != nil {
		return err
	}
	self := ff.binary
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg = cfg.WithDefaults()
	seeds := make([]string, len(cfg.Seeds))
	for i, s := range cfg.Seeds {
		seeds[i] = strconv.FormatUint(s, 10)
	}
	common := []string{
		"--engines", strings.Join(cfg.Engines, ","), "--patterns", strings.Join(cfg.Patterns, ","),
		"--vls", strconv.Itoa(cfg.VLs), "--years", strconv.Itoa(cfg.Years),
		"--link-rate", strconv.FormatFloat(cfg.LinkRate, 'g', -1, 64),
		"--switch-rate", strconv.FormatFloat(cfg.SwitchRate, 'g', -1, 64),
		"--load", strconv.FormatFloat(cfg.Load, 'g', -1, 64),
		"--warmup", strconv.FormatInt(ff.warmup, 10), "--measure", strconv.FormatInt(ff.measure, 10),
		"--switching", ff.switching,
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# Written by nuesm study fip --slurm-array: one task per seed. When all are done:\n")
	fmt.Fprintf(&b, "#   %s study fip merge %s/part-*.json -o %s\n", shQuote(self), shQuote(dir), shQuote(dir))
	fmt.Fprintf(&b, "#SBATCH --job-name=nuesm-fip\n#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n", len(seeds)-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s/task-%%a.out\n", dir)
	fmt.Fprintf(&b, "set -euo pipefail\nseeds=(%s)\nseed=${seeds[$SLURM_ARRAY_TASK_ID]}\n", strings.Join(seeds, " "))
	fmt.Fprintf(&b, "exec %s study fip %s", shQuote(self), shQuote(fab))
	for _, a := range common {
		fmt.Fprintf(&b, " %s", shQuote(a))
	}
	fmt.Fprintf(&b, " --seeds \"$seed\" --workers \"${SLURM_CPUS_ON_NODE:-1}\" --json %s/part-\"$seed\".json\n", shQuote(dir))
	path := filepath.Join(dir, "fip.sbatch")
	if err := atomicfile.WriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	}, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d array tasks); submit with: sbatch %s\n", path, len(seeds), path)
	return nil
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ',' || r == '=' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func newFipMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge PART.json... -o DIR",
		Short: "Join the results of fip SLURM array tasks",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError(fmt.Errorf("give -o DIR"))
			}
			r, err := fip.ReadFiles(args)
			if err != nil {
				return inputError(err)
			}
			return writeFipOutputs(cmd.OutOrStdout(), out, r)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory for fip.csv, fip.json, summary.txt")
	return cmd
}
