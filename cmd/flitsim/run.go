package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/routing"
)

// runFlags are the flags of `flitsim run` beyond the fabric's.
type runFlags struct {
	ff fabricFlags

	switching, queueing, allocator string
	iterations                     int
	packetFlits, flitBytes, buffer int
	pipeline, routeStall, vcsPerVL int
	linkLatency, globalLatency     string
	injectLatency                  string
	linkGbps                       float64
	bandwidth                      float64
	simVLs                         int
	arbHigh, arbLow                string
	arbLimit                       int

	traffic, arrival      string
	load, weibull         float64
	msgPackets, messages  int
	sync                  bool
	hotNode               int32
	hotFraction           float64
	groupOffset           int
	srcGroup, dstGroup    int
	ioEvery               int
	ioRatio               float64
	ioPackets, ioVLOffset int
	roles                 string // io: a placement roles file (roles.go)

	seed                  uint64
	warmup, cycles, drain int64
	maxCycles, window     int64
	sourceQueue           int
	stopUnstable          bool
	jsonOut               string
	linkLoads             string
	busiest               int
	noBound               bool

	pf policyFlags
}

func newRunCmd() *cobra.Command {
	var rf runFlags
	c := &cobra.Command{
		Use:   "run [FABRIC] --engine E | --lfts DIR  --traffic P --load L",
		Short: "Simulate one workload on a routed fabric and print the results",
		Long: `Route the fabric (an ibnetdiscover dump, --default or --gen KIND), or read its
tables with --lfts, simulate the workload and print throughput (offered and
accepted, per node and as a fraction of the link bandwidth), latency (mean,
p50, p99; per class), VL buffer occupancy and the busiest links, next to the
analytic saturation bound of the routing for the pattern. Every figure is
over the measurement window; the verdict says whether the network accepted
the offered load (stable) or not (unstable: a source queue overflowed or
the window accepted less than 95 % of its offer). A deadlock stops the run;
the cycle of blocked buffers is printed and the exit status is 1.

Tables read with --lfts are verified as engine output is (delivery, no
loops, acyclic channel dependencies per VL) and refused when they fail;
--unsafe simulates them anyway, after a warning. Uniform traffic never
sends a node's messages to itself.

--policy routes per hop instead of by the LFT: min (least occupied minimal
port), lar/lar-toward (seed 000 Algorithm 1), val, ugal, conditional (seed
002), pora-literal/pora-minimal (seed 004, --gen novacube); with switch
groups the minimal ports are the two-level tables'. --vc-policy assigns
every hop's VL by a vcpolicy rule instead of SL2VL. The bound walks LFT
paths and is skipped under a policy.

Patterns: ` + strings.Join(flitsim.Patterns(), ", ") + `.
Engines: ` + strings.Join(routing.Names(), ", ") + `.`,
		Example: `  flitsim run --default --engine ftree --traffic uniform --load 0.9
  flitsim run --gen fattree --gen-param k=4 --gen-param n=2 --engine ftree --traffic shift
  flitsim run --gen dragonfly --gen-param p=2 --gen-param a=4 --gen-param h=2 --engine nue \
      --traffic nextgroup --load 0.3 --json -
  flitsim run fabric.topo --lfts out/ --traffic io --io-every 8 --io-ratio 0.1 --arrival exponential
  flitsim run --gen rsi --gen-param layer1=BR --gen-param supernodes=8 --engine dfsssp \
      --traffic grouphotspot --load 1 --policy lar --lar-threshold 0.6 --vc-policy hops:7
  flitsim run --gen dragonfly --gen-param p=4 --gen-param a=8 --gen-param h=4 --engine dfsssp \
      --traffic nextgroup --load 0.8 --policy conditional --vc-policy df-2vc`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRun(cmd, args, rf) },
	}
	rf.register(c.Flags())
	return c
}

