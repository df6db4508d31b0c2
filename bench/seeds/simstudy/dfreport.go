package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/nuesm/nuesm/flitsim"
)

// dfReport writes the Dragonfly study's tables, plots and ordering checks.
type dfReport struct {
	s               dfSetup
	pts             []dfPoint
	nodes, switches int
	cfg             flitsim.Config
}

// at returns the result of routing name under pattern p at load l (nil:
// not simulated).
func (d dfReport) at(name string, p flitsim.Pattern, l float64) *flitsim.Result {
	for _, pt := range d.pts {
		if d.s.routings[pt.routing].name == name && pt.pattern == p && pt.load == l {
			return pt.res
		}
	}
	return nil
}

// stable reports whether r accepted its offered load.
func stable(r *flitsim.Result) bool { return r != nil && r.Verdict == flitsim.VerdictStable }

// latNs is r's mean latency in ns.
func latNs(r *flitsim.Result) float64 { return r.Latency.Mean * r.NsPerCycle }

// highestStable returns the highest load at which routing name is stable
// (0: none) and its peak accepted throughput under p.
func (d dfReport) highestStable(name string, p flitsim.Pattern) (load, peak float64) {
	for _, l := range d.s.loads[p] {
		r := d.at(name, p, l)
		if r == nil {
			continue
		}
		if stable(r) {
			load = max(load, l)
		}
		peak = max(peak, r.AcceptedFraction)
	}
	return load, peak
}

func (d dfReport) write(md io.Writer, dir string) error {
	c := d.cfg
	fmt.Fprintf(md, "Dragonfly p = %d, a = %d, h = %d: %d groups, %d switches of %d ports, %d hosts. ", d.s.p, d.s.a, d.s.h,
		d.s.a*d.s.h+1, d.switches, d.s.p+d.s.a-1+d.s.h, d.nodes)
	fmt.Fprintf(md, "One cycle carries one %d-byte flit at %g Gb/s: %g ns. Packets of %d bytes = %d flits; switch latency %g ns = "+
		"%s of pipeline; local and host links %g ns = %s, global links %g ns = %s; input buffers of %d flits "+
		"(%d packets) per VL; virtual cut-through, VOQ, round-robin allocation; Bernoulli arrivals of 1-packet messages, seed 1; "+
		"%d warm-up cycles, %d measured (%.0f µs), up to %d more to deliver the measured packets.\n\n",
		d.s.flitBytes, d.s.gbps, c.NsPerCycle, d.s.packet, c.PacketFlits, d.s.switchNs, cycles(c.PipelineDelay), d.s.localNs, cycles(c.LinkLatency),
		d.s.globalNs, cycles(int(math.Round(d.s.globalNs/c.NsPerCycle))), c.BufferFlits, c.BufferFlits/c.PacketFlits,
		d.s.warmup, d.s.measure, float64(d.s.measure)*c.NsPerCycle/1000, d.s.measure)
	base := filepath.Base(dir)
	for _, p := range dfPatterns {
		fmt.Fprintf(md, "**%s** (offered load per host, fraction of the link rate). Cell: mean latency in ns, accepted throughput; "+
			"\"sat.\": the run was unstable (the network did not accept the offered load; accepted throughput only).\n\n", dfPatternName(p))
		d.loadTable(md, p)
		fmt.Fprintln(md)
		if err := d.plot(dir, p); err != nil {
			return err
		}
		fmt.Fprintf(md, "![%s latency](%s/dragonfly-%s-latency.svg)\n\n", p, base, p)
	}
	fmt.Fprintf(md, "Per routing: the highest simulated load that was stable, the peak accepted throughput, and at the lowest "+
		"load the share of packets that left the minimal path and the mean switch-to-switch hops.\n\n")
	d.summaryTable(md)
	fmt.Fprintln(md)
	fmt.Fprintf(md, "The paper's orderings (§VI-B, Fig. 12), checked on the table:\n\n")
	for _, ck := range d.checks() {
		verdict := "holds"
		if !ck.holds {
			verdict = "**does not hold**"
		}
		fmt.Fprintf(md, "- %s: %s (%s).\n", ck.claim, verdict, ck.figures)
	}
	return nil
}

func cycles(n int) string {
	if n == 1 {
		return "1 cycle"
	}
	return fmt.Sprintf("%d cycles", n)
}

func dfPatternName(p flitsim.Pattern) string {
	if p == flitsim.NextGroup {
		return "ADV+1 (every host sends to a random host of the next group)"
	}
	return "UN (uniform: any other host)"
}

func (d dfReport) loadTable(md io.Writer, p flitsim.Pattern) {
	header := []string{"load"}
	for _, ro := range d.s.routings {
		header = append(header, ro.name)
	}
	var rows [][]string
	for _, l := range d.s.loads[p] {
		row := []string{fmt.Sprint(l)}
		for _, ro := range d.s.routings {
			r := d.at(ro.name, p, l)
			switch {
			case r == nil:
				row = append(row, "—")
			case stable(r):
				row = append(row, fmt.Sprintf("%.0f ns, %.3f", latNs(r), r.AcceptedFraction))
			default:
				row = append(row, fmt.Sprintf("sat., %.3f", r.AcceptedFraction))
			}
		}
		rows = append(rows, row)
	}
	table(md, header, rows)
}

func (d dfReport) summaryTable(md io.Writer) {
	var rows [][]string
	for _, p := range dfPatterns {
		low := d.s.loads[p][0]
		for _, ro := range d.s.routings {
			hs, peak := d.highestStable(ro.name, p)
			st := "none"
			if hs > 0 {
				st = fmt.Sprint(hs)
			}
			r := d.at(ro.name, p, low)
			rows = append(rows, []string{p.String(), ro.name, ro.spec, st, f3(peak), f3(misroutedFraction(r)), f2(r.MeanHops)})
		}
	}
	table(md, []string{"traffic", "routing", "flitsim policy", "highest stable load", "peak accepted", "misrouted at lowest load", "hops at lowest load"}, rows)
}

func (d dfReport) plot(dir string, p flitsim.Pattern) error {
	var ss []series
	for _, ro := range d.s.routings {
		sr := series{name: ro.name}
		for _, l := range d.s.loads[p] {
			if r := d.at(ro.name, p, l); stable(r) {
				sr.x, sr.y = append(sr.x, r.AcceptedFraction), append(sr.y, latNs(r))
			}
		}
		ss = append(ss, sr)
	}
	if !slices.ContainsFunc(ss, func(s series) bool { return len(s.x) > 0 }) {
		return nil
	}
	title := fmt.Sprintf("Dragonfly p=%d a=%d h=%d (%d hosts), %s: stable points", d.s.p, d.s.a, d.s.h, d.nodes, p)
	return linePlot(filepath.Join(dir, "dragonfly-"+p.String()+"-latency.svg"), title, "accepted throughput", "mean latency (ns)", ss, true)
}
