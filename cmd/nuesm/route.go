package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/progress"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"

	_ "github.com/nuesm/nuesm/studies/novacube" // registers the "pora" engine
)

type routeFlags struct {
	engines    string
	vls        int
	seed       uint64
	root       string
	params     []string
	out        string
	useDefault bool
	stats      bool
	quiet      bool
	compact    bool
	jobs       string
	slurm      bool
	hostMap    string
}

func newRouteCmd() *cobra.Command {
	var rf routeFlags
	c := &cobra.Command{
		Use:   "route [FABRIC] --engine E[,E2…] [--vls K] -o DIR",
		Short: "Compute, verify and write the forwarding tables of a fabric",
		Long: `Route a fabric with an engine chain: each engine is tried in turn and the
first routing the verifier accepts (every connected pair of CA and router
ports delivered, every switch's own packets delivered unless the engine
promises CA traffic only (ftree), no loops, VLs within the limit, acyclic
channel dependency graph per VL; the daemon publishes by the same rule) is
written to DIR with summary.json (the routing's figures). "nuesm serve"
publishes the same table files for the same fabric and engine.
--compact leaves out opensm-lfts.dump, OpenSM's form of the LFTs (nearly
all of the bytes on a large fabric; "nuesm export DIR" writes it later).

` + tableFilesHelp + `

` + engineHelp + `
--stats prints Nue's per-layer statistics.

With --jobs FILE or --slurm the running jobs are known: sar-nue and
sar-dfsssp route for them (other engines ignore them) and the summary adds
SAR's metrics: effective EFI per job and over all jobs, and the dark-fiber
percentage. A jobs file holds one job a line, a job id and its hosts as a
SLURM hostlist expression ("1234 node[0001-0004,0017]"; '#' comments);
hosts are the first word of CA node descriptions ("node0001 HCA-1"), or
as --host-map says. --slurm asks squeue for the running jobs and keeps
those on two or more switches, 10 minutes or longer, not in a debug
partition.`,
		Example: `  nuesm route fabric.topo --engine nue --vls 8 -o out/
  nuesm route --default --engine nue,dfsssp,updn -o out/
  nuesm route torus.topo --engine dor --vls 2 -o out/
  nuesm route fabric.topo --engine nue:partition=locality:share=none --stats -o out/
  nuesm route fabric.topo --engine nue,dfsssp --param vlbalance=off -o out/
  nuesm route fabric.topo --engine sar-nue --jobs jobs.txt -o out/
  nuesm route fabric.topo --engine sar-dfsssp --slurm --host-map hosts.map -o out/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRoute(cmd, args, rf)
		},
	}
	fl := c.Flags()
	fl.StringVar(&rf.engines, "engine", "nue", "engine or comma-separated fallback chain, e.g. nue:share=none,dfsssp,updn")
	fl.IntVar(&rf.vls, "vls", routing.DefaultMaxVLs, "maximum number of data VLs (1..15)")
	fl.Uint64Var(&rf.seed, "seed", 0, "seed of the engines' random choices (ties, partitions): the same seed, the same tables (0 unless given)")
	fl.StringVar(&rf.root, "root", "", "root switch for updn/ftree: node GUID (0x…) or description (default: the engine chooses)")
	fl.StringArrayVar(&rf.params, "param", nil, "engine parameter name=value for every engine of the chain that takes it (repeatable)")
	fl.StringVarP(&rf.out, "output", "o", "", "output directory (created if needed)")
	fl.BoolVar(&rf.useDefault, "default", false, "route the embedded default fabric")
	fl.BoolVar(&rf.stats, "stats", false, "print per-layer statistics (nue)")
	fl.BoolVar(&rf.compact, "compact", false, "write no opensm-lfts.dump: the LFTs only as nuesm.lft")
	fl.BoolVarP(&rf.quiet, "quiet", "q", false, "no progress output")
	fl.StringVar(&rf.jobs, "jobs", "", "running jobs for SAR: a file of \"jobid hostlist\" lines")
	fl.BoolVar(&rf.slurm, "slurm", false, "running jobs for SAR: ask squeue")
	fl.StringVar(&rf.hostMap, "host-map", "", "file overriding the host -> CA mapping (with --jobs or --slurm)")
	_ = c.MarkFlagRequired("output")
	return c
}

// routeSummary is summary.json.
type routeSummary struct {
	Fabric   string        `json:"fabric"`
	Engine   string        `json:"engine"`
	Attempts []attemptJSON `json:"attempts"`
	MaxVLs   int           `json:"max_vls"`
	VLs      int           `json:"vls"`
	Seconds  float64       `json:"route_seconds"` // the whole chain: every engine tried and its verification
	// EngineSeconds and VerifySeconds split the engine that succeeded:
	// its routing alone, and the verifier's check of it.
	EngineSeconds float64           `json:"engine_seconds"`
	VerifySeconds float64           `json:"verify_seconds"`
	Verified      bool              `json:"verified"`
	Pairs         int64             `json:"pairs"`
	Unconnected   int64             `json:"pairs_disconnected"`
	MinHops       int               `json:"min_hops"`
	AvgHops       float64           `json:"avg_hops"`
	MaxHops       int               `json:"max_hops"`
	MaxEFI        int64             `json:"max_efi"`
	AvgEFI        float64           `json:"avg_efi"`
	LFTEntries    int               `json:"lft_entries"`
	VLPairs       []int64           `json:"paths_per_vl"`
	Files         map[string]string `json:"files"`
	NueLayers     []nue.LayerStats  `json:"nue_layers,omitempty"`
	Switches      int               `json:"switches"`
	Terminals     int               `json:"terminals"`
	Params        map[string]string `json:"params,omitempty"`
	SAR           *sarSummary       `json:"sar,omitempty"`
	// Counts says what the counts above count, as verify, plan and diff
	// count differently.
	Counts map[string]string `json:"counts"`
}

// summaryCounts describes the counts of summary.json.
var summaryCounts = map[string]string{
	"pairs":       "ordered (source, destination) port pairs the verifier walked, as nuesm verify counts them: CA and router ports, and switch port 0 unless the engine promises CA traffic only",
	"lft_entries": "LFT entries holding a route, over all switches (nuesm diff's total also counts the entries without one: switches x LIDs 0..max)",
}

type attemptJSON struct {
	Engine        string  `json:"engine"`
	Error         string  `json:"error,omitempty"`
	EngineSeconds float64 `json:"engine_seconds"`
	VerifySeconds float64 `json:"verify_seconds,omitempty"`
}

func runRoute(cmd *cobra.Command, args []string, rf routeFlags) error {
	stderr := cmd.ErrOrStderr()
	l, err := loadGraph(stderr, args, rf.useDefault)
	if err != nil {
		return err
	}
	if routing.SmallTables(l.Graph) && os.Getenv("GOGC") == "" {
		// A small fabric's routing allocates a few MB: with the
		// runtime's default it would collect every few MB, and each
		// collection waits for every thread, a long wait on a busy
		// machine. The whole run stays within tens of MB.
		debug.SetGCPercent(800)
	}
	params, err := paramFlags(rf.params)
	if err != nil {
		return usageError(err)
	}
	engines, err := routing.NewChain(rf.engines, params)
	if err != nil {
		return usageError(err)
	}
	if rf.root != "" {
		if _, err := routing.ResolveSwitch(l.Graph, rf.root); err != nil {
			return usageError(fmt.Errorf("--root: %w", err))
		}
		if !slices.ContainsFunc(engines, takesRoot) {
			fmt.Fprintf(stderr, "note: --root is for updn and ftree; %s ignores it\n", rf.engines)
		}
	}
	jobs, notes, err := sar.LoadJobs(cmd.Context(), l.Graph, sar.JobsRequest{File: rf.jobs, SLURM: rf.slurm, HostMap: rf.hostMap})
	if err != nil {
		return inputError(err)
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	opt := routing.Options{MaxVLs: rf.vls, Seed: rf.seed, Root: rf.root, Jobs: jobs}
	rep := newReporter(stderr, "route", rf.quiet)
	defer rep.Stop()
	opt.Progress, opt.Phase = rep.Update, rep.Phase
	var layers []nue.LayerStats
	if rf.stats {
		engines = withLayerStats(engines, &layers)
	}
	t0 := time.Now()
	res, err := routing.RouteChain(cmd.Context(), l.Graph, engines, opt)
	elapsed := time.Since(t0)
	rep.Phase("measuring")
	if err != nil {
		return err // it lists every engine's error
	}
	for _, a := range res.Attempts {
		if a.Err != nil {
			fmt.Fprintf(stderr, "note: %s failed, the chain went on: %s\n", a.Engine, attemptError(a))
		}
	}
	sum, sarM, err := newRouteSummary(l, res, jobs, rf.jobs != "" || rf.slurm)
	if err != nil {
		return err
	}
	sum.MaxVLs, sum.Seconds, sum.NueLayers, sum.Params = rf.vls, elapsed.Seconds(), layers, params
	set := &lft.TableSet{Graph: l.Graph, Routing: res.Routing, Fabric: l.Text, Summary: sum, OpenSMLFTs: !rf.compact}
	sum.Files = set.Keys()
	for _, n := range set.OpenSMNotes() {
		fmt.Fprintf(stderr, "note: OpenSM: %s\n", n)
	}
	if sum.Unconnected > 0 {
		fmt.Fprintf(stderr, "note: the fabric is not connected: %d ordered pairs of ports have no path (\"nuesm info\" shows its components)\n", sum.Unconnected)
	}
	rep.Phase("writing tables")
	if err := set.WriteDir(rf.out); err != nil {
		return err
	}
	rep.Stop()
	printRoute(cmd.OutOrStdout(), sum, sarM, elapsed)
	fmt.Fprintf(cmd.OutOrStdout(), "tables written to %s\n", rf.out)
	return nil
}

// takesRoot reports whether e may use Options.Root: Up*/Down* and the
// fat-tree engine do, and best may compare them.
func takesRoot(e routing.Engine) bool {
	n := e.Name()
	return n == "updn" || n == "ftree" || strings.HasPrefix(n, "best")
}

// attemptError is a failed attempt's error without the engine's name
// in front when the engine put it there itself.
func attemptError(a routing.Attempt) string {
	return strings.TrimPrefix(a.Err.Error(), a.Engine+": ")
}

// paramFlags reads the --param flags; a name given twice keeps the last
// value.
func paramFlags(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	params := map[string]string{}
	for _, p := range flags {
		k, v, err := routing.ParseParam(p)
		if err != nil {
			return nil, fmt.Errorf("--param: %w", err)
		}
		params[k] = v
	}
	return params, nil
}

// newRouteSummary measures the chain's routing for summary.json (and, when
// jobs were asked for, SAR's metrics for them).
func newRouteSummary(l *ibnetdiscover.Loaded, res *routing.Result, jobs []routing.Job, withJobs bool) (*routeSummary, *sar.Metrics, error) {
	g, r, rep := l.Graph, res.Routing, res.Report
	m, err := routing.Measure(g, r, 0)
	if err != nil {
		return nil, nil, err
	}
	sum := &routeSummary{
		Fabric: l.File, Engine: r.Engine, VLs: r.NumVLs,
		Verified: rep.OK(), Pairs: rep.Pairs, Unconnected: rep.Unconnected,
		MinHops: m.MinHops, AvgHops: m.AvgHops, MaxHops: m.MaxHops, MaxEFI: m.MaxEFI, AvgEFI: m.AvgEFI,
		LFTEntries: m.LFTEntries, VLPairs: m.VLPairs, Switches: g.NumSwitches(), Terminals: len(g.Terms),
		Counts: summaryCounts,
	}
	for _, a := range res.Attempts {
		aj := attemptJSON{Engine: a.Engine, EngineSeconds: a.Route.Seconds(), VerifySeconds: a.Verify.Seconds()}
		if a.Err != nil {
			aj.Error = a.Err.Error()
		} else {
			sum.EngineSeconds, sum.VerifySeconds = aj.EngineSeconds, aj.VerifySeconds
		}
		sum.Attempts = append(sum.Attempts, aj)
	}
	if !withJobs {
		return sum, nil, nil
	}
	sarM, err := sar.Measure(g, r, jobs)
	if err != nil {
		return nil, nil, err
	}
	sum.SAR = newSARSummary(sarM)
	return sum, sarM, nil
}

// printRoute prints the outcome of nuesm route.
func printRoute(out io.Writer, sum *routeSummary, sarM *sar.Metrics, elapsed time.Duration) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\ttime\tVLs\tavg hops\tmax hops\tmax EFI\tverified")
	verified := "yes"
	if !sum.Verified {
		verified = "NO"
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%d\t%d\t%s\n", sum.Engine, elapsed.Round(time.Millisecond), sum.VLs, sum.AvgHops, sum.MaxHops, sum.MaxEFI, verified)
	tw.Flush()
	if len(sum.NueLayers) > 0 {
		printLayers(out, sum.NueLayers)
	}
	if sarM != nil {
		printSAR(out, sarM)
	}
}

// withLayerStats replaces the chain's Nue engines by ones that keep their
// per-layer statistics in out.
func withLayerStats(engines []routing.Engine, out *[]nue.LayerStats) []routing.Engine {
	for i, e := range engines {
		if ne, ok := e.(nue.Engine); ok {
			engines[i] = statsEngine{Engine: ne, out: out}
		}
	}
	return engines
}

// statsEngine is a Nue engine keeping its per-layer statistics.
type statsEngine struct {
	nue.Engine
	out *[]nue.LayerStats
}

// Route routes with Nue and keeps the statistics.
func (s statsEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	r, st, err := s.RouteStats(ctx, g, opt)
	if err == nil {
		*s.out = st.Layers
	}
	return r, err
}

func printLayers(w io.Writer, layers []nue.LayerStats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "layer\troot\tdestinations\tsearches\tsweeps\tfallbacks\tbacktracks\tescape turns\tused turns\tblocked turns")
	for _, l := range layers {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", l.Layer, l.Root, l.Destinations, l.Searches, l.Sweeps, l.Fallbacks, l.Backtracks, l.EscapeTurns, l.UsedTurns, l.BlockedTurns)
	}
	tw.Flush()
}

// newReporter reports the progress of long work on w (nothing when
// quiet): a bar on a terminal, plain lines every 10 s elsewhere.
func newReporter(w io.Writer, what string, quiet bool) *progress.Reporter {
	if quiet {
		w = io.Discard
	}
	return progress.New(w, what, progress.Options{})
}
