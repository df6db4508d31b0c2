package flitsim

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// Result holds the measurements of one run. Throughput is per active
// source (a node the pattern lets send), in flits per cycle, and as a
// fraction of the link bandwidth. Latencies are in cycles and cover the
// packets (messages) created in the measurement window, from creation to
// the arrival of the tail flit (NetworkLatency: from the head flit leaving
// the source). For finite patterns the window is the whole run.
type Result struct {
	Pattern   string  `json:"pattern"`
	Arrival   string  `json:"arrival"`
	Load      float64 `json:"offered_load"`
	Seed      uint64  `json:"seed"`
	Engine    string  `json:"engine"`
	Switching string  `json:"switching"`
	Queueing  string  `json:"queueing"`
	Allocator string  `json:"allocator"`
	VLs       int     `json:"vls"`
	Nodes     int     `json:"nodes"`
	Sources   int     `json:"sources"`

	// Verdict is VerdictStable or VerdictUnstable for open-loop runs,
	// VerdictComplete or VerdictUnfinished for finite ones, VerdictDeadlock
	// after a deadlock.
	Verdict string `json:"verdict"`

	// Every figure below is over the measurement window: cycles
	// [WindowStart, WindowStart+WindowCycles) (the whole run for finite
	// patterns). WindowCycles is 0 when the run stopped before the
	// warm-up ended; the window's figures are then 0.
	Cycles        int64 `json:"cycles"`
	WindowStart   int64 `json:"window_start"`
	WindowCycles  int64 `json:"window_cycles"`
	OfferedFlits  int64 `json:"offered_flits"`
	AcceptedFlits int64 `json:"accepted_flits"`
	// BacklogStart and BacklogEnd are the flits created and not yet
	// delivered when the window opened and closed (source queues and
	// network); RefusedFlits are the offered flits full source queues
	// refused in the window (RunOptions.SourceQueue). AcceptedFlits =
	// OfferedFlits − RefusedFlits + BacklogStart − BacklogEnd.
	BacklogStart int64 `json:"backlog_start_flits"`
	BacklogEnd   int64 `json:"backlog_end_flits"`
	RefusedFlits int64 `json:"refused_flits"`
	// Refused counts the messages refused during the whole run.
	Refused int64 `json:"refused_messages,omitempty"`
	// Offered and Accepted are flits per cycle per active source.
	Offered  float64 `json:"offered"`
	Accepted float64 `json:"accepted"`
	// AcceptedMin is the accepted throughput of the least served active
	// source (flits per cycle): beyond saturation the mean can exceed the
	// analytic bound when some sources avoid the bottleneck, their
	// minimum hardly can.
	AcceptedMin float64 `json:"accepted_min"`
	// OfferedFraction and AcceptedFraction divide by the link bandwidth.
	OfferedFraction  float64 `json:"offered_fraction"`
	AcceptedFraction float64 `json:"accepted_fraction"`
	// AcceptedBytes is Accepted in bytes per cycle per source.
	AcceptedBytes float64 `json:"accepted_bytes_per_cycle"`

	// NsPerCycle is Config.NsPerCycle (0: no conversion).
	NsPerCycle     float64      `json:"ns_per_cycle,omitempty"`
	Latency        LatencyStats `json:"latency"`
	NetworkLatency LatencyStats `json:"network_latency"`
	MessageLatency LatencyStats `json:"message_latency"`
	// Unfinished counts measured packets not delivered when the run ended.
	Unfinished int64 `json:"unfinished"`

	// Completion is the number of cycles a finite pattern took, up to and
	// including the cycle its last message arrived (0 for open-loop runs
	// or when not all arrived); Messages/MessagesDone count its messages.
	Completion   int64 `json:"completion_cycles,omitempty"`
	Messages     int64 `json:"messages,omitempty"`
	MessagesDone int64 `json:"messages_done,omitempty"`

	Classes []ClassResult `json:"classes"`
	Links   []LinkStat    `json:"links"`
	VLStats []VLStat      `json:"vl_stats"`

	// FlitHops counts flits sent over any link during the whole run.
	FlitHops int64 `json:"flit_hops"`

	Deadlock *DeadlockError `json:"deadlock,omitempty"`

	// Under a per-hop policy (Network.WithRouting): its name, the measured
	// packets that misrouted, their mean switch-to-switch hops, and the
	// hops that asked for a VC the VC policy lacks.
	Policy     string  `json:"policy,omitempty"`
	Misrouted  int64   `json:"misrouted,omitempty"`
	MeanHops   float64 `json:"mean_hops,omitempty"`
	VCOverflow int64   `json:"vc_overflow,omitempty"`
}

// ClassResult is the part of a Result for one traffic class.
type ClassResult struct {
	Name           string       `json:"name"`
	OfferedFlits   int64        `json:"offered_flits"`
	AcceptedFlits  int64        `json:"accepted_flits"`
	Accepted       float64      `json:"accepted"`
	Latency        LatencyStats `json:"latency"`
	NetworkLatency LatencyStats `json:"network_latency"`
	MessageLatency LatencyStats `json:"message_latency"`
}

