package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/progress"
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
utilisation at the highest load). An engine may carry its VL limit:
nue/4 is Nue with k = 4. The shift exchange is finite and ignores --loads.

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
	fl.Lookup("engine").Usage = "engines to compare, comma-separated; NAME/K sets the VL limit K (e.g. nue/4)"
	for _, f := range []string{"json", "busiest", "no-bound", "lfts", "load"} {
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

// engineSpec is one engine of a sweep: its label (the spec as given), the
// registered name and the VL limit.
type engineSpec struct {
	label, name string
	vls         int
}

func parseEngines(s string, defVLs int) ([]engineSpec, error) {
	var out []engineSpec
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		e := engineSpec{label: f, name: f, vls: defVLs}
		if name, k, ok := strings.Cut(f, "/"); ok {
			v, err := strconv.Atoi(k)
			if err != nil || v < 1 || v > 15 {
				return nil, fmt.Errorf("engine %q: VL limit %q, expected 1..15", f, k)
			}
			e.name, e.vls = name, v
		}
		if _, err := routing.Lookup(e.name); err != nil {
			return nil, err
		}
		if seen[f] {
			return nil, fmt.Errorf("engine %q listed twice", f)
		}
		seen[f] = true
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no engine given")
	}
	return out, nil
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// parseList parses "a,b,c" or a range "from:to[:step]" (step default 1).
func parseList(s string) ([]float64, error) {
	if from, rest, ok := strings.Cut(s, ":"); ok {
		to, st, _ := strings.Cut(rest, ":")
		if st == "" {
			st = "1"
		}
		a, e1 := strconv.ParseFloat(from, 64)
		b, e2 := strconv.ParseFloat(to, 64)
		d, e3 := strconv.ParseFloat(st, 64)
		if e1 != nil || e2 != nil || e3 != nil || !finite(a, b, d) || d <= 0 || b < a || (b-a)/d > 10000 {
			return nil, fmt.Errorf("range %q, expected FROM:TO:STEP with FROM <= TO and STEP > 0", s)
		}
		n := int((b-a)/d+1e-6) + 1 // counted, not compared: no endless loop on odd floats
		out := make([]float64, 0, n)
		for i := range n {
			x := a + float64(i)*d
			if math.Abs(x) < 1e9 {
				// Round to 1e-9 so that 0.1:1:0.1 gives 0.3, not 0.30000000000000004.
				x = math.Round(x*1e9) / 1e9
			}
			out = append(out, x)
		}
		return out, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || !finite(x) {
			return nil, fmt.Errorf("list %q: %q is not a finite number", s, f)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	return out, nil
}

// sweepDoc is sweep.json, and with one row a point file of an array task.
type sweepDoc struct {
	Fabric string        `json:"fabric"`
	Points int           `json:"points"`
	Rows   []flitsim.Row `json:"rows"`
}

// plan is what a sweep's flags resolve to.
type plan struct {
	nets    []netSpec
	pattern flitsim.Pattern
	points  []flitsim.Point
}

// netSpec is one simulated network of a sweep: an engine's tables and a
// routing policy; label names its points (ENGINE, or ENGINE@POLICY).
type netSpec struct {
	label  string
	engine engineSpec
	policy string
}

func (sf *sweepFlags) plan() (*plan, error) {
	engines, err := parseEngines(sf.rf.ff.engines, sf.rf.ff.vls)
	if err != nil {
		return nil, err
	}
	pattern, err := flitsim.ParsePattern(sf.rf.traffic)
	if err != nil {
		return nil, err
	}
	loads := []float64{0}
	if pattern != flitsim.Shift {
		if loads, err = parseList(sf.loads); err != nil {
			return nil, fmt.Errorf("--loads: %w", err)
		}
		for _, l := range loads {
			if !(l > 0 && l <= 1) {
				return nil, fmt.Errorf("--loads: load %g, expected (0, 1]", l)
			}
		}
	}
	sv, err := parseList(sf.seeds)
	if err != nil {
		return nil, fmt.Errorf("--seeds: %w", err)
	}
	seeds := make([]uint64, len(sv))
	for i, s := range sv {
		if s < 0 || s != float64(uint64(s)) {
			return nil, fmt.Errorf("--seeds: %g is not a seed", s)
		}
		seeds[i] = uint64(s)
	}
	specs, err := sf.rf.pf.specs()
	if err != nil {
		return nil, err
	}
	pl := &plan{pattern: pattern}
	var labels []string
	for _, e := range engines {
		for _, sp := range specs {
			ns := netSpec{label: e.label, engine: e, policy: sp}
			if len(specs) > 1 || sp != "lft" {
				ns.label += "@" + sp
			}
			pl.nets = append(pl.nets, ns)
			labels = append(labels, ns.label)
		}
	}
	pl.points = flitsim.SweepPoints(labels, loads, seeds)
	return pl, nil
}

func runSweep(cmd *cobra.Command, args []string, sf sweepFlags) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	stderr := cmd.ErrOrStderr()
	if sf.rf.ff.lfts != "" {
		return fmt.Errorf("sweep routes the fabric with every --engine; --lfts is for run")
	}
	if sf.plots != "svg" && sf.plots != "png" && sf.plots != "none" {
		return fmt.Errorf("--plots %q, expected svg, png or none", sf.plots)
	}
	pl, err := sf.plan()
	if err != nil {
		return err
	}
	if sf.slurmArray != "" {
		return writeSlurmArray(cmd, args, sf, len(pl.points))
	}
	if sf.out == "" {
		return fmt.Errorf("--out DIR is required")
	}
	points := pl.points
	if sf.point >= 0 {
		if sf.point >= len(points) {
			return fmt.Errorf("--point %d, the sweep has points 0..%d", sf.point, len(points)-1)
		}
		points = points[sf.point : sf.point+1]
	}
	cfg, err := sf.rf.config()
	if err != nil {
		return err
	}
	l, err := loadFabric(stderr, args, sf.rf.ff)
	if err != nil {
		return err
	}
	label := l.name
	if sf.label != "" {
		label = sf.label
	}
	if sf.point < 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "fabric %s (%s): %d switches, %d terminals, %d switch-to-switch channels; %d points\n",
			label, l.name, l.g.NumSwitches(), len(l.g.Terms), l.g.NumChannels(), len(pl.points))
	}
	// Route, verify and compile each engine the points need.
	nets := map[string]flitsim.SweepNet{}
	failed := map[string]string{}
	var tr flitsim.Traffic
	type routed struct {
		n   *flitsim.Network
		err error
	}
	byEngine := map[string]routed{}
	for _, ns := range pl.nets {
		e := ns.engine
		need := false
		for _, p := range points {
			need = need || p.Engine == ns.label
		}
		if !need {
			continue
		}
		rt, ok := byEngine[e.label]
		if !ok {
			ff := sf.rf.ff
			ff.engines, ff.vls, ff.seed = e.name, e.vls, sf.rf.seed
			r, err := route(ctx, stderr, l.g, ff)
			if err == nil {
				rt.n, err = flitsim.NewNetwork(l.g, r, cfg)
			}
			rt.err = err
			byEngine[e.label] = rt
		}
		n, err := rt.n, rt.err
		if err == nil {
			n, err = sf.rf.pf.apply(n, l, ns.policy)
		}
		if err == nil {
			tr, err = sf.rf.workload(l, n)
			if err != nil {
				return err // the traffic is wrong for every engine
			}
		}
		var b *flitsim.Bound
		if err == nil && sf.rf.pf.plain(ns.policy) { // the bound walks the LFT paths
			b, err = n.Bound(tr, sf.rf.seed)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: not simulated: %v\n", ns.label, err)
			failed[ns.label] = err.Error()
			continue
		}
		nets[ns.label] = flitsim.SweepNet{Net: n, Bound: b}
	}
	opt := flitsim.RunOptions{Warmup: sf.rf.warmup, Measure: sf.rf.cycles, Drain: sf.rf.drain, MaxCycles: sf.rf.maxCycles, DeadlockWindow: sf.rf.window}
	var run []flitsim.Point
	for _, p := range points {
		if _, ok := nets[p.Engine]; ok {
			run = append(run, p)
		}
	}
	rep := progress.New(stderr, "flitsim sweep", progress.Options{})
	rep.Phase(fmt.Sprintf("simulating %d points", len(run)))
	done, err := flitsim.Sweep(ctx, nets, tr, opt, run, sf.workers)
	rep.Stop()
	if err != nil {
		return err
	}
	rows := make([]flitsim.Row, 0, len(points))
	k := 0
	for _, p := range points {
		if why, ok := failed[p.Engine]; ok {
			rows = append(rows, flitsim.Row{Point: p, Pattern: pl.pattern.String(), Error: why})
			continue
		}
		rows = append(rows, done[k])
		k++
	}
	doc := sweepDoc{Fabric: label, Points: len(pl.points), Rows: rows}
	if sf.point >= 0 {
		if err := os.MkdirAll(sf.out, 0o755); err != nil {
			return err
		}
		return writeJSON(cmd.OutOrStdout(), filepath.Join(sf.out, fmt.Sprintf("point-%05d.json", sf.point)), doc)
	}
	return writeSweep(cmd.OutOrStdout(), sf.out, doc, sf.plots)
}
