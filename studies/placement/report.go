package placement

import (
	"fmt"
	"io"
	"strings"
)

// WriteReport prints a placement for people: the summary, the I/O nodes
// with their loads, the distance histogram and, for 2D tori, a map.
func WriteReport(w io.Writer, a *Assignment) error {
	p, t := a.P, a.P.Torus
	st := p.Stats()
	var b strings.Builder
	fmt.Fprintf(&b, "torus          %s (%d nodes)\n", t, t.N())
	fmt.Fprintf(&b, "method         %s", p.Method)
	if p.T > 0 {
		fmt.Fprintf(&b, ", t = %d (sphere volume p = %d, bound ⌈N/p⌉ = %d)", p.T, SphereVolume(t.Dims(), p.T), st.Bound)
	}
	b.WriteString("\n")
	healthy := 0
	for i := range a.Of {
		if a.Role(i) == "io" {
			healthy++
		}
	}
	fmt.Fprintf(&b, "I/O nodes      %d", len(p.IO))
	if healthy != len(p.IO) {
		fmt.Fprintf(&b, " (%d healthy)", healthy)
	}
	fmt.Fprintf(&b, "\nmin I/O gap    %d (Lee distance between the closest two I/O nodes)\n", st.MinIODistance)
	maxD := 0
	for i, v := range a.Of {
		if v >= 0 && v != i {
			maxD = max(maxD, a.Dist[i])
		}
	}
	fmt.Fprintf(&b, "distance       max %d, mean %.3f (compute node to its I/O node)\n", maxD, a.MeanDist())
	b.WriteString("histogram     ")
	for d, n := range a.Histogram() {
		if d > 0 {
			fmt.Fprintf(&b, " d%d=%d", d, n)
		}
	}
	b.WriteString("\nloads         ")
	loads := a.Loads()
	lo, hi := -1, 0
	for j, v := range p.IO {
		if a.Failed != nil && a.Failed[v] {
			fmt.Fprintf(&b, " %s:failed", t.Label(v))
			continue
		}
		fmt.Fprintf(&b, " %s:%d", t.Label(v), loads[j])
		if lo < 0 || loads[j] < lo {
			lo = loads[j]
		}
		hi = max(hi, loads[j])
	}
	fmt.Fprintf(&b, "\nload range     %d..%d compute nodes per I/O node\n", max(lo, 0), hi)
	if t.Dims() == 2 {
		b.WriteString(Map(a))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Map draws a 2D assignment, y = k_1−1 at the top: "I" an I/O node, "X"
// a failed one, otherwise the node's distance to its I/O node.
func Map(a *Assignment) string {
	t := a.P.Torus
	if t.Dims() != 2 {
		return ""
	}
	var b strings.Builder
	b.WriteString("map (I = I/O node, X = failed, digit = distance; x to the right, y up)\n")
	for y := t.K[1] - 1; y >= 0; y-- {
		fmt.Fprintf(&b, "  y=%-3d", y)
		for x := 0; x < t.K[0]; x++ {
			i := t.Index([]int{x, y})
			switch a.Role(i) {
			case "io":
				b.WriteString(" I")
			case "failed":
				b.WriteString(" X")
			default:
				fmt.Fprintf(&b, " %d", a.Dist[i])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WriteRegion prints a failover's moves and its region (§4.4).
func WriteRegion(w io.Writer, t *Torus, r *Region) error {
	var b strings.Builder
	b.WriteString("failed        ")
	for _, f := range r.Failed {
		b.WriteString(" " + t.Label(f))
	}
	fmt.Fprintf(&b, "\naffected       %d compute nodes (served by a failed I/O node)\n", len(r.Moves))
	for _, m := range r.Moves {
		fmt.Fprintf(&b, "  %s: %s (d%d) -> %s (d%d)\n", t.Label(m.Node), t.Label(m.From), m.OldDist, t.Label(m.To), m.NewDist)
	}
	fmt.Fprintf(&b, "neighbours     %d compute nodes notified:", len(r.Neighbours))
	for _, v := range r.Neighbours {
		b.WriteString(" " + t.Label(v))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// BriefHeader is the header of the Markdown table WriteBrief writes rows of.
const BriefHeader = "| torus | method | t | I/O | bound | min I/O gap | max dist | mean dist | loads | histogram |\n|---|---|---|---|---|---|---|---|---|---|\n"

// WriteBrief writes one Markdown table row summarising the assignment.
func WriteBrief(w io.Writer, a *Assignment) error {
	p := a.P
	st := p.Stats()
	maxD, lo, hi := 0, -1, 0
	for i, v := range a.Of {
		if v >= 0 && v != i {
			maxD = max(maxD, a.Dist[i])
		}
	}
	loads := a.Loads()
	healthy := 0
	for j, v := range p.IO {
		if a.Failed != nil && a.Failed[v] {
			continue
		}
		healthy++
		if lo < 0 || loads[j] < lo {
			lo = loads[j]
		}
		hi = max(hi, loads[j])
	}
	var h []string
	for d, n := range a.Histogram() {
		if d > 0 && n > 0 {
			h = append(h, fmt.Sprintf("d%d=%d", d, n))
		}
	}
	bound := "-"
	if st.Bound > 0 {
		bound = fmt.Sprint(st.Bound)
	}
	_, err := fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %d | %d | %.3f | %d..%d | %s |\n", p.Torus, p.Method, p.T, healthy, bound,
		st.MinIODistance, maxD, a.MeanDist(), max(lo, 0), hi, strings.Join(h, " "))
	return err
}