// register adds the fabric, hardware, traffic and run flags (shared by run
// and sweep).
func (rf *runFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&rf.ff.useDefault, "default", false, "use the embedded default fabric")
	fl.StringVar(&rf.ff.gen, "gen", "", "generate the fabric with this topo kind (see nuesm gen --help)")
	fl.StringArrayVar(&rf.ff.genParams, "gen-param", nil, "generator parameter name=value (repeatable), e.g. dims=8x8")
	fl.StringVar(&rf.ff.engines, "engine", "nue", "routing engine or fallback chain, e.g. nue,updn")
	fl.IntVar(&rf.ff.vls, "vls", routing.DefaultMaxVLs, "VL limit for the engine")
	fl.StringVar(&rf.ff.root, "root", "", "root switch for updn/ftree: node GUID (0x…) or description (default: the engine chooses)")
	fl.StringVar(&rf.ff.lfts, "lfts", "", "read tables instead of routing: a directory written by nuesm route, or an LFT dump (verified like engine output: refused when cyclic unless --unsafe)")
	fl.IntVar(&rf.ff.fail.Links, "fail-links", 0, "remove this many switch-to-switch cables before routing")
	fl.Float64Var(&rf.ff.fail.LinkFraction, "fail-link-fraction", 0, "remove this fraction (0..1) of switch-to-switch cables before routing")
	fl.Uint64Var(&rf.ff.fail.Seed, "fail-seed", 1, "seed of the failure injection")
	fl.BoolVar(&rf.ff.fail.SkipCritical, "skip-critical", false, "skip failures that would disconnect hosts (fail-in-place)")
	fl.BoolVar(&rf.ff.unsafe, "unsafe", false, "simulate the first engine's tables (or the --lfts tables) even if the verifier rejects them (to watch deadlocks)")

	fl.StringVar(&rf.switching, "switching", "vct", "vct (virtual cut-through) or wormhole")
	fl.StringVar(&rf.queueing, "queueing", "voq", "input buffer organisation: voq or fifo")
	fl.StringVar(&rf.allocator, "allocator", "rr", "crossbar allocator: rr or islip")
	fl.IntVar(&rf.iterations, "iterations", 2, "iSLIP iterations")
	fl.IntVar(&rf.packetFlits, "packet-flits", 8, "packet size (MTU) in flits")
	fl.IntVar(&rf.flitBytes, "flit-bytes", 256, "flit size in bytes (for reporting and VL arbitration weights)")
	fl.IntVar(&rf.buffer, "buffer-flits", 0, "input buffer depth per VL in flits (0 = 4 packets)")
	fl.StringVar(&rf.linkLatency, "link-latency", "1", "link latency: cycles, or nanoseconds as 40ns (needs --link-gbps)")
	fl.StringVar(&rf.globalLatency, "global-latency", "", "latency of channels between switch groups (Dragonfly global cables): cycles or ns; default --link-latency")
	fl.StringVar(&rf.injectLatency, "inject-latency", "", "latency of the links between nodes and switches: cycles or ns; default --link-latency")
	fl.Float64Var(&rf.linkGbps, "link-gbps", 0, "link rate in Gb/s: converts ns to cycles (a cycle carries one flit) and reports latencies in ns (0: latencies in cycles)")
	fl.IntVar(&rf.pipeline, "pipeline-delay", 0, "switch pipeline delay in cycles (latency only)")
	fl.IntVar(&rf.routeStall, "route-stall", 0, "cycles a packet spends in route computation and VC allocation, blocking its input VC (BookSim2's routing_delay + vc_alloc_delay)")
	fl.Float64Var(&rf.bandwidth, "bandwidth", 1, "link bandwidth in flits per cycle, (0, 1]")
	fl.IntVar(&rf.simVLs, "sim-vls", 0, "VLs to simulate (0 = what the routing uses)")
	fl.IntVar(&rf.vcsPerVL, "vcs-per-vl", 1, "interchangeable VCs per VL, each with its own buffer (a VC pool per routing class, as BookSim2's num_vcs)")
	fl.StringVar(&rf.arbHigh, "vlarb-high", "", "high-priority VL arbitration table, VL:weight list, e.g. 0:255 (neither table: round-robin between VLs, flit by flit)")
	fl.StringVar(&rf.arbLow, "vlarb-low", "", "low-priority VL arbitration table, e.g. 1:64,2:64")
	fl.IntVar(&rf.arbLimit, "vlarb-limit", 255, "limit of high priority in 4 KiB units (255 = none)")

	fl.StringVar(&rf.traffic, "traffic", "uniform", "traffic pattern")
	fl.Float64Var(&rf.load, "load", 0.5, "offered load per sending node, fraction of the link bandwidth")
	fl.StringVar(&rf.arrival, "arrival", "bernoulli", "inter-arrival process: bernoulli, exponential or weibull")
	fl.Float64Var(&rf.weibull, "weibull-shape", 1, "shape of Weibull inter-arrival times")
	fl.IntVar(&rf.msgPackets, "message-packets", 1, "packets per message")
	fl.IntVar(&rf.messages, "messages", 0, "messages per source (finite run; 0 = open loop)")
	fl.BoolVar(&rf.sync, "sync", false, "shift: pairwise exchange, wait for the phase's incoming message")
	fl.Int32Var(&rf.hotNode, "hot-node", 0, "hotspot: destination node index")
	fl.Float64Var(&rf.hotFraction, "hot-fraction", 0.1, "hotspot: fraction of messages to the hot node")
	fl.IntVar(&rf.groupOffset, "group-offset", 1, "nextgroup: target group offset")
	fl.IntVar(&rf.srcGroup, "src-group", 0, "grouphotspot: sending group")
	fl.IntVar(&rf.dstGroup, "dst-group", 1, "grouphotspot: receiving group")
	fl.IntVar(&rf.ioEvery, "io-every", 8, "io: node i with i mod K = 0 is an I/O node serving the K-1 nodes after it")
	fl.Float64Var(&rf.ioRatio, "io-ratio", 0.1, "io: fraction of messages that are I/O")
	fl.IntVar(&rf.ioPackets, "io-message-packets", 4, "io: packets per I/O message")
	fl.IntVar(&rf.ioVLOffset, "io-vl-offset", 0, "io: VL offset of the I/O class")
	registerRoles(fl, rf)

	fl.Uint64Var(&rf.seed, "seed", 1, "seed of the run (and of engines with random choices)")
	fl.Int64Var(&rf.warmup, "warmup", 1000, "warm-up cycles")
	fl.Int64Var(&rf.cycles, "cycles", 10000, "measurement window in cycles")
	fl.Int64Var(&rf.drain, "drain", 0, "cycles to drain measured packets (0 = --cycles)")
	fl.Int64Var(&rf.maxCycles, "max-cycles", 10_000_000, "bound of finite runs")
	fl.Int64Var(&rf.window, "deadlock-window", 2000, "cycles without progress before a buffer counts as blocked (negative: no detection)")
	fl.IntVar(&rf.sourceQueue, "source-queue", flitsim.DefaultSourceQueue, "packets a source may queue; beyond, messages are refused and the run is unstable (negative: no bound)")
	fl.BoolVar(&rf.stopUnstable, "stop-unstable", false, "end a run at its first refused message after the warm-up (verdict unstable)")
	fl.StringVar(&rf.jsonOut, "json", "", "also write the result (and bound) as JSON to FILE (\"-\" for stdout)")
	fl.IntVar(&rf.busiest, "busiest", 5, "links to list in the table")
	fl.StringVar(&rf.linkLoads, "link-loads", "", "also write every link's load in the window as CSV to FILE (nuesm dot --loads draws it)")
	fl.BoolVar(&rf.noBound, "no-bound", false, "skip the analytic bound (O(N²) for N nodes)")
	rf.pf.register(fl)
}

