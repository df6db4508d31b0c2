package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/parallel"

	_ "github.com/nuesm/nuesm/studies/rsi"      // registers the two-level minimal relation
	_ "github.com/nuesm/nuesm/studies/vcpolicy" // registers the VC policies
)

// dfSetup is seed 002's simulated Dragonfly (§VI-B, Table III): a balanced
// Dragonfly (a = 2p = 2h) with the paper's link rate, packet size, switch
// latency and local/global link latencies, routed per hop by MIN, VAL,
// the conditional rules and UGAL under UN and ADV+1 traffic.
type dfSetup struct {
	p, a, h   int
	gbps      float64 // link rate, Gb/s
	flitBytes int     // one cycle carries one flit
	packet    int     // packet size in bytes (a multiple of flitBytes)
	switchNs  float64 // switch latency (the pipeline delay)
	localNs   float64 // latency of links inside a group and of host links
	globalNs  float64 // latency of links between groups
	buffer    int     // input buffer per VL, flits
	routings  []dfRouting
	loads     map[flitsim.Pattern][]float64
	warmup    int64
	measure   int64
	// sourceQueue bounds each host's queue (packets): past saturation
	// every run holds up to sourceQueue × hosts packets.
	sourceQueue int
	workers     int
	progress    io.Writer // one line per finished run (nil: none)
}

// dfRouting is one routing of the study: the paper's name and flitsim's
// policy spec (routing+VC policy).
type dfRouting struct{ name, spec string }

// dfRoutings: MIN and the conditional rules on the paper's 2 CoS levels
// (df-2vc, acyclic for minimal and source misroutes); VAL and UGAL take a
// second global hop after a local one (l-g-l-g-l) and need 3 VCs by global
// hops taken.
var dfRoutings = []dfRouting{
	{"MIN", "min+df-2vc"}, {"VAL", "val+global-hops"},
	{"conditional", "conditional+df-2vc"}, {"UGAL", "ugal+global-hops"},
}

func fullDragonfly() dfSetup {
	return dfSetup{p: 8, a: 16, h: 8, gbps: 40, flitBytes: 200, packet: 1000, switchNs: 200, localNs: 40, globalNs: 400,
		buffer: 50, routings: dfRoutings,
		loads: map[flitsim.Pattern][]float64{
			flitsim.Uniform:   {0.1, 0.3, 0.5, 0.7, 0.9},
			flitsim.NextGroup: {0.005, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5},
		},
		warmup: 1000, measure: 750, sourceQueue: 64, progress: os.Stderr}
}

func quickDragonfly() dfSetup {
	s := fullDragonfly()
	s.p, s.a, s.h = 2, 4, 2
	s.loads = map[flitsim.Pattern][]float64{flitsim.Uniform: {0.1, 0.9}, flitsim.NextGroup: {0.05, 0.2, 0.5}}
	s.warmup, s.measure, s.progress = 500, 1500, nil
	return s
}

// dfPatterns are the traffic patterns in report order: UN, ADV+1.
var dfPatterns = []flitsim.Pattern{flitsim.Uniform, flitsim.NextGroup}

// dfPoint is one simulated point.
type dfPoint struct {
	routing int
	pattern flitsim.Pattern
	load    float64
	res     *flitsim.Result
}

// config returns the hardware of the study on the routed fabric rt: the
// times of Table III converted to cycles of one flit at the link rate.
func (s dfSetup) config(rt *routed) (flitsim.Config, error) {
	ns := flitsim.NsPerCycle(s.flitBytes, s.gbps)
	cyc := func(t float64) (int, error) { return flitsim.ParseCycles(fmt.Sprintf("%gns", t), ns) }
	local, err := cyc(s.localNs)
	if err != nil {
		return flitsim.Config{}, err
	}
	global, err := cyc(s.globalNs)
	if err != nil {
		return flitsim.Config{}, err
	}
	pipe, err := cyc(s.switchNs)
	if err != nil {
		return flitsim.Config{}, err
	}
	lat, err := flitsim.GroupLatencies(rt.g, rt.tp.Group, local, global)
	if err != nil {
		return flitsim.Config{}, err
	}
	return flitsim.Config{PacketFlits: s.packet / s.flitBytes, FlitBytes: s.flitBytes, BufferFlits: s.buffer,
		PipelineDelay: pipe, LinkLatency: local, ChannelLatency: lat, NsPerCycle: ns}, nil
}

