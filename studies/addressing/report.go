package addressing

import (
	"fmt"
	"io"
)

// WriteRules prints the rule-count table (seed 002 Figs. 4 and 6) for the
// shapes as Markdown.
func WriteRules(w io.Writer, shapes []Shape) {
	fmt.Fprintln(w, "| topology | radix P | hosts H | switches | T | S | G | flat | per-switch | per-group (Eq. 1) | compacted | ports used (bound) | fits 4K TCAM (per-group) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range shapes {
		r := s.Rules()
		comp := fmt.Sprint(r.CompactMin)
		if s.Kind == "dragonfly" {
			lo, hi := DragonflyCompact(s.P, s.A, s.H, s.G)
			comp = fmt.Sprintf("%d–%d (bounds %d–%d)", lo, hi, r.CompactMin, r.CompactMax)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s | %d | %v |\n", s.Kind, s.Radix, s.Hosts, s.Switches,
			s.T, s.S, s.G, r.Flat, r.PerSwitch, r.PerGroup, comp, s.Ports, yes(r.PerGroup <= 4096))
	}
}

// NamedPlan is a LID plan with a label.
type NamedPlan struct {
	Name string
	Plan LIDPlan
}

// WriteLIDs prints the InfiniBand LID table as Markdown.
func WriteLIDs(w io.Writer, plans []NamedPlan) {
	fmt.Fprintln(w, "| network | LIDs needed | LIDs per group | groups | flat max LID | hierarchical max LID | LFT blocks flat / hierarchical | fits 48K (flat / hierarchical) | subnets needed |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, n := range plans {
		p := n.Plan
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d / %d | %s / %s | %d |\n", n.Name, p.Endpoints, p.GroupLIDs, p.Groups,
			p.FlatMaxLID, p.HierMaxLID, p.FlatBlocks, p.HierBlocks, yes(p.FitsFlat), yes(p.FitsHier), p.Subnets)
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
