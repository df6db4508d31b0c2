package rsi

import (
	"fmt"
	"io"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// Range condenses one per-node quantity.
type Range struct {
	Min, Max int
	Mean     float64
}

func (r Range) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d–%d (avg %.2f)", r.Min, r.Max, r.Mean)
}

func rangeOf(vals []int) Range {
	if len(vals) == 0 {
		return Range{}
	}
	r := Range{Min: vals[0], Max: vals[0]}
	sum := 0
	for _, v := range vals {
		r.Min, r.Max = min(r.Min, v), max(r.Max, v)
		sum += v
	}
	r.Mean = float64(sum) / float64(len(vals))
	return r
}

// SizeSummary is one row of the tables report: per-node table sizes of a
// network condensed over its nodes.
type SizeSummary struct {
	Name       string
	Nodes      int
	SuperNodes int
	FlatNodes  Range // the paper's flat count: one entry per other node
	FlatLIDs   Range // routed LIDs of the flat InfiniBand LFT
	T1, T2     Range
	Hier       Range // T1 + T2
	Multipath  Range // entries with more than one port
	Ports      Range // ports stored in T1 and T2
	Hops       HopStats
}

// Summarize condenses sizes (Tables.Sizes) and the hop counts of t.
func Summarize(name string, t *Tables, sizes []NodeSizes) SizeSummary {
	col := func(f func(NodeSizes) int) Range {
		v := make([]int, len(sizes))
		for i, s := range sizes {
			v[i] = f(s)
		}
		return rangeOf(v)
	}
	return SizeSummary{
		Name: name, Nodes: t.G.NumSwitches(), SuperNodes: t.NumSuperNodes(),
		FlatNodes: col(func(s NodeSizes) int { return s.FlatNodes }),
		FlatLIDs:  col(func(s NodeSizes) int { return s.FlatLIDs }),
		T1:        col(func(s NodeSizes) int { return s.T1 }),
		T2:        col(func(s NodeSizes) int { return s.T2 }),
		Hier:      col(NodeSizes.Hier),
		Multipath: col(func(s NodeSizes) int { return s.Multipath }),
		Ports:     col(func(s NodeSizes) int { return s.Ports }),
		Hops:      t.Hops(),
	}
}

// WriteSizeTable prints rows as a Markdown table.
func WriteSizeTable(w io.Writer, rows []SizeSummary) {
	fmt.Fprintln(w, "| network | nodes | super nodes | flat entries (paper) | flat IB LFT LIDs | T1 | T2 | T1+T2 | hierarchical/flat | multipath entries | ports stored | two-level hops avg (max) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio := "–"
		if r.FlatNodes.Mean > 0 {
			ratio = fmt.Sprintf("%.3f", r.Hier.Mean/r.FlatNodes.Mean)
		}
		hops := fmt.Sprintf("%.3f (%d)", r.Hops.AvgMin, r.Hops.Max)
		if r.Hops.AvgMax != r.Hops.AvgMin {
			hops = fmt.Sprintf("%.3f–%.3f (%d)", r.Hops.AvgMin, r.Hops.AvgMax, r.Hops.Max)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %v | %v | %v | %v | %v | %s | %v | %v | %s |\n",
			r.Name, r.Nodes, r.SuperNodes, r.FlatNodes, r.FlatLIDs, r.T1, r.T2, r.Hier, ratio, r.Multipath, r.Ports, hops)
	}
}

// WriteNodeSizes prints one line per node.
func WriteNodeSizes(w io.Writer, g *fabric.Graph, sizes []NodeSizes) {
	fmt.Fprintln(w, "| node | flat entries | flat LIDs | T1 | T2 | T1+T2 | multipath | ports |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, s := range sizes {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d |\n",
			g.SwitchName(s.Node), s.FlatNodes, s.FlatLIDs, s.T1, s.T2, s.Hier(), s.Multipath, s.Ports)
	}
}

// Describe names a failure.
func (f Failure) Describe(g *fabric.Graph) string {
	if f.Kind == FailLink {
		return "link " + g.ChannelName(f.Channel)
	}
	return fmt.Sprintf("node %q", g.SwitchName(f.Node))
}

// Write prints the outcome: a summary and a Markdown table of the nodes
// the failure touched (all nodes when all is set).
func (o *Outcome) Write(w io.Writer, t *Tables, all bool) {
	g := t.G
	var fails []string
	for _, f := range o.Failures {
		fails = append(fails, f.Describe(g))
	}
	informed, touched, emptied := 0, 0, 0
	var t1p, t2p, t1e, t2e int
	for _, n := range o.Nodes {
		if n.FDIn > 0 {
			informed++
		}
		if n.T1Ports+n.T2Ports > 0 {
			touched++
		}
		if n.T1Emptied+n.T2Emptied > 0 {
			emptied++
		}
		t1p, t2p, t1e, t2e = t1p+n.T1Ports, t2p+n.T2Ports, t1e+n.T1Emptied, t2e+n.T2Emptied
	}
	fmt.Fprintf(w, "failure: %s\n\n", strings.Join(fails, "; "))
	fmt.Fprintf(w, "- FD (Algorithm 2): %d packets over %d rounds; %d nodes received FD, %d changed their tables, %d lost a whole entry\n",
		o.FDPackets, o.FDRounds, informed, touched, emptied)
	fmt.Fprintf(w, "- ports invalidated: T1 %d, T2 %d; entries left without a valid port: T1 %d, T2 %d\n", t1p, t2p, t1e, t2e)
	writePairs(w, g, "before", o.Before)
	writePairs(w, g, "after FD", o.After)
	if o.Recovered.Pairs > 0 {
		fmt.Fprintf(w, "- FR (Algorithm 3, %s rule): %d packets over %d rounds; entries still invalid afterwards: %d\n", o.Rule, o.FRPackets, o.FRRounds, o.Invalid)
		writePairs(w, g, "after FR", o.Recovered)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| node | first FD round | FD in | FD out | T1 ports invalid | T1 entries lost | T2 ports invalid | T2 entries lost | FR in | FR out | invalid after FR |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range o.Nodes {
		if !all && !n.Affected() && n.FRIn == 0 {
			continue
		}
		first := "–"
		if n.FirstFD >= 0 {
			first = fmt.Sprint(n.FirstFD)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", g.SwitchName(n.Node), first,
			n.FDIn, n.FDOut, n.T1Ports, n.T1Emptied, n.T2Ports, n.T2Emptied, n.FRIn, n.FROut, n.StillInvalid)
	}
}

func writePairs(w io.Writer, g *fabric.Graph, when string, p PairState) {
	fmt.Fprintf(w, "- pairs %s: %d of live nodes; %d disconnected, %d lost every table route (%d silently: the source still sends), %d unsafe, %d safe\n",
		when, p.Pairs, p.Disconnected, p.Lost, p.LostSilent, p.Unsafe, p.Safe)
	if len(p.Examples) > 0 {
		var ex []string
		for _, e := range p.Examples {
			ex = append(ex, fmt.Sprintf("%s -> %s", g.SwitchName(e[0]), g.SwitchName(e[1])))
		}
		fmt.Fprintf(w, "  - lost, e.g.: %s\n", strings.Join(ex, "; "))
	}
}
