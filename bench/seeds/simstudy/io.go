package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nuesm/nuesm/flitsim"
	fplot "github.com/nuesm/nuesm/flitsim/plot"
	"github.com/nuesm/nuesm/studies/placement"
	"gonum.org/v1/plot/vg"
)

// ioSetup is the hardware and workload of seed 003's simulations: 256-bit
// (32-byte) flits, 32-flit packets (1 KiB), a compute message is one
// packet (the seed's 32 flits), an I/O message four (128 flits), virtual
// cut-through, buffers of 4 packets per VL, exponential arrivals, DOR
// with its two dateline VLs; compute on VLs 0-1, I/O on VLs 2-3 (VL
// offset 2), 4 VLs (the seed has 8 VCs).
type ioSetup struct {
	dims     []string
	ratios   []float64
	loads    []float64
	schedDim string
	schedRat []float64
	schedLd  []float64
	failDim  string
	failMax  int
	warmup   int64
	measure  int64
	workers  int
}

func fullIO() ioSetup {
	return ioSetup{
		dims: []string{"8x8", "8x4", "4x4x4"}, ratios: []float64{0.1, 0.2}, loads: loadRange(0.05, 1, 0.05),
		schedDim: "8x8", schedRat: []float64{0.2, 0.4}, schedLd: loadRange(0.05, 0.6, 0.05),
		failDim: "4x4x4", failMax: 4, warmup: 3000, measure: 12000,
	}
}

// arbVariant is one router QoS setting.
type arbVariant struct {
	name  string
	arb   *flitsim.VLArbitration // nil = round-robin
	ioOff int                    // VL offset of the I/O class
}

// arbVariants: round-robin with both classes on the same VLs (no QoS) or
// on their own, and compute first (high-priority VLs 0-1, I/O low on 2-3)
// with I/O let through after N compute messages: the IB limit counts 4 KiB
// units of high-priority data sent while low waits, a compute message is
// 1 KiB, so N = 4·limit (limit 0: one packet, N = 1); limit 255 never
// forces I/O through (I/O only when no compute waits).
func arbVariants() []arbVariant {
	prio := func(limit int) *flitsim.VLArbitration {
		return &flitsim.VLArbitration{
			High:      []flitsim.VLWeight{{VL: 0, Weight: 255}, {VL: 1, Weight: 255}},
			Low:       []flitsim.VLWeight{{VL: 2, Weight: 255}, {VL: 3, Weight: 255}},
			HighLimit: limit,
		}
	}
	return []arbVariant{
		{"shared VLs, round-robin", nil, 0},
		{"own VLs, round-robin", nil, 2},
		{"prio N=1 (limit 0)", prio(0), 2},
		{"prio N=4 (limit 1)", prio(1), 2},
		{"prio N=16 (limit 4)", prio(4), 2},
		{"strict (limit 255)", prio(255), 2},
	}
}

func ioConfig(arb *flitsim.VLArbitration) flitsim.Config {
	return flitsim.Config{PacketFlits: 32, FlitBytes: 32, VLs: 4, VLArb: arb}
}

func ioTraffic(ion []int32, ratio, load float64) flitsim.Traffic {
	return ioTrafficOff(ion, ratio, load, 2)
}

// ioTrafficOff is ioTraffic with the I/O class on VL offset off (0: the
// compute VLs, shared).
func ioTrafficOff(ion []int32, ratio, load float64, off int) flitsim.Traffic {
	return flitsim.Traffic{Pattern: flitsim.IO, Arrival: flitsim.Exponential, Load: load, MessagePackets: 1,
		IONode: ion, IORatio: ratio, Classes: []flitsim.Class{{}, {MessagePackets: 4, VLOffset: off}}}
}

// ioTargets maps an assignment onto n (torus node i = switch i).
func ioTargets(n *flitsim.Network, a *placement.Assignment) ([]int32, error) {
	serve := make([]int, len(a.Of))
	for i := range serve {
		serve[i] = a.Of[i] // itself for I/O, -1 for failed
	}
	return n.IONodesBySwitch(serve)
}