// dfNets routes the Dragonfly (Up*/Down* base tables: every hop is the
// policy's, the tables only pass the set-up's delivery check) and returns
// one network per routing.
func (s dfSetup) dfNets(ctx context.Context) ([]*flitsim.Network, *routed, error) {
	rt, err := route(ctx, "dragonfly", map[string]string{"p": fmt.Sprint(s.p), "a": fmt.Sprint(s.a), "h": fmt.Sprint(s.h)}, "updn", 1)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.config(rt)
	if err != nil {
		return nil, nil, err
	}
	base, err := flitsim.NewNetwork(rt.g, rt.r, cfg)
	if err != nil {
		return nil, nil, err
	}
	env := flitsim.PolicyEnv{Graph: rt.g, Groups: rt.tp.Group, Kind: "dragonfly", MinimalName: "two-level"}
	nets := make([]*flitsim.Network, len(s.routings))
	for i, ro := range s.routings {
		if nets[i], err = (flitsim.PolicySpec{Spec: ro.spec}).Apply(base, env); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ro.spec, err)
		}
	}
	return nets, rt, nil
}

// simulate runs every point; the per-link loads are dropped (the study
// reports none, and on 16,512 hosts they are megabytes per point).
func (s dfSetup) simulate(ctx context.Context, nets []*flitsim.Network, groups []int) ([]dfPoint, error) {
	var pts []dfPoint
	for _, p := range dfPatterns {
		for _, l := range s.loads[p] {
			for ri := range s.routings {
				pts = append(pts, dfPoint{routing: ri, pattern: p, load: l})
			}
		}
	}
	var done atomic.Int32
	t0 := time.Now()
	err := parallel.For(ctx, len(pts), s.workers, func(_, i int) error {
		pt := &pts[i]
		tr := flitsim.Traffic{Pattern: pt.pattern, Load: pt.load, Groups: groups}
		res, err := nets[pt.routing].Run(ctx, tr, flitsim.RunOptions{Seed: 1, Warmup: s.warmup, Measure: s.measure, SourceQueue: s.sourceQueue})
		if err != nil {
			return fmt.Errorf("%s %s load %g: %w", s.routings[pt.routing].name, pt.pattern, pt.load, err)
		}
		res.Links = nil
		pt.res = res
		if s.progress != nil {
			fmt.Fprintf(s.progress, "dragonfly: %d/%d %s %s load %g: %s, %.0f s\n", done.Add(1), len(pts),
				pt.pattern, s.routings[pt.routing].name, pt.load, res.Verdict, time.Since(t0).Seconds())
		}
		return nil
	})
	return pts, err
}

func runDragonfly(ctx context.Context, s dfSetup, dir string, md io.Writer) error {
	nets, rt, err := s.dfNets(ctx)
	if err != nil {
		return err
	}
	pts, err := s.simulate(ctx, nets, rt.tp.Group)
	if err != nil {
		return err
	}
	var csv strings.Builder
	csv.WriteString("routing,pattern,load,offered,accepted,accepted_min,latency_mean_ns,latency_p99_ns,network_latency_mean_ns,misrouted_fraction,mean_hops,unfinished,verdict\n")
	for _, pt := range pts {
		r := pt.res
		fmt.Fprintf(&csv, "%s,%s,%g,%.4f,%.4f,%.4f,%.0f,%.0f,%.0f,%.3f,%.3f,%d,%s\n", s.routings[pt.routing].name, pt.pattern, pt.load,
			r.OfferedFraction, r.AcceptedFraction, r.AcceptedMin, r.Latency.Mean*r.NsPerCycle, float64(r.Latency.P99)*r.NsPerCycle,
			r.NetworkLatency.Mean*r.NsPerCycle, misroutedFraction(r), r.MeanHops, r.Unfinished, r.Verdict)
	}
	if err := os.WriteFile(filepath.Join(dir, "dragonfly.csv"), []byte(csv.String()), 0o644); err != nil {
		return err
	}
	rep := dfReport{s: s, pts: pts, nodes: nets[0].NumNodes(), switches: rt.g.NumSwitches(), cfg: nets[0].Config()}
	return rep.write(md, dir)
}

// misroutedFraction is the share of the measured packets that left the
// minimal path.
func misroutedFraction(r *flitsim.Result) float64 {
	if r.Latency.Count == 0 {
		return 0
	}
	return float64(r.Misrouted) / float64(r.Latency.Count)
}