// latencies sets the link latency classes of cfg (l's groups for the
// global class).
func (rf *runFlags) latencies(cfg *flitsim.Config, l *loaded) error {
	if rf.linkGbps < 0 {
		return fmt.Errorf("--link-gbps %g, expected > 0", rf.linkGbps)
	}
	ns := 0.0
	if rf.linkGbps > 0 {
		ns = flitsim.NsPerCycle(max(rf.flitBytes, 1), rf.linkGbps)
	}
	cfg.NsPerCycle = ns
	var err error
	if cfg.LinkLatency, err = flitsim.ParseCycles(rf.linkLatency, ns); err != nil {
		return fmt.Errorf("--link-latency: %w", err)
	}
	if rf.injectLatency != "" {
		if cfg.InjectLatency, err = flitsim.ParseCycles(rf.injectLatency, ns); err != nil {
			return fmt.Errorf("--inject-latency: %w", err)
		}
	}
	if rf.globalLatency == "" {
		return nil
	}
	global, err := flitsim.ParseCycles(rf.globalLatency, ns)
	if err != nil {
		return fmt.Errorf("--global-latency: %w", err)
	}
	if l.groups == nil {
		return fmt.Errorf("--global-latency needs switch groups: generate the fabric with --gen (dragonfly, rsi…)")
	}
	cfg.ChannelLatency, err = flitsim.GroupLatencies(l.g, l.groups, cfg.LinkLatency, global)
	return err
}