// LinkStat is the use of one link in the window.
type LinkStat struct {
	Link        int32   `json:"link"`
	Kind        string  `json:"kind"`
	Name        string  `json:"name"`
	Flits       int64   `json:"flits"`
	Utilisation float64 `json:"utilisation"` // fraction of the link's bandwidth
}

// VLStat is the occupancy of the switch input buffers of one VL in the
// window: mean flits per buffer, the same as a fraction of the depth, and
// the fullest any buffer got.
type VLStat struct {
	VL           int     `json:"vl"`
	MeanFlits    float64 `json:"mean_flits"`
	MeanFraction float64 `json:"mean_fraction"`
	MaxFlits     int32   `json:"max_flits"`
}

// Verdicts of a run (Result.Verdict).
const (
	// VerdictStable: the network accepted the offered load (within 5 %
	// over the window) and no source queue overflowed.
	VerdictStable = "stable"
	// VerdictUnstable: a source queue overflowed (RunOptions.SourceQueue)
	// or the window accepted less than 95 % of what it offered: the
	// offered load is beyond saturation.
	VerdictUnstable = "unstable"
	// VerdictComplete and VerdictUnfinished: a finite pattern delivered
	// all its messages, or not within RunOptions.MaxCycles.
	VerdictComplete   = "complete"
	VerdictUnfinished = "unfinished"
	// VerdictDeadlock: the run stopped at a deadlock.
	VerdictDeadlock = "deadlock"
)

func (s *sim) result() *Result {
	n, st, t := s.n, &s.st, &s.w.tr
	if !st.stopped && st.started {
		end := s.now
		if s.finite && s.doneMsgs == s.totalMsgs {
			end = st.lastDelivery + 1
		}
		st.stop(max(end, st.start+1))
	}
	if !st.started { // stopped before the warm-up ended: an empty window
		st.start, st.end = s.opt.Warmup, s.opt.Warmup
	}
	win := max(st.end-st.start, 1)
	src := float64(s.w.sources)
	bw := s.cfg.LinkBandwidth
	res := &Result{
		Pattern: t.Pattern.String(), Arrival: t.Arrival.String(), Load: t.Load, Seed: s.opt.Seed,
		Engine: n.r.Engine, Switching: s.cfg.Switching.String(), Queueing: s.cfg.Queueing.String(),
		Allocator: s.cfg.Allocator.String(), VLs: n.vls, Nodes: n.NumNodes(), Sources: s.w.sources,
		Cycles: s.now, WindowStart: st.start, WindowCycles: st.end - st.start,
		OfferedFlits: st.offered, AcceptedFlits: st.accepted, BacklogStart: st.backlogStart, BacklogEnd: st.backlogEnd,
		RefusedFlits: st.refusedFlits, Refused: st.refused, NsPerCycle: s.cfg.NsPerCycle,
		Offered: float64(st.offered) / float64(win) / src, Accepted: float64(st.accepted) / float64(win) / src,
		Unfinished: s.outstand, FlitHops: s.flitHops, Deadlock: s.deadlock,
	}
	if t.Pattern == Shift {
		res.Load = 0
	}
	if n.pol != nil {
		res.Policy, res.Misrouted, res.VCOverflow = n.pol.name, s.misrouted, s.vcOverflow
		if s.hopPkts > 0 {
			res.MeanHops = float64(s.hopSum) / float64(s.hopPkts)
		}
	}
	res.OfferedFraction, res.AcceptedFraction = res.Offered/bw, res.Accepted/bw
	res.AcceptedMin = -1
	for i, a := range st.srcAccepted {
		if s.w.active[i] {
			if v := float64(a) / float64(win); res.AcceptedMin < 0 || v < res.AcceptedMin {
				res.AcceptedMin = v
			}
		}
	}
	res.AcceptedBytes = res.Accepted * float64(s.cfg.FlitBytes)
	if s.finite {
		res.Messages, res.MessagesDone = s.totalMsgs, s.doneMsgs
		if s.doneMsgs == s.totalMsgs {
			res.Completion = st.lastDelivery + 1
		}
	}
	res.Latency, res.NetworkLatency, res.MessageLatency = summarize(st.lat), summarize(st.netLat), summarize(st.msgLat)
	for i, c := range st.classes {
		res.Classes = append(res.Classes, ClassResult{
			Name: s.w.classes[i].Name, OfferedFlits: c.offered, AcceptedFlits: c.accepted,
			Accepted: float64(c.accepted) / float64(win) / src,
			Latency:  summarize(c.lat), NetworkLatency: summarize(c.netLat), MessageLatency: summarize(c.msgLat),
		})
	}
	for l := int32(0); l < n.nLinks; l++ {
		res.Links = append(res.Links, LinkStat{
			Link: l, Kind: n.LinkKind(l).String(), Name: n.LinkName(l), Flits: st.linkFlits[l],
			Utilisation: float64(st.linkFlits[l]) / float64(win) / bw,
		})
	}
	buffers := float64(len(n.swIn))
	for vl := 0; vl < n.vls; vl++ {
		mean := float64(st.occEnd[vl]-st.occStart[vl]) / float64(win) / buffers
		res.VLStats = append(res.VLStats, VLStat{VL: vl, MeanFlits: mean, MeanFraction: mean / float64(s.cfg.BufferFlits), MaxFlits: st.occMax[vl]})
	}
	res.Verdict = s.verdict()
	return res
}

