package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/studies/addressing"
	"github.com/nuesm/nuesm/topo"
)

func init() { registerStudy(newAddressingReportCmd) }

func newAddressingReportCmd() *cobra.Command {
	var radixes, kinds string
	var measure []string
	c := &cobra.Command{
		Use:   "addressing-report",
		Short: "Hierarchical addressing: rule counts per switch (seed 002 Eq. 1), compaction, IB LIDs and the 48K limit",
		Long: `Rule counts per access switch for flat, per-switch, per-group (Eq. 1,
R = (G−1) + (S−1) + T) and compacted addressing (lower bound = ports) for the
largest 3-level folded Clos, 2D/3D/4D flattened butterfly and balanced
Dragonfly of each switch radix (seed 002 §III, Table I, Figs. 4 and 6). The
Dragonfly's compacted count is computed per switch for the seed's global
wiring with binary group IDs.

The InfiniBand analogue: LIDs needed (hosts + switches), the highest LID
with flat and with hierarchical assignment (every group on its own LFT
blocks), and the check against the 48K (0xBFFF) unicast LID limit.

--measure KIND:NAME=VALUE,... generates a fabric, routes it with MinHop and
compares its LFT blocks under the generator's LIDs and under hierarchical
LIDs (groups = Dragonfly groups / RSI super nodes / fbfly dimension-0 rows).`,
		Example: `  nuesm study addressing-report
  nuesm study addressing-report --radix 36,72 --kinds dragonfly,fbfly3
  nuesm study addressing-report --measure dragonfly:p=4,a=8,h=4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAddressingReport(cmd.Context(), cmd.OutOrStdout(), radixes, kinds, measure)
		},
	}
	fl := c.Flags()
	fl.StringVar(&radixes, "radix", "8,16,24,48,96", "switch radixes, comma-separated")
	fl.StringVar(&kinds, "kinds", strings.Join(addressing.Kinds, ","), "topologies, comma-separated")
	fl.StringArrayVar(&measure, "measure", nil, "KIND:NAME=VALUE,… fabric to route and measure LFT block locality on; repeatable")
	return c
}

func runAddressingReport(ctx context.Context, w io.Writer, radixes, kinds string, measure []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var shapes []addressing.Shape
	var plans []addressing.NamedPlan
	for _, k := range strings.Split(kinds, ",") {
		for _, rs := range strings.Split(radixes, ",") {
			r, err := strconv.Atoi(strings.TrimSpace(rs))
			if err != nil || r < 1 || r > 256 {
				return usageError(fmt.Errorf("--radix %q: expected integers in 1..256", radixes))
			}
			s, err := addressing.Max(strings.TrimSpace(k), r)
			if err != nil {
				return usageError(err) // --kinds names no known shape
			}
			shapes = append(shapes, s)
			plans = append(plans, addressing.NamedPlan{Name: fmt.Sprintf("%s P=%d", s.Kind, r), Plan: s.LIDs()})
		}
	}
	fmt.Fprintln(w, "## Rules per access switch (seed 002 Eq. 1, Figs. 4 and 6)")
	fmt.Fprintln(w)
	addressing.WriteRules(w, shapes)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Dragonfly compaction, three readings (seed 002 §III-B, Fig. 6)")
	fmt.Fprintln(w)
	if err := addressing.WriteDFCompaction(w, shapes); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## The ~300,000-host networks of 72-port switches (seed 002 §VI-A)")
	fmt.Fprintln(w)
	addressing.WriteRules(w, addressing.Exascale())
	// The ~300k-host configurations of seed 002 §VI-A.
	plans = append(plans,
		addressing.NamedPlan{Name: "4D FB 15×15×15×6, 15 hosts/switch (seed 002 §VI-A)", Plan: addressing.PlanLIDs(15*15*6, 15+15*15, 0)},
		addressing.NamedPlan{Name: "DF 463 groups × 36 switches × 18 hosts (seed 002 §VI-A)", Plan: addressing.PlanLIDs(463, 36+36*18, 0)},
		addressing.NamedPlan{Name: "DF p=8 a=16 h=8, 129 groups (seed 002 Table III)", Plan: addressing.PlanLIDs(129, 16+16*8, 0)},
	)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## InfiniBand: LIDs, LFT blocks, the 48K unicast limit")
	fmt.Fprintln(w)
	addressing.WriteLIDs(w, plans)
	for _, m := range measure {
		if err := measureBlocks(ctx, w, m); err != nil {
			return err
		}
	}
	return nil
}

// measureBlocks routes a generated fabric with MinHop under its own LIDs
// and under hierarchical LIDs and prints the LFT block statistics.
func measureBlocks(ctx context.Context, w io.Writer, spec string) error {
	kind, rest, _ := strings.Cut(spec, ":")
	params := map[string]string{}
	if rest != "" {
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return usageError(fmt.Errorf("--measure %q: expected KIND:NAME=VALUE,…", spec))
			}
			params[k] = v
		}
	}
	tp, err := topo.Generate(kind, params)
	if err != nil {
		return usageError(err)
	}
	group := tp.Group
	if kind == "fbfly" {
		// Groups are the rows of dimension 0 (seed 002 §VI-A): switches
		// that agree in every other coordinate.
		id := map[string]int{}
		group = make([]int, len(tp.Coords))
		for s, c := range tp.Coords {
			key := fmt.Sprint(c[1:])
			if _, ok := id[key]; !ok {
				id[key] = len(id)
			}
			group[s] = id[key]
		}
	}
	if kind != "dragonfly" && kind != "rsi" && kind != "fbfly" {
		return usageError(fmt.Errorf("--measure %s: groups are known for dragonfly, rsi and fbfly only", kind))
	}
	fmt.Fprintf(w, "\n## LFT blocks of MinHop on %s %s\n\n", tp.Kind, tp.Params)
	fmt.Fprintln(w, "| LIDs | max LID | blocks (all switches) | group-pure blocks | uniform blocks (one port) | blocks holding a group, per switch |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, hier := range []bool{false, true} {
		f := tp.Fabric.Clone()
		name := "generator (GUID order)"
		if hier {
			name = "hierarchical (group per LFT block range)"
			if _, err := addressing.AssignHierarchicalLIDs(f, group); err != nil {
				return err
			}
		}
		g, err := fabric.Compile(f)
		if err != nil {
			return err
		}
		r, err := routing.MinHop{}.Route(ctx, g, routing.Options{})
		if err != nil {
			return err
		}
		st, err := addressing.Blocks(g, r, group)
		if err != nil {
			return err
		}
		pct := func(n int) string { return fmt.Sprintf("%d (%.1f %%)", n, 100*float64(n)/float64(max(st.Blocks, 1))) }
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %.2f |\n", name, g.MaxLID(), st.Blocks, pct(st.GroupPure), pct(st.Uniform), st.BlocksPerGrp)
	}
	return nil
}