func (rf *runFlags) config(l *loaded) (flitsim.Config, error) {
	var cfg flitsim.Config
	var err error
	// The simulator reads 0 as "its default" (1,000 warm-up cycles,
	// 10,000 measured, 10 M in all): an explicit 0 would silently be that.
	for _, c := range []struct {
		name string
		v    int64
	}{{"--warmup", rf.warmup}, {"--cycles", rf.cycles}, {"--max-cycles", rf.maxCycles}} {
		if c.v < 1 {
			return cfg, fmt.Errorf("%s %d: expected at least 1 cycle", c.name, c.v)
		}
	}
	if cfg.Switching, err = flitsim.ParseSwitching(rf.switching); err != nil {
		return cfg, err
	}
	if cfg.Queueing, err = flitsim.ParseQueueing(rf.queueing); err != nil {
		return cfg, err
	}
	if cfg.Allocator, err = flitsim.ParseAllocator(rf.allocator); err != nil {
		return cfg, err
	}
	cfg.Iterations, cfg.PacketFlits, cfg.FlitBytes, cfg.BufferFlits = rf.iterations, rf.packetFlits, rf.flitBytes, rf.buffer
	cfg.PipelineDelay, cfg.RouteStall, cfg.LinkBandwidth, cfg.VLs = rf.pipeline, rf.routeStall, rf.bandwidth, rf.simVLs
	cfg.VCsPerVL = rf.vcsPerVL
	if err := rf.latencies(&cfg, l); err != nil {
		return cfg, err
	}
	if rf.arbHigh != "" || rf.arbLow != "" {
		a := &flitsim.VLArbitration{HighLimit: rf.arbLimit}
		if a.High, err = flitsim.ParseVLWeights(rf.arbHigh); err != nil {
			return cfg, err
		}
		if a.Low, err = flitsim.ParseVLWeights(rf.arbLow); err != nil {
			return cfg, err
		}
		cfg.VLArb = a
	}
	return cfg, nil
}

func (rf *runFlags) workload(l *loaded, n *flitsim.Network) (flitsim.Traffic, error) {
	tr := flitsim.Traffic{Load: rf.load, WeibullShape: rf.weibull, MessagePackets: rf.msgPackets, Messages: rf.messages,
		ShiftSync: rf.sync, HotNode: rf.hotNode, HotFraction: rf.hotFraction, GroupOffset: rf.groupOffset,
		SrcGroup: rf.srcGroup, DstGroup: rf.dstGroup, IORatio: rf.ioRatio}
	var err error
	if tr.Pattern, err = flitsim.ParsePattern(rf.traffic); err != nil {
		return tr, err
	}
	if tr.Arrival, err = flitsim.ParseArrival(rf.arrival); err != nil {
		return tr, err
	}
	switch tr.Pattern {
	case flitsim.NextGroup, flitsim.GroupHotSpot, flitsim.GroupLocal:
		if l.groups == nil {
			return tr, usageError(fmt.Errorf("traffic %s needs switch groups: generate the fabric with --gen (dragonfly, rsi…)", tr.Pattern))
		}
		tr.Groups = l.groups
	case flitsim.IO:
		if rf.roles != "" {
			tr.IONode, err = rolesIONodes(rf.roles, n)
			err = inputError(err) // the roles file's content, not a flag
		} else {
			tr.IONode, err = n.IONodesEvery(rf.ioEvery)
		}
		if err != nil {
			return tr, err
		}
		tr.Classes = []flitsim.Class{{}, {MessagePackets: rf.ioPackets, VLOffset: rf.ioVLOffset}}
	}
	return tr, nil
}

