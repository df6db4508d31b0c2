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

	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/studies/sareval"
)

func init() { registerStudy(newSARStudyCmd) }

type sarStudyFlags struct {
	useDefault    bool
	engines       string
	allocs, seeds string
	vls, workers  int
	maxSize       int
	starts        int
	out           string
	quiet         bool
}

func newSARStudyCmd() *cobra.Command {
	var sf sarStudyFlags
	cmd := &cobra.Command{
		Use:   "sar FABRIC",
		Short: "Scheduling-aware routing study: job mixes, effective EFI per job and overall, dark fiber, per engine",
		Long: `sar evaluates scheduling-aware routing as the Nue thesis does (seed 001 §3).
Per seed and node selection it draws the jobs a batch system runs at one
moment (sizes from Lublin and Feitelson's workload model, placement by
SLURM's select/linear ("linear") or topology/tree ("tree"), or scattered
("scatter"), after 200 job starts), keeps the multi-switch ones as the SAR
filter does, and measures every engine's verified tables for them: the
effective EFI over all jobs, per job, and the dark-fiber percentage, beside
a lower bound no destination-based routing can beat. Engines that do not
know jobs route once; the sar-* engines route once per mix. The first engine
is the reference the gains are computed for.

Output: a Markdown report on stdout; with -o DIR also DIR/report.md,
DIR/mixes.csv (one line per mix and engine) and DIR/jobs.csv (one line per
mix, engine and job).

Example:
  nuesm gen fattree --k 8 --n 3 -o ft.topo
  nuesm study sar ft.topo --engines sar-nue,nue,ftree --allocs tree,linear --seeds 1-10 -o sar/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSARStudy(cmd, args, sf) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&sf.useDefault, "default", false, "use the embedded default fabric")
	fl.StringVar(&sf.engines, "engines", "sar-nue,nue,sar-dfsssp,dfsssp,minhop,updn", "engines to compare (comma-separated; the first is the reference)")
	fl.StringVar(&sf.allocs, "allocs", "tree,linear", "node selections: linear, tree, scatter")
	fl.StringVar(&sf.seeds, "seeds", "1-10", "mix seeds: a list or ranges (1-10,20)")
	fl.IntVar(&sf.vls, "vls", 8, "VL limit of the engines")
	fl.IntVar(&sf.maxSize, "max-size", 0, "largest job in hosts (0 = a quarter of the hosts)")
	fl.IntVar(&sf.starts, "starts", 0, "job starts before the snapshot (0 = 200)")
	fl.IntVar(&sf.workers, "workers", 0, "goroutines per engine (0 = all cores)")
	fl.StringVarP(&sf.out, "output", "o", "", "directory for report.md, mixes.csv, jobs.csv")
	fl.BoolVarP(&sf.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func (sf sarStudyFlags) config() (sareval.Config, error) {
	cfg := sareval.Config{Engines: splitList(sf.engines), VLs: sf.vls, Workers: sf.workers,
		Mix: sar.MixConfig{MaxSize: sf.maxSize, Starts: sf.starts}}
	for _, a := range splitList(sf.allocs) {
		cfg.Allocs = append(cfg.Allocs, sar.Alloc(a))
		if err := (sar.MixConfig{Alloc: sar.Alloc(a)}).Validate(); err != nil {
			return cfg, fmt.Errorf("--allocs: %w", err)
		}
	}
	seeds, err := parseSeedRanges(sf.seeds)
	if err != nil {
		return cfg, fmt.Errorf("--seeds: %w", err)
	}
	cfg.Seeds = seeds
	for _, e := range cfg.Engines {
		if _, err := routing.NewChain(e, nil); err != nil {
			return cfg, fmt.Errorf("--engines: %w", err)
		}
	}
	return cfg, cfg.Mix.Validate()
}

// parseSeedRanges reads "1-10,20" as 1..10 and 20.
func parseSeedRanges(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range splitList(s) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		b := a
		if err == nil && isRange {
			b, err = strconv.ParseUint(hi, 10, 64)
		}
		if err != nil || b < a || b-a > 10000 {
			return nil, fmt.Errorf("%q: expected a seed or a range like 1-10", part)
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seeds")
	}
	return out, nil
}

func runSARStudy(cmd *cobra.Command, args []string, sf sarStudyFlags) error {
	cfg, err := sf.config()
	if err != nil {
		return usageError(err)
	}
	l, err := loadGraph(cmd.ErrOrStderr(), args, sf.useDefault)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var prog func(string)
	if !sf.quiet {
		prog = func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "sar:", s) }
	}
	res, err := sareval.Run(ctx, l.Graph, filepath.Base(l.File), cfg, prog)
	if err != nil {
		return err
	}
	if sf.out != "" {
		if err := os.MkdirAll(sf.out, 0o755); err != nil {
			return err
		}
		for name, write := range map[string]func(io.Writer) error{
			"report.md": res.WriteMarkdown, "mixes.csv": res.WriteCSV, "jobs.csv": res.WriteJobsCSV,
		} {
			if err := atomicfile.WriteFile(filepath.Join(sf.out, name), write, 0o644); err != nil {
				return err
			}
		}
	}
	return res.WriteMarkdown(cmd.OutOrStdout())
}
