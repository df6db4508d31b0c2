package novacube

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// Size is a k-ary n-cube size.
type Size struct{ K, N int }

func (s Size) String() string {
	if s.N == 1 {
		return fmt.Sprint(s.K)
	}
	return strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%dx", s.K), s.N), "x")
}

// ReportOptions choose the sizes of each part of Report.
type ReportOptions struct {
	Props []Size // torus vs NovaCube properties
	APL   []Size // average path length of the routings
	Audit []Size // VC audit and pora engine verification
}

// Table2 lists the paper's Table 2 average path lengths (2D and 3D, 64 and
// 729 servers).
var Table2 = []struct {
	Size Size
	APL  float64
}{{Size{8, 2}, 3.06}, {Size{4, 3}, 1.82}, {Size{27, 2}, 9.46}, {Size{9, 3}, 4.17}}

// Report writes the NovaCube-vs-torus report: properties, Table 2, the
// average path lengths of the PORA readings, the VC audit, and the pora
// engine's tables verified by cdg.
func Report(w io.Writer, opt ReportOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, section := range []func(io.Writer, *tabwriter.Writer, ReportOptions) error{reportProps, reportAPL, reportAudit, reportEngine} {
		if err := section(w, tw, opt); err != nil {
			return err
		}
	}
	return nil
}

// reportProps writes the properties table.
func reportProps(w io.Writer, tw *tabwriter.Writer, opt ReportOptions) error {
	fmt.Fprintln(w, "## Properties (BFS over the generated fabric; paper formulas beside)")
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "size\tkind\tnodes\tlinks\teq.11\tdiam\teq.3\tAPL\teq.10\tbisect eq.4\tdim cut\tbest cut\tΘ eq.7\tΘ cut\tΘ channel\t")
	for _, s := range opt.Props {
		for _, kind := range []string{"torus", "novacube"} {
			p, err := Analyse(kind, s.K, s.N)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.3f\t%s\t%d\t%d\t%s\t%.3f\t%s\t%.3f\t\n", s, kind, p.Nodes, p.Links, p.LinksFormula,
				p.Diameter, p.DiameterFormula, p.APL, fnum(p.APLFormula), p.BisectionFormula, p.BisectionDimCut, inum(p.BisectionBest),
				p.ThroughputFormula, fnum(zeroNaN(p.ThroughputCut)), p.ThroughputChannel)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nLinks and bisections count cables; Θ is the ideal uniform throughput bound per node in channel bandwidths:")
	fmt.Fprintln(w, "eq. 7 from eq. 4's bisection, 'cut' from the least linear cut found (even k), 'channel' = 2·links/(N·APL).")
	return nil
}

