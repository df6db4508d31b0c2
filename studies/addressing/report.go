package addressing

import (
	"fmt"
	"io"
	"strings"
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
			comp = fmt.Sprintf("%d–%d (bounds; wiring not given)", r.CompactMin, r.CompactMax)
			if s.G == s.A*s.H+1 {
				if c, err := DragonflyCompaction(s.P, s.A, s.H, "aligned"); err == nil {
					comp = fmt.Sprintf("%d (bound %d)", c.Max, c.Bound)
				}
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s | %d | %v |\n", s.Kind, s.Radix, s.Hosts, s.Switches,
			s.T, s.S, s.G, r.Flat, r.PerSwitch, r.PerGroup, comp, s.Ports, yes(r.PerGroup <= 4096))
	}
}

// WriteDFCompaction prints the Dragonfly compaction readings side by side
// for the shapes' Dragonflies: per reading the rules of the fullest switch
// (the table size every switch needs), the emptiest, the mean, and the
// switches at the lower bound ports + S − 1.
func WriteDFCompaction(w io.Writer, shapes []Shape) error {
	fmt.Fprintln(w, "| radix P | groups | switches | ports | bound (ports + S − 1) | Eq. 1 | seed wiring, plain prefixes: max / min / mean | seed wiring, don't-cares: max / min / mean | aligned IDs: max / min / mean | aligned: switches at the bound |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range shapes {
		if s.Kind != "dragonfly" || s.G != s.A*s.H+1 {
			continue
		}
		var cells []string
		var al DFCompaction
		for _, rd := range DFReadings {
			c, err := DragonflyCompaction(s.P, s.A, s.H, rd)
			if err != nil {
				return err
			}
			cells = append(cells, fmt.Sprintf("%d / %d / %.1f", c.Max, c.Min, c.Mean))
			al = c
		}
		fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %d | %s | %d of %d |\n", s.Radix, s.G, s.Switches, s.Ports, al.Bound, s.Rules().PerGroup,
			strings.Join(cells, " | "), al.AtBound, al.Switches)
	}
	return nil
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
