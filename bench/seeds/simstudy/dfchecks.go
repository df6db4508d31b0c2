package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/nuesm/nuesm/flitsim"
)

// dfCheck is one of the paper's orderings with the figures that decide it.
type dfCheck struct {
	claim   string
	holds   bool
	figures string
}

// Tolerances of the checks: "resembles" is within dfSameLatency of the
// reference's mean latency; "competitive" is at least dfCompetitive of
// the reference's peak accepted throughput.
const (
	dfSameLatency = 0.10
	dfCompetitive = 0.8
)

// checks compares the routings as §VI-B describes Fig. 12.
func (d dfReport) checks() []dfCheck {
	un, adv := flitsim.Uniform, flitsim.NextGroup
	minLoad := 1 / float64(d.s.a*d.s.p) // ADV+1 under MIN: one global cable per group pair
	return []dfCheck{
		d.sameLatency("UN: the conditional rules' latency resembles MIN's (no congestion, so no pause diverts traffic)", un, "conditional", "MIN"),
		d.higherLatency("UN: the adaptive reference (UGAL here, PB in the paper) sends part of the traffic non-minimally, so its latency is above MIN's", un, "UGAL", "MIN"),
		d.higherLatency("UN: VAL, the oblivious reference for ADV, is slower than MIN", un, "VAL", "MIN"),
		d.minCapped(minLoad),
		d.higherLatency("ADV+1: at low loads the conditional rules' latency is above VAL's (minimal paths must saturate before pauses divert traffic)", adv, "conditional", "VAL"),
		d.competitive("ADV+1: the conditional rules stay competitive with the adaptive reference", adv, "conditional", "UGAL"),
		d.competitive("ADV+1: the conditional rules stay competitive with VAL", adv, "conditional", "VAL"),
	}
}

// bothStable returns the loads of p at which a and b are both stable
// (under ADV+1 only those above MIN's capacity, where routing matters).
func (d dfReport) bothStable(p flitsim.Pattern, a, b string) []float64 {
	var out []float64
	for _, l := range d.s.loads[p] {
		if p == flitsim.NextGroup && l <= 1/float64(d.s.a*d.s.p) {
			continue
		}
		if stable(d.at(a, p, l)) && stable(d.at(b, p, l)) {
			out = append(out, l)
		}
	}
	return out
}

func (d dfReport) sameLatency(claim string, p flitsim.Pattern, a, ref string) dfCheck {
	ck := dfCheck{claim: claim, holds: true}
	var parts []string
	refStable := 0
	for _, l := range d.s.loads[p] {
		r := d.at(ref, p, l)
		if !stable(r) {
			continue
		}
		refStable++
		x := d.at(a, p, l)
		if !stable(x) {
			ck.holds = false
			parts = append(parts, fmt.Sprintf("load %g: %s unstable", l, a))
			continue
		}
		dev := latNs(x)/latNs(r) - 1
		if math.Abs(dev) > dfSameLatency {
			ck.holds = false
		}
		parts = append(parts, fmt.Sprintf("load %g: %+.1f %%, %.1f %% misrouted", l, 100*dev, 100*misroutedFraction(x)))
	}
	if refStable == 0 {
		ck.holds = false
		parts = append(parts, ref+" stable at no load")
	}
	ck.figures = fmt.Sprintf("%s against %s, within ±%.0f %% at every load %s is stable: %s", a, ref, 100*dfSameLatency, ref, strings.Join(parts, "; "))
	return ck
}

func (d dfReport) higherLatency(claim string, p flitsim.Pattern, a, ref string) dfCheck {
	ls := d.bothStable(p, a, ref)
	if p == flitsim.NextGroup && len(ls) > 2 {
		ls = ls[:2] // "under small loads"
	}
	ck := dfCheck{claim: claim, holds: len(ls) > 0}
	var parts []string
	for _, l := range ls {
		x, r := d.at(a, p, l), d.at(ref, p, l)
		if latNs(x) <= latNs(r) {
			ck.holds = false
		}
		parts = append(parts, fmt.Sprintf("load %g: %.0f vs %.0f ns", l, latNs(x), latNs(r)))
	}
	if len(ls) == 0 {
		parts = append(parts, "no load where both are stable")
	}
	ck.figures = fmt.Sprintf("%s vs %s mean latency: %s", a, ref, strings.Join(parts, "; "))
	return ck
}

// minCapped: under ADV+1 all of a group's traffic crosses its one cable to
// the next group, so MIN accepts at most 1/(a·p) per host.
func (d dfReport) minCapped(capacity float64) dfCheck {
	ck := dfCheck{claim: fmt.Sprintf("ADV+1: MIN saturates at the one global cable between consecutive groups, 1/(a·p) = %.4f per host", capacity), holds: true}
	hs, peak := d.highestStable("MIN", flitsim.NextGroup)
	if hs > capacity || peak > 1.05*capacity {
		ck.holds = false
	}
	var others []string
	for _, ro := range d.s.routings {
		if ro.name == "MIN" {
			continue
		}
		_, pk := d.highestStable(ro.name, flitsim.NextGroup)
		others = append(others, fmt.Sprintf("%s %.3f", ro.name, pk))
		if pk < 2*peak {
			ck.holds = false
		}
	}
	ck.figures = fmt.Sprintf("MIN highest stable load %g, peak accepted %.4f; the others' peaks, at least twice MIN's: %s", hs, peak, strings.Join(others, ", "))
	return ck
}

func (d dfReport) competitive(claim string, p flitsim.Pattern, a, ref string) dfCheck {
	ha, pa := d.highestStable(a, p)
	hr, pr := d.highestStable(ref, p)
	return dfCheck{claim: claim, holds: pr > 0 && pa >= dfCompetitive*pr,
		figures: fmt.Sprintf("peak accepted %s %.3f, %s %.3f, ratio %.2f (at least %.1f); highest stable load %g vs %g", a, pa, ref, pr, pa/math.Max(pr, 1e-9), dfCompetitive, ha, hr)}
}
