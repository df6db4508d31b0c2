package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/progress"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// sweepFlags are the flags of `flitsim sweep` beyond run's.
type sweepFlags struct {
	rf         runFlags
	loads      string
	seeds      string
	workers    int
	out        string
	plots      string
	point      int
	slurmArray string
	slurmTime  string
	slurmPart  string
	bin        string
	label      string
}

func newSweepCmd() *cobra.Command {
	sf := sweepFlags{point: -1}
	c := &cobra.Command{
		Use:   "sweep [FABRIC] --engine E1,E2/K… --loads L1,L2… --seeds S1,S2… -o DIR",
		Short: "Simulate every engine × load × seed on a worker pool; write CSV, JSON and plots",
		Long: `Route the fabric with every engine listed (each verified; one that fails
verification gets rows with the reason instead of results), then simulate
every engine × offered load × seed on a local worker pool and write
DIR/sweep.csv, DIR/sweep.json and plots (latency.svg: latency against
accepted throughput per engine; throughput.svg: best throughput per engine
beside the analytic bound; heat-ENGINE.svg: switch-to-switch link
utilisation at the highest load). An engine may carry its parameters
and its VL limit: nue:share=switch/4 is Nue sharing per switch with k = 4. The shift exchange is finite and ignores --loads.

With --slurm-array DIR nothing is simulated: DIR/sweep.sbatch is written, a
SLURM job array with one task per point, each running this sweep with
--point, writing DIR/points/point-NNNNN.json; join them with
'flitsim merge DIR/points -o OUT', which writes the same files as a local
sweep (byte-identical CSV).`,
		Example: `  flitsim sweep --gen torus --gen-param dims=4x4x4 --engine dor,nue/2,dfsssp --loads 0.1:1:0.1 --seeds 1,2 -o out/
  flitsim sweep fabric.topo --engine nue/1,nue/4,updn --traffic shift --message-packets 4 -o out/
  flitsim sweep fabric.topo --engine nue,updn --loads 0.2,0.5,0.8 --slurm-array slurm/ && sbatch slurm/sweep.sbatch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSweep(cmd, args, sf) },
	}
	fl := c.Flags()
	sf.rf.register(fl)
	fl.Lookup("engine").Usage = "engines to compare, comma-separated, each with its parameters; SPEC/K sets the VL limit K (e.g. nue/4, nue:share=switch/8)"
	for _, f := range []string{"json", "busiest", "no-bound", "lfts", "load", "link-loads"} {
		_ = fl.MarkHidden(f) // run's; a sweep has its own outputs and loads
	}
	fl.StringVar(&sf.loads, "loads", "0.1:1:0.1", "offered loads: a list 0.2,0.5 or a range FROM:TO:STEP")
	fl.StringVar(&sf.seeds, "seeds", "1", "seeds: a list 1,2,3 or a range FROM:TO")
	fl.IntVar(&sf.workers, "workers", 0, "parallel simulations (0 = GOMAXPROCS)")
	fl.StringVarP(&sf.out, "out", "o", "", "output directory")
	fl.StringVar(&sf.plots, "plots", "svg", "plot format: svg, png or none")
	fl.IntVar(&sf.point, "point", -1, "run only this point (a SLURM array task) and write DIR/point-NNNNN.json")
	fl.StringVar(&sf.slurmArray, "slurm-array", "", "write DIR/sweep.sbatch, a SLURM job array of the points, instead of simulating")
	fl.StringVar(&sf.slurmTime, "slurm-time", "", "time limit of each array task (sbatch --time)")
	fl.StringVar(&sf.slurmPart, "slurm-partition", "", "SLURM partition (sbatch --partition)")
	fl.StringVar(&sf.bin, "flitsim-bin", "", "flitsim binary the array tasks run (default: this one)")
	fl.StringVar(&sf.label, "label", "", "name of the fabric in the outputs (default: the file or generator)")
	return c
}

// sweepPlan resolves the sweep's flags.
func (sf *sweepFlags) sweepPlan() (*flitsim.SweepPlan, error) {
	engines, err := flitsim.ParseEngineSpecs(sf.rf.ff.engines, sf.rf.ff.vls, func(spec string) error {
		_, err := routing.ParseChain(spec)
		return err
	})
	if err != nil {
		return nil, err
	}
	pattern, err := flitsim.ParsePattern(sf.rf.traffic)
	if err != nil {
		return nil, err
	}
	var loads []float64
	if pattern != flitsim.Shift {
		if loads, err = flitsim.ParseLoads(sf.loads); err != nil {
			return nil, fmt.Errorf("--loads: %w", err)
		}
	}
	seeds, err := flitsim.ParseSeeds(sf.seeds)
	if err != nil {
		return nil, fmt.Errorf("--seeds: %w", err)
	}
	specs, err := sf.rf.pf.specs()
	if err != nil {
		return nil, err
	}
	return flitsim.PlanSweep(engines, specs, pattern, loads, seeds), nil
}

func runSweep(cmd *cobra.Command, args []string, sf sweepFlags) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	if sf.rf.ff.lfts != "" {
		return usageError(fmt.Errorf("sweep routes the fabric with every --engine; --lfts is for run"))
	}
	if err := checkPlots(sf.plots); err != nil {
		return err
	}
	pl, err := sf.sweepPlan()
	if err != nil {
		return usageError(err)
	}
	if sf.slurmArray != "" {
		return writeSlurmArray(cmd, args, sf, len(pl.Points))
	}
	if sf.out == "" {
		return usageError(fmt.Errorf("--out DIR is required"))
	}
	points := pl.Points
	if sf.point >= 0 {
		if sf.point >= len(points) {
			return usageError(fmt.Errorf("--point %d, the sweep has points 0..%d", sf.point, len(points)-1))
		}
		points = points[sf.point : sf.point+1]
	}
	l, err := loadFabric(stderr, args, sf.rf.ff)
	if err != nil {
		return err
	}
	cfg, err := sf.rf.config(l)
	if err != nil {
		return usageError(err)
	}
	label := l.name
	if sf.label != "" {
		label = sf.label
	}
	if sf.point < 0 {
		fmt.Fprintf(stdout, "fabric %s (%s): %d switches, %d terminals, %d switch-to-switch channels; %d points\n",
			label, l.name, l.g.NumSwitches(), len(l.g.Terms), l.g.NumChannels(), len(pl.Points))
	}
	setup := flitsim.SweepSetup{Config: cfg, Env: sf.rf.pf.env(l), BoundSeed: sf.rf.seed, Workers: sf.workers, Log: stderr,
		Options: sf.rf.options(),
		Route: func(ctx context.Context, e flitsim.EngineSpec) (*lft.Routing, error) {
			ff := sf.rf.ff
			ff.engines, ff.vls, ff.seed = e.Name, e.VLs, sf.rf.seed
			return route(ctx, stderr, l.g, ff)
		},
		Traffic: func(n *flitsim.Network) (flitsim.Traffic, error) { return sf.rf.workload(l, n) },
	}
	rep := progress.New(stderr, "flitsim sweep", progress.Options{})
	rep.Phase(fmt.Sprintf("routing and simulating %d points", len(points)))
	rows, err := setup.Run(ctx, pl, points)
	rep.Stop()
	if err != nil {
		return err
	}
	doc := flitsim.SweepDoc{Fabric: label, Points: len(pl.Points), Rows: rows}
	if sf.point >= 0 {
		return flitsim.WritePointFile(sf.out, sf.point, doc)
	}
	return writeSweep(stdout, sf.out, doc, sf.plots)
}