// reportAPL writes Table 2 and the average path lengths of the readings
// side by side.
func reportAPL(w io.Writer, tw *tabwriter.Writer, opt ReportOptions) error {
	fmt.Fprintln(w, "\n## Table 2 average path lengths and the PORA readings")
	fmt.Fprintln(w)
	head := "size\tnodes\tpaper\tBFS (shortest)\t"
	for _, v := range Readings {
		head += "PORA " + string(v) + "\t"
	}
	fmt.Fprintln(tw, head+"readings at the paper's figure\t")
	for _, r := range Table2 {
		p, err := Analyse("novacube", r.Size.K, r.Size.N)
		if err != nil {
			return err
		}
		c, err := NewCube(r.Size.K, r.Size.N, true)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s\t%d\t%.2f\t%.3f\t", r.Size, p.Nodes, r.APL, p.APL)
		var match []string
		for _, v := range Readings {
			a := ExpectedAPL(c, v)
			line += fmt.Sprintf("%.3f\t", a)
			if fmt.Sprintf("%.2f", a) == fmt.Sprintf("%.2f", r.APL) {
				match = append(match, string(v))
			}
		}
		fmt.Fprintln(tw, line+strings.Join(append(match, "-")[:max(1, len(match))], ", ")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nReadings (package novacube): literal: Δ the Lee distance, step 1 over every neighbour, the")
	fmt.Fprintln(w, "quadrant kept even the long way round; quadrant: Δ the Lee distance inside each quadrant (the")
	fmt.Fprintln(w, "quadrant fixed at the source, jumps only inside the box); reducing: step 1 only to neighbours")
	fmt.Fprintln(w, "that reduce the Lee distance; minimal: every hop on a shortest NovaCube path. A reading is at")
	fmt.Fprintln(w, "the paper's figure when its mean rounds to it.")
	fmt.Fprintln(w, "\n## Average path length by routing (exact expectations over all ordered pairs)")
	fmt.Fprintln(w)
	head = "size\ttorus DOR\tNovaCube BFS\t"
	for _, v := range Readings {
		head += "PORA " + string(v) + "\t"
	}
	fmt.Fprintln(tw, head+"pora tables\t")
	for _, s := range opt.APL {
		t, err := NewCube(s.K, s.N, false)
		if err != nil {
			return err
		}
		c, err := NewCube(s.K, s.N, true)
		if err != nil {
			return err
		}
		p, err := Analyse("novacube", s.K, s.N)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s\t%.3f\t%.3f\t", s, ExpectedAPL(t, Tables), p.APL)
		for _, v := range Variants {
			line += fmt.Sprintf("%.3f\t", ExpectedAPL(c, v))
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// reportAudit writes, per size and reading, the paper's dateline verdict
// and the fewest VC classes the search by hop type finds, with the
// assignments and the cycles.
func reportAudit(w io.Writer, tw *tabwriter.Writer, opt ReportOptions) error {
	fmt.Fprintln(w, "\n## VC classes (CDG over (channel, class) of every path the reading may take; cdg.FindCycle)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exhaustive search over the assignments of classes to hop types (first hop, first hop after a")
	fmt.Fprintln(w, "source jump, source jump, quadrant jump by DOR ring, direction and dateline, ring hop by")
	fmt.Fprintln(w, "dimension and dateline), by increasing class count; the minimum is confirmed by Audit.")
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "size\treading\t§5.3 dateline (2 VCs)\tmin classes\thop types\tchecked\tpruned\t")
	var notes, cycles []string
	for _, s := range opt.Audit {
		c, err := NewCube(s.K, s.N, true)
		if err != nil {
			return err
		}
		for _, v := range Variants {
			pa, err := Audit(c, v, Paper)
			if err != nil {
				return err
			}
			r, err := MinClasses(c, v)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t\n", s, v, verdict(pa), inum(r.Classes), r.Types, r.Checked, r.Pruned)
			if r.Classes > 0 {
				notes = append(notes, fmt.Sprintf("%s %s: %s", s, v, r.Scheme.Doc))
			} else {
				notes = append(notes, fmt.Sprintf("%s %s: every hop type on a class of its own is cyclic: %s", s, v, typedCycle(c, r)))
			}
			if !pa.Acyclic && v == Literal {
				cycles = append(cycles, fmt.Sprintf("%s literal, dateline: %s", s, cycleText(c, pa)))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n'cycle/L': a dependency cycle of L virtual channels; min classes '-': no assignment by hop type")
	fmt.Fprintln(w, "is acyclic; checked: assignments whose CDG was built; pruned: partial assignments cut by a")
	fmt.Fprintln(w, "cycle already found (merging classes never removes a cycle). The assignments found:")
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
	fmt.Fprintln(w, "Cycles under the paper's dateline VCs:")
	for _, c := range cycles {
		fmt.Fprintln(w, "  "+c)
	}
	return nil
}

func verdict(r *AuditResult) string {
	if r.Acyclic {
		return "ok"
	}
	return fmt.Sprintf("cycle/%d", r.CycleLen)
}

// typedCycle renders the cycle Audit found in r's scheme, each channel
// with the hop type of its class (the classes of r.Scheme are single
// types when no assignment is acyclic).
func typedCycle(c *Cube, r *SearchResult) string {
	a, V := r.Audit, r.Scheme.VCs
	parts := make([]string, len(a.Cycle))
	for i, v := range a.Cycle {
		var names []string
		for t, cl := range r.Class {
			if cl == v%V {
				names = append(names, TypeName(t, c.N))
			}
		}
		ch, _, _ := strings.Cut(c.ChannelName(v, V), "/VC")
		parts[i] = ch + " [" + strings.Join(names, ", ") + "]"
	}
	s := strings.Join(parts, " ")
	if a.CycleLen > len(a.Cycle) {
		s += fmt.Sprintf(" … (%d in all)", a.CycleLen)
	}
	return s
}

// reportEngine writes the pora engine's verified tables.
func reportEngine(w io.Writer, tw *tabwriter.Writer, opt ReportOptions) error {
	fmt.Fprintln(w, "\n## pora engine tables, verified by cdg.Verify")
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "size\thosts\tVLs\tverdict\tdeps\twith fewer VLs\t")
	for _, s := range opt.Audit {
		line, err := engineLine(s)
		if err != nil {
			return err
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// engineLine routes a NovaCube with "pora", verifies the tables with the
// VLs they claim, and with every VL merged into fewer.
func engineLine(s Size) (string, error) {
	tp, err := topo.NovaCube(s.K, s.N, 1)
	if err != nil {
		return "", err
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		return "", err
	}
	e, err := routing.Lookup("pora")
	if err != nil {
		return "", err
	}
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: lft.MaxVLs})
	if err != nil {
		return "", err
	}
	rep, _ := cdg.Verify(g, r, cdg.Options{MaxVLs: r.NumVLs, SwitchDelivery: true})
	if rep == nil {
		return "", fmt.Errorf("novacube: %s: no verification report", s)
	}
	verdict := "PASS"
	if !rep.OK() {
		verdict = "FAIL"
	}
	fewer := "-"
	var parts []string
	for m := r.NumVLs / 2; m >= 1; m /= 2 {
		fr, _ := cdg.Verify(g, CollapseVLs(r, m), cdg.Options{})
		if fr != nil && fr.Cycle != nil {
			parts = append(parts, fmt.Sprintf("%d: cycle/%d", m, len(fr.Cycle.Channels)))
		} else {
			parts = append(parts, fmt.Sprintf("%d: acyclic", m))
		}
	}
	if len(parts) > 0 {
		fewer = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s\t%d\t%d\t%s\t%d\t%s\t", s, len(g.Terms), r.NumVLs, verdict, rep.CDGEdges, fewer), nil
}

// CollapseVLs returns a copy of r with every VL taken mod m: the tables on
// m VLs (layers or dateline halves merged).
func CollapseVLs(r *lft.Routing, m int) *lft.Routing {
	c := r.Clone()
	for _, tab := range c.SL2VL.Switch {
		if tab != nil {
			for i := range tab.VL {
				tab.VL[i] %= uint8(m)
			}
		}
	}
	for i := range c.SL2VL.Default {
		c.SL2VL.Default[i] %= uint8(m)
	}
	c.NumVLs = m
	return c
}

func cycleText(c *Cube, r *AuditResult) string {
	parts := make([]string, len(r.Cycle))
	for i, v := range r.Cycle {
		parts[i] = c.ChannelName(v, r.Scheme.VCs)
	}
	s := strings.Join(parts, " ")
	if r.CycleLen > len(r.Cycle) {
		s += fmt.Sprintf(" … (%d in all)", r.CycleLen)
	}
	return s
}

func fnum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func inum(v int) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprint(v)
}

func zeroNaN(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}
