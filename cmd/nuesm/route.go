package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
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
first routing the verifier accepts (every connected pair delivered, no loops,
VLs within the limit, acyclic channel dependency graph per VL) is written to
DIR: opensm-lfts.dump (for opensm -R file -U), nuesm.sl (SL of every path),
opensm-sl2vl.dump, qos-policy.conf (when SLs depend on the destination only)
and summary.json. Engines: ` + strings.Join(routing.Names(), ", ") + `.

Nue takes --param partition=auto|roundrobin|locality|switches (how LIDs are
dealt to layers), schedule=sequential|lockstep and
share=auto|switch|switchlid|none (whether a switch's LIDs in one layer share
one search: all of them, only its own LID with a terminal LID's, or none;
auto: switch in direct networks without SAR jobs, else switchlid). --stats
prints its per-layer statistics.

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
  nuesm route fabric.topo --engine nue --param partition=locality --stats -o out/
  nuesm route fabric.topo --engine sar-nue --jobs jobs.txt -o out/
  nuesm route fabric.topo --engine sar-dfsssp --slurm --host-map hosts.map -o out/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRoute(cmd, args, rf)
		},
	}
	fl := c.Flags()
	fl.StringVar(&rf.engines, "engine", "nue", "engine or comma-separated fallback chain, e.g. nue,dfsssp,updn")
	fl.IntVar(&rf.vls, "vls", routing.DefaultMaxVLs, "maximum number of data VLs (1..15)")
	fl.Uint64Var(&rf.seed, "seed", 0, "seed for engines with random choices")
	fl.StringVar(&rf.root, "root", "", "root switch for updn/ftree: node GUID (0x…) or description")
	fl.StringArrayVar(&rf.params, "param", nil, "engine parameter name=value (repeatable), e.g. partition=locality")
	fl.StringVarP(&rf.out, "output", "o", "", "output directory (created if needed)")
	fl.BoolVar(&rf.useDefault, "default", false, "route the embedded default fabric")
	fl.BoolVar(&rf.stats, "stats", false, "print per-layer statistics (nue)")
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
}

type attemptJSON struct {
	Engine        string  `json:"engine"`
	Error         string  `json:"error,omitempty"`
	EngineSeconds float64 `json:"engine_seconds"`
	VerifySeconds float64 `json:"verify_seconds,omitempty"`
}

func runRoute(cmd *cobra.Command, args []string, rf routeFlags) error {
	stderr := cmd.ErrOrStderr()
	res, g, err := loadGraph(stderr, args, rf.useDefault)
	if err != nil {
		return err
	}
	engines, err := routing.ParseChain(rf.engines)
	if err != nil {
		return err
	}
	params := map[string]string{}
	for _, p := range rf.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return fmt.Errorf("--param %q, expected name=value", p)
		}
		params[k] = v
	}
	jobs, err := routeJobs(cmd.Context(), stderr, g, rf.jobs, rf.slurm, rf.hostMap)
	if err != nil {
		return err
	}
	opt := routing.Options{MaxVLs: rf.vls, Seed: rf.seed, Root: rf.root, Jobs: jobs}
	if len(params) > 0 {
		opt.Params = params
	}
	stop := func() {}
	if !rf.quiet {
		opt.Progress, stop = progress(stderr, "routing")
	}
	// Nue's per-layer statistics come from its own entry point.
	var layers []nue.LayerStats
	if rf.stats {
		for i, e := range engines {
			if e.Name() == "nue" {
				engines[i] = statsEngine{out: &layers}
			}
		}
	}
	t0 := time.Now()
	r, rep, attempts, err := routing.RouteChain(context.Background(), g, engines, opt)
	elapsed := time.Since(t0)
	stop()
	for _, a := range attempts {
		if a.Err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", a.Engine, a.Err)
		}
	}
	if err != nil {
		return err
	}
	m, err := routing.Measure(g, r, 0)
	if err != nil {
		return err
	}
	var sarM *sar.Metrics
	if rf.jobs != "" || rf.slurm {
		if sarM, err = sar.Measure(g, r, jobs); err != nil {
			return err
		}
	}
	files, err := writeTables(rf.out, g, r)
	if err != nil {
		return err
	}
	sum := routeSummary{
		Fabric: res.File, Engine: r.Engine, MaxVLs: rf.vls, VLs: r.NumVLs, Seconds: elapsed.Seconds(),
		Verified: rep.OK(), Pairs: rep.Pairs, Unconnected: rep.Unconnected,
		MinHops: m.MinHops, AvgHops: m.AvgHops, MaxHops: m.MaxHops, MaxEFI: m.MaxEFI, AvgEFI: m.AvgEFI,
		LFTEntries: m.LFTEntries, VLPairs: m.VLPairs, Files: files, NueLayers: layers,
		Switches: g.NumSwitches(), Terminals: len(g.Terms), Params: params,
	}
	if sarM != nil {
		sum.SAR = newSARSummary(sarM)
	}
	for _, a := range attempts {
		aj := attemptJSON{Engine: a.Engine, EngineSeconds: a.Route.Seconds(), VerifySeconds: a.Verify.Seconds()}
		if a.Err != nil {
			aj.Error = a.Err.Error()
		} else {
			sum.EngineSeconds, sum.VerifySeconds = aj.EngineSeconds, aj.VerifySeconds
		}
		sum.Attempts = append(sum.Attempts, aj)
	}
	if err := writeJSON(filepath.Join(rf.out, "summary.json"), sum); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\ttime\tVLs\tavg hops\tmax hops\tmax EFI\tverified")
	verified := "yes"
	if !rep.OK() {
		verified = "NO"
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%d\t%d\t%s\n", r.Engine, elapsed.Round(time.Millisecond), r.NumVLs, m.AvgHops, m.MaxHops, m.MaxEFI, verified)
	tw.Flush()
	if len(layers) > 0 {
		printLayers(out, layers)
	}
	if sarM != nil {
		printSAR(out, sarM)
	}
	fmt.Fprintf(out, "tables written to %s\n", rf.out)
	return nil
}