// placements returns RQP t=1, QP t=1 and the base plane with as many I/O
// nodes as RQP. QP is the seed's (the cited k-resource scheme) where it
// exists (k×k tori with a quasi-perfect code; §5.2.1 compares QP on 8×8
// only); elsewhere the greedy packing qp-greedy stands in, named as such
// in every table.
func placements(dims string) ([]*placement.Assignment, error) {
	t, err := placement.ParseDims(dims)
	if err != nil {
		return nil, err
	}
	qp := "qp"
	if _, err := placement.QP(t, 1); errors.Is(err, placement.ErrNoQP) {
		qp = "qp-greedy"
	}
	var out []*placement.Assignment
	w := 0
	for _, m := range []string{"rqp", qp, "base"} {
		p, err := placement.Build(t, m, 1, w)
		if err != nil {
			return nil, err
		}
		if m == "rqp" {
			w = len(p.IO)
		}
		a, err := placement.Assign(p)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// curve is one load sweep's measurements.
type curve struct {
	label                      string
	offered, accepted          []float64
	lat, latC, latIO, p99C     []float64
	bound                      float64
	sat, peak                  float64
	maxLoad, ioNodes, maxDist  int
	meanDist                   float64
	failed                     []string
	ratio                      float64
	dims, method, arbitrations string
}

// sweepCurves runs every (network, traffic(load)) of the specs and fills
// the curves.
type curveSpec struct {
	c    *curve
	net  *flitsim.Network
	tr   func(load float64) flitsim.Traffic
	load []float64
}

func runCurves(ctx context.Context, specs []curveSpec, s ioSetup) error {
	var jobs []job
	for _, sp := range specs {
		for _, l := range sp.load {
			jobs = append(jobs, job{net: sp.net, tr: sp.tr(l), opt: flitsim.RunOptions{Seed: 1, Warmup: s.warmup, Measure: s.measure}})
		}
		b, err := sp.net.Bound(sp.tr(0.5), 1)
		if err != nil {
			return err
		}
		sp.c.bound = b.Saturation
	}
	res, err := runAll(ctx, jobs, s.workers)
	if err != nil {
		return err
	}
	k := 0
	for _, sp := range specs {
		c := sp.c
		for range sp.load {
			r := res[k]
			k++
			c.offered = append(c.offered, r.OfferedFraction)
			c.accepted = append(c.accepted, r.AcceptedFraction)
			c.lat = append(c.lat, r.Latency.Mean)
			lc, lio, p99 := 0.0, 0.0, 0.0
			for _, cl := range r.Classes {
				switch cl.Name {
				case "compute":
					lc, p99 = cl.Latency.Mean, float64(cl.Latency.P99)
				case "io":
					lio = cl.MessageLatency.Mean
				}
			}
			c.latC, c.latIO, c.p99C = append(c.latC, lc), append(c.latIO, lio), append(c.p99C, p99)
		}
		c.sat, c.peak = saturation(c.offered, c.accepted, c.lat)
	}
	return nil
}

func describe(c *curve, a *placement.Assignment) {
	ls := a.Loads()
	c.maxLoad = slices.Max(ls)
	for i, v := range a.Of {
		if v == i {
			c.ioNodes++
		}
		if v >= 0 && v != i {
			c.maxDist = max(c.maxDist, a.Dist[i])
		}
	}
	c.meanDist = a.MeanDist()
}

// runIO runs the three parts of the I/O study and writes the report to md
// and CSV and SVG files to dir. The parts only build their curves and
// specs; all simulations run in one pool so the workers stay busy across
// parts.
func runIO(ctx context.Context, s ioSetup, dir string, md io.Writer) error {
	place, specs, err := placementCurves(ctx, s)
	if err != nil {
		return err
	}
	sched, sp, err := priorityCurves(ctx, s)
	if err != nil {
		return err
	}
	specs = append(specs, sp...)
	fails, sp, err := failureCurves(ctx, s)
	if err != nil {
		return err
	}
	specs = append(specs, sp...)
	if err := runCurves(ctx, specs, s); err != nil {
		return err
	}
	if err := writeIOCSV(filepath.Join(dir, "io.csv"), place, sched, fails); err != nil {
		return err
	}
	return writeIOReport(dir, md, s, place, sched, fails)
}

// ioTorus routes the dims torus (one node per router) with DOR and its two
// dateline VLs, the fabric of every part of the I/O study.
func ioTorus(ctx context.Context, dims string) (*routed, error) {
	return route(ctx, "torus", map[string]string{"dims": dims, "hosts": "1"}, "dor", 2)
}

// placementCurves is part 1: every placement of every torus at every I/O
// ratio, round-robin arbitration.
func placementCurves(ctx context.Context, s ioSetup) ([]*curve, []curveSpec, error) {
	var place []*curve
	var specs []curveSpec
	for _, d := range s.dims {
		rt, err := ioTorus(ctx, d)
		if err != nil {
			return nil, nil, err
		}
		n, err := flitsim.NewNetwork(rt.g, rt.r, ioConfig(nil))
		if err != nil {
			return nil, nil, err
		}
		as, err := placements(d)
		if err != nil {
			return nil, nil, err
		}
		for _, ratio := range s.ratios {
			for _, a := range as {
				ion, err := ioTargets(n, a)
				if err != nil {
					return nil, nil, err
				}
				c := &curve{dims: d, method: a.P.Method, ratio: ratio, label: a.P.Method}
				describe(c, a)
				place = append(place, c)
				specs = append(specs, curveSpec{c: c, net: n, load: s.loads, tr: func(l float64) flitsim.Traffic { return ioTraffic(ion, ratio, l) }})
			}
		}
	}
	return place, specs, nil
}

// priorityCurves is part 2: router priority (every arbitration variant) on
// the RQP placement of the schedDim torus.
func priorityCurves(ctx context.Context, s ioSetup) ([]*curve, []curveSpec, error) {
	var sched []*curve
	var specs []curveSpec
	rt, err := ioTorus(ctx, s.schedDim)
	if err != nil {
		return nil, nil, err
	}
	as, err := placements(s.schedDim)
	if err != nil {
		return nil, nil, err
	}
	for _, ratio := range s.schedRat {
		for _, v := range arbVariants() {
			n, err := flitsim.NewNetwork(rt.g, rt.r, ioConfig(v.arb))
			if err != nil {
				return nil, nil, err
			}
			ion, err := ioTargets(n, as[0])
			if err != nil {
				return nil, nil, err
			}
			c := &curve{dims: s.schedDim, method: "rqp", ratio: ratio, label: v.name, arbitrations: v.name}
			describe(c, as[0])
			sched = append(sched, c)
			off := v.ioOff
			specs = append(specs, curveSpec{c: c, net: n, load: s.schedLd, tr: func(l float64) flitsim.Traffic { return ioTrafficOff(ion, ratio, l, off) }})
		}
	}
	return sched, specs, nil
}

// failureCurves is part 3: the first 0..failMax I/O nodes of the RQP
// placement of the failDim torus fail and their compute nodes fail over.
func failureCurves(ctx context.Context, s ioSetup) ([]*curve, []curveSpec, error) {
	var fails []*curve
	var specs []curveSpec
	rt, err := ioTorus(ctx, s.failDim)
	if err != nil {
		return nil, nil, err
	}
	n, err := flitsim.NewNetwork(rt.g, rt.r, ioConfig(nil))
	if err != nil {
		return nil, nil, err
	}
	as, err := placements(s.failDim)
	if err != nil {
		return nil, nil, err
	}
	base := as[0]
	for _, ratio := range s.ratios {
		for k := 0; k <= s.failMax && k < len(base.P.IO); k++ {
			a := base
			if k > 0 {
				if a, _, err = placement.Failover(base, base.P.IO[:k]); err != nil {
					return nil, nil, err
				}
			}
			ion, err := ioTargets(n, a)
			if err != nil {
				return nil, nil, err
			}
			c := &curve{dims: s.failDim, method: "rqp", ratio: ratio, label: fmt.Sprintf("%d failed", k)}
			for _, f := range base.P.IO[:k] {
				c.failed = append(c.failed, base.P.Torus.Label(f))
			}
			describe(c, a)
			fails = append(fails, c)
			specs = append(specs, curveSpec{c: c, net: n, load: s.loads, tr: func(l float64) flitsim.Traffic { return ioTraffic(ion, ratio, l) }})
		}
	}
	return fails, specs, nil
}

func writeIOCSV(path string, parts ...[]*curve) error {
	var b strings.Builder
	b.WriteString("part,dims,method,arbitration,failed,io_ratio,offered,accepted,latency_mean,compute_latency_mean,compute_latency_p99,io_message_latency_mean,bound\n")
	for p, cs := range parts {
		part := []string{"placement", "priority", "failures"}[p]
		for _, c := range cs {
			for i := range c.offered {
				fmt.Fprintf(&b, "%s,%s,%s,%s,%d,%g,%.4f,%.4f,%.1f,%.1f,%.0f,%.1f,%.4f\n", part, c.dims, c.method, c.arbitrations,
					len(c.failed), c.ratio, c.offered[i], c.accepted[i], c.lat[i], c.latC[i], c.p99C[i], c.latIO[i], c.bound)
			}
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeIOReport writes the three parts' Markdown sections to md and their
// plots to dir.
func writeIOReport(dir string, md io.Writer, s ioSetup, place, sched, fails []*curve) error {
	if err := writeIOPlacement(dir, md, place); err != nil {
		return err
	}
	if err := writeIOPriority(dir, md, s, sched); err != nil {
		return err
	}
	return writeIOFailures(dir, md, s, fails)
}

// writeIOPlacement writes part 1: the saturation table, the knee bar chart
// and one latency–load plot per torus and ratio (place holds the
// placements of each torus and ratio in threes, rqp, qp, base).
func writeIOPlacement(dir string, md io.Writer, place []*curve) error {
	base := filepath.Base(dir)
	fmt.Fprintf(md, "### Saturation: RQP vs QP vs base\n\n")
	fmt.Fprintf(md, "Knee = the highest offered load (fraction of the link bandwidth per compute node) up to\n")
	fmt.Fprintf(md, "which the mean latency stays within 3× its value at the lowest load; peak = the highest accepted\n")
	fmt.Fprintf(md, "throughput; bound = the analytic 1/max channel load of the pattern (I/O-node ejection\n")
	fmt.Fprintf(md, "links included). I/O = I/O nodes, load = most compute nodes one I/O node serves, dist =\n")
	fmt.Fprintf(md, "largest Lee distance to the serving I/O node.\n\n")
	var rows [][]string
	for _, c := range place {
		rows = append(rows, []string{c.dims, fmt.Sprintf("%.0f %%", 100*c.ratio), c.method, fmt.Sprint(c.ioNodes), fmt.Sprint(c.maxLoad),
			fmt.Sprint(c.maxDist), f2(c.sat), f3(c.peak), f3(c.bound)})
	}
	table(md, []string{"torus", "I/O ratio", "placement", "I/O", "load", "dist", "knee", "peak", "bound"}, rows)
	fmt.Fprintln(md)
	var groups []string
	vals := make([][]float64, 3)
	for i := 0; i < len(place); i += 3 {
		groups = append(groups, fmt.Sprintf("%s %.0f%%", place[i].dims, 100*place[i].ratio))
		for m := 0; m < 3 && i+m < len(place); m++ {
			vals[m] = append(vals[m], place[i+m].sat)
		}
	}
	p, err := fplot.Grouped("Saturation (knee) by placement", "offered load at the knee", groups, []string{"rqp", "qp (qp-greedy off 8×8)", "base"}, vals)
	if err != nil {
		return err
	}
	if err := fplot.SaveFigure(p, filepath.Join(dir, "io-saturation.svg"), 7*vg.Inch, 4*vg.Inch); err != nil {
		return err
	}
	fmt.Fprintf(md, "![saturation by placement](%s/io-saturation.svg)\n\n", base)
	fmt.Fprintf(md, "Latency–load curves (mean packet latency, both classes):")
	for i := 0; i < len(place); i += 3 {
		c := place[i]
		name := fmt.Sprintf("io-latency-%s-%02.0f.svg", c.dims, 100*c.ratio)
		var ss []series
		for _, x := range place[i:min(i+3, len(place))] {
			ss = append(ss, series{name: x.method, x: x.offered, y: x.lat})
		}
		if err := linePlot(filepath.Join(dir, name), fmt.Sprintf("%s torus, I/O ratio %.0f %%", c.dims, 100*c.ratio), "offered load", "mean latency (cycles)", ss, true); err != nil {
			return err
		}
		fmt.Fprintf(md, " [%s %.0f %%](%s/%s)", c.dims, 100*c.ratio, base, name)
	}
	fmt.Fprintf(md, ".\n\n")
	return nil
}

// writeIOPriority writes part 2: per I/O ratio, compute and I/O latency at
// a few loads for every arbitration variant, and their compute latency plot.
func writeIOPriority(dir string, md io.Writer, s ioSetup, sched []*curve) error {
	base := filepath.Base(dir)
	fmt.Fprintf(md, "### Router priority (compute first) on %s RQP\n\n", s.schedDim)
	fmt.Fprintf(md, "Compute latency (mean and p99 of compute packets) and I/O message latency (mean), in\n")
	fmt.Fprintf(md, "cycles, at a few offered loads; knee as above (all traffic).\n\n")
	pick := []float64{0.2, 0.3, 0.4}
	for _, ratio := range s.schedRat {
		var rows [][]string
		var ss []series
		for _, c := range sched {
			if c.ratio != ratio {
				continue
			}
			row := []string{c.label}
			for _, l := range pick {
				i := slices.IndexFunc(s.schedLd, func(x float64) bool { return x > l-1e-9 && x < l+1e-9 })
				if i < 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, fmt.Sprintf("%s / %s / %s", f1(c.latC[i]), fmt.Sprint(c.p99C[i]), f1(c.latIO[i])))
			}
			row = append(row, f2(c.sat))
			rows = append(rows, row)
			ss = append(ss, series{name: c.label, x: c.offered, y: c.latC})
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(md, "I/O ratio %.0f %%:\n\n", 100*ratio)
		h := []string{"arbitration"}
		for _, l := range pick {
			h = append(h, fmt.Sprintf("load %.1f: compute mean / p99 / I/O", l))
		}
		table(md, append(h, "knee"), rows)
		name := fmt.Sprintf("io-priority-%02.0f.svg", 100*ratio)
		if err := linePlot(filepath.Join(dir, name), fmt.Sprintf("%s RQP, I/O ratio %.0f %%: compute latency", s.schedDim, 100*ratio), "offered load", "mean compute latency (cycles)", ss, true); err != nil {
			return err
		}
		fmt.Fprintf(md, "\n![compute latency, I/O ratio %.0f %%](%s/%s)\n\n", 100*ratio, base, name)
	}
	return nil
}

// writeIOFailures writes part 3: the failure table and one latency–load
// plot per I/O ratio.
func writeIOFailures(dir string, md io.Writer, s ioSetup, fails []*curve) error {
	base := filepath.Base(dir)
	fmt.Fprintf(md, "### I/O-node failures on %s RQP\n\n", s.failDim)
	fmt.Fprintf(md, "The first k I/O nodes (index order) fail; their compute nodes fail over to the nearest\n")
	fmt.Fprintf(md, "healthy I/O node (package placement, X-line first); the failed nodes' routers still forward.\n\n")
	var rows [][]string
	for _, c := range fails {
		rows = append(rows, []string{fmt.Sprint(len(c.failed)), strings.Join(c.failed, " "), fmt.Sprintf("%.0f %%", 100*c.ratio),
			fmt.Sprint(c.ioNodes), fmt.Sprint(c.maxLoad), fmt.Sprint(c.maxDist), f2(c.sat), f3(c.peak), f3(c.bound)})
	}
	table(md, []string{"failed", "nodes", "I/O ratio", "I/O", "load", "dist", "knee", "peak", "bound"}, rows)
	for _, ratio := range s.ratios {
		var ss []series
		for _, c := range fails {
			if c.ratio == ratio {
				ss = append(ss, series{name: c.label, x: c.offered, y: c.lat})
			}
		}
		name := fmt.Sprintf("io-failures-%02.0f.svg", 100*ratio)
		if err := linePlot(filepath.Join(dir, name), fmt.Sprintf("%s RQP, I/O ratio %.0f %%, failed I/O nodes", s.failDim, 100*ratio), "offered load", "mean latency (cycles)", ss, true); err != nil {
			return err
		}
		fmt.Fprintf(md, "\n![failures, I/O ratio %.0f %%](%s/%s)\n", 100*ratio, base, name)
	}
	fmt.Fprintln(md)
	return nil
}

func quickIO() ioSetup {
	return ioSetup{
		dims: []string{"4x4"}, ratios: []float64{0.2}, loads: []float64{0.1, 0.3, 0.6},
		schedDim: "4x4", schedRat: []float64{0.4}, schedLd: []float64{0.2, 0.3, 0.4},
		failDim: "4x4", failMax: 1, warmup: 300, measure: 1500,
	}
}