// options are the run options of the flags (the seed is the caller's).
func (rf *runFlags) options() flitsim.RunOptions {
	return flitsim.RunOptions{Warmup: rf.warmup, Measure: rf.cycles, Drain: rf.drain, MaxCycles: rf.maxCycles,
		DeadlockWindow: rf.window, SourceQueue: rf.sourceQueue, StopUnstable: rf.stopUnstable}
}

// output is the JSON document.
type output struct {
	Fabric string          `json:"fabric"`
	Result *flitsim.Result `json:"result"`
	Bound  *flitsim.Bound  `json:"bound,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func runRun(cmd *cobra.Command, args []string, rf runFlags) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	rf.ff.seed = rf.seed
	l, err := load(ctx, stderr, args, rf.ff)
	if err != nil {
		return err
	}
	cfg, err := rf.config(l)
	if err != nil {
		return usageError(err)
	}
	n, err := flitsim.NewNetwork(l.g, l.r, cfg)
	if err != nil {
		return err
	}
	specs, err := rf.pf.specs()
	if err != nil {
		return usageError(err)
	}
	if len(specs) != 1 {
		return usageError(fmt.Errorf("--policy: run takes one policy, got %d (sweep compares several)", len(specs)))
	}
	if n, err = specs[0].Apply(n, rf.pf.env(l)); err != nil {
		return err
	}
	tr, err := rf.workload(l, n)
	if err != nil {
		return err
	}
	var b *flitsim.Bound
	if !rf.noBound && specs[0].Plain() { // the bound walks the LFT paths
		if b, err = n.Bound(tr, rf.seed); err != nil {
			return err
		}
	}
	opt := rf.options()
	opt.Seed = rf.seed
	res, runErr := n.Run(ctx, tr, opt)
	var dl *flitsim.DeadlockError
	if runErr != nil && !errors.As(runErr, &dl) {
		return runErr
	}
	fmt.Fprintf(out, "fabric           %s: %d switches, %d nodes, %d links\n", l.name, l.g.NumSwitches(), n.NumNodes(), n.NumLinks())
	if err := res.WriteTable(out, rf.busiest); err != nil {
		return err
	}
	if res.Policy != "" {
		fmt.Fprintf(out, "policy           %s: %d measured packets misrouted, %.3f switch hops per packet, %d hops beyond the VC policy\n",
			res.Policy, res.Misrouted, res.MeanHops, res.VCOverflow)
	}
	if b != nil {
		b.WriteLines(out, res, n.Config().LinkBandwidth)
	}
	if rf.linkLoads != "" {
		if err := atomicfile.WriteFile(rf.linkLoads, func(w io.Writer) error { return n.WriteLinkLoads(w, res) }, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", rf.linkLoads, err)
		}
	}
	if rf.jsonOut != "" {
		doc := output{Fabric: l.name, Result: res, Bound: b}
		if runErr != nil {
			doc.Error = runErr.Error()
		}
		if err := writeJSON(out, rf.jsonOut, doc); err != nil {
			return err
		}
	}
	if dl != nil {
		// The table shows the cycle; keep the error short.
		return unsafeError(fmt.Errorf("deadlock at cycle %d (wait-for cycle of %d buffers): %w", dl.Cycle, len(dl.Resources), flitsim.ErrDeadlock))
	}
	return nil
}

// writeJSON writes v to path, "-" for stdout.
func writeJSON(stdout io.Writer, path string, v any) error {
	if path == "-" {
		return flitsim.EncodeJSON(stdout, v)
	}
	return flitsim.WriteJSONFile(path, v)
}