// statsEngine is Nue, keeping its per-layer statistics.
type statsEngine struct{ out *[]nue.LayerStats }

func (statsEngine) Name() string       { return "nue" }
func (statsEngine) DeadlockFree() bool { return true }
func (s statsEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	r, st, err := nue.Route(ctx, g, opt)
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

// writeTables writes the routing's files into dir, each atomically.
func writeTables(dir string, g *fabric.Graph, r *lft.Routing) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{}
	put := func(key, name string, write func(string) error) error {
		p := filepath.Join(dir, name)
		if err := write(p); err != nil {
			return err
		}
		files[key] = name
		return nil
	}
	if err := put("lfts", "opensm-lfts.dump", func(p string) error { return lft.WriteOpenSMLFTsFile(p, g, r) }); err != nil {
		return nil, err
	}
	if err := put("sl", "nuesm.sl", func(p string) error { return lft.WriteSLFile(p, g, r) }); err != nil {
		return nil, err
	}
	if err := put("sl2vl", "opensm-sl2vl.dump", func(p string) error { return lft.WriteOpenSMSL2VLFile(p, g, r) }); err != nil {
		return nil, err
	}
	if r.SL.PerDest() {
		if err := put("qos_policy", "qos-policy.conf", func(p string) error { return lft.WriteQoSPolicyFile(p, g, r) }); err != nil {
			return nil, err
		}
	} else {
		// A stale policy from an earlier routing would contradict nuesm.sl.
		_ = os.Remove(filepath.Join(dir, "qos-policy.conf"))
	}
	return files, nil
}

func writeJSON(path string, v any) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}, 0o644)
}

// progress returns a Progress callback that reports on w once a second
// after the first second, and a function that stops the reporting.
func progress(w io.Writer, what string) (func(done, total int), func()) {
	var done, total atomic.Int64
	quit := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		printed := false
		for {
			select {
			case <-quit:
				if printed {
					fmt.Fprintf(w, "\r%s: done in %s\n", what, time.Since(start).Round(time.Millisecond))
				}
				return
			case <-t.C:
				if n := total.Load(); n > 0 {
					fmt.Fprintf(w, "\r%s: %d/%d (%.0f%%)", what, done.Load(), n, 100*float64(done.Load())/float64(n))
					printed = true
				}
			}
		}
	}()
	return func(d, n int) {
			done.Store(int64(d))
			total.Store(int64(n))
		}, func() {
			close(quit)
			<-finished
		}
}