// verdict judges the run (see the Verdict constants).
func (s *sim) verdict() string {
	st := &s.st
	switch {
	case s.deadlock != nil:
		return VerdictDeadlock
	case s.finite && s.doneMsgs == s.totalMsgs:
		return VerdictComplete
	case s.finite:
		return VerdictUnfinished
	case st.refused > 0 || 20*st.accepted < 19*st.offered:
		return VerdictUnstable
	}
	return VerdictStable
}

// BusiestLinks returns the k links with the most flits, busiest first
// (ties by link id).
func (r *Result) BusiestLinks(k int) []LinkStat {
	ls := slices.Clone(r.Links)
	slices.SortStableFunc(ls, func(a, b LinkStat) int { return cmp.Compare(b.Flits, a.Flits) })
	return ls[:min(k, len(ls))]
}

// verdictNote explains an unstable verdict.
func (r *Result) verdictNote() string {
	if r.Verdict != VerdictUnstable {
		return ""
	}
	s := fmt.Sprintf(": backlog %d flits at the window's start, %d at its end", r.BacklogStart, r.BacklogEnd)
	if r.Refused > 0 {
		s += fmt.Sprintf("; full source queues refused %d messages", r.Refused)
	}
	return s
}

// WriteTable prints a human-readable summary: throughput, latency per
// class, VL occupancy and the busiest links.
func (r *Result) WriteTable(w io.Writer, busiest int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	row("run", "%s traffic (%s), engine %s, %s/%s/%s, %d VLs, seed %d", r.Pattern, r.Arrival, r.Engine, r.Switching, r.Queueing, r.Allocator, r.VLs, r.Seed)
	row("nodes", "%d (%d sending)", r.Nodes, r.Sources)
	if r.WindowCycles == 0 {
		row("cycles", "%d simulated; no measurement window: the run stopped before the warm-up ended (cycle %d)", r.Cycles, r.WindowStart)
	} else {
		row("cycles", "%d simulated, window %d from cycle %d", r.Cycles, r.WindowCycles, r.WindowStart)
	}
	row("verdict", "%s%s", r.Verdict, r.verdictNote())
	row("offered", "%.4f flits/cycle/node (%.1f%% of link bandwidth)", r.Offered, 100*r.OfferedFraction)
	row("accepted", "%.4f flits/cycle/node (%.1f%%, %.1f bytes/cycle/node); least served source %.4f", r.Accepted, 100*r.AcceptedFraction, r.AcceptedBytes, r.AcceptedMin)
	if r.Messages > 0 {
		if r.Completion > 0 {
			row("completion", "%d cycles for %d messages", r.Completion, r.Messages)
		} else {
			row("completion", "unfinished: %d of %d messages delivered", r.MessagesDone, r.Messages)
		}
	}
	lat := func(l LatencyStats) string {
		s := fmt.Sprintf("mean %.1f, p50 %d, p99 %d, max %d (%d samples)", l.Mean, l.P50, l.P99, l.Max, l.Count)
		if r.NsPerCycle > 0 {
			s += fmt.Sprintf("; mean %.0f ns, p99 %.0f ns", l.Mean*r.NsPerCycle, float64(l.P99)*r.NsPerCycle)
		}
		return s
	}
	row("latency", "%s", lat(r.Latency))
	row("network latency", "%s", lat(r.NetworkLatency))
	row("message latency", "%s", lat(r.MessageLatency))
	if len(r.Classes) > 1 {
		for _, c := range r.Classes {
			row("class "+c.Name, "accepted %.4f, latency %s", c.Accepted, lat(c.Latency))
		}
	}
	if r.Unfinished > 0 {
		row("unfinished", "%d measured packets not delivered", r.Unfinished)
	}
	for _, v := range r.VLStats {
		row(fmt.Sprintf("VL%d buffers", v.VL), "mean %.2f flits (%.1f%%), max %d", v.MeanFlits, 100*v.MeanFraction, v.MaxFlits)
	}
	for i, l := range r.BusiestLinks(busiest) {
		k := ""
		if i == 0 {
			k = "busiest links"
		}
		row(k, "%5.1f%%  %s %s", 100*l.Utilisation, l.Kind, l.Name)
	}
	if r.Deadlock != nil {
		row("DEADLOCK", "%v", r.Deadlock)
	}
	return tw.Flush()
}
