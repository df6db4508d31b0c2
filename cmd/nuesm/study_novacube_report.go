package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/studies/novacube"
)

func init() { registerStudy(newNovaCubeReportCmd) }

func newNovaCubeReportCmd() *cobra.Command {
	var props, apl, audit string
	c := &cobra.Command{
		Use:   "novacube-report [--props SIZES] [--apl SIZES] [--audit SIZES]",
		Short: "NovaCube vs torus (seed 004): diameter, APL, bisection, throughput bounds, PORA readings, fewest VC classes",
		Long: `Analyse NovaCube against the torus it extends (seed 004): diameter and
average path length by BFS over the generated fabrics, link counts,
bisection cuts and ideal uniform throughput bounds next to the paper's
formulas; the paper's Table 2; the exact expected path length of PORA's
readings side by side (literal, Δ inside each quadrant, first hop only if
it reduces the distance, per-hop minimal) and of the pora engine's
tables; the fewest VC classes of each reading, found by an exhaustive
search over class assignments by hop type (first hop, jump, ring hop by
dimension and dateline), each judged by the channel dependency graph of
every path the reading may take, next to the paper's two dateline VCs;
and the pora engine's tables verified by cdg with the VLs they use and
shown cyclic with fewer.
SIZES are comma-separated k-ary n-cubes written like 8x8 or 4x4x4.`,
		Example: `  nuesm study novacube-report
  nuesm study novacube-report --props 8x8,4x4x4 --apl 8x8 --audit 6x6`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opt novacube.ReportOptions
			var err error
			if opt.Props, err = parseCubeSizes(props); err != nil {
				return usageError(err)
			}
			if opt.APL, err = parseCubeSizes(apl); err != nil {
				return usageError(err)
			}
			if opt.Audit, err = parseCubeSizes(audit); err != nil {
				return usageError(err)
			}
			return novacube.Report(cmd.OutOrStdout(), opt)
		},
	}
	fl := c.Flags()
	fl.StringVar(&props, "props", "4x4,6x6,8x8,10x10,16x16,5x5,7x7,27x27,4x4x4,8x8x8,5x5x5,9x9x9", "sizes for the properties table")
	fl.StringVar(&apl, "apl", "4x4,6x6,8x8,10x10,12x12,16x16,5x5,7x7,9x9,4x4x4,6x6x6,5x5x5", "sizes for the path-length table")
	fl.StringVar(&audit, "audit", "4x4,5x5,6x6,7x7,8x8,4x4x4,5x5x5", "sizes for the VC audit and the engine check")
	return c
}

// parseCubeSizes reads "8x8,4x4x4" into k-ary n-cube sizes.
func parseCubeSizes(s string) ([]novacube.Size, error) {
	var out []novacube.Size
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		parts := strings.Split(f, "x")
		k, err := strconv.Atoi(parts[0])
		if err != nil || k < 3 {
			return nil, fmt.Errorf("novacube-report: size %q: radix %q, expected an integer >= 3", f, parts[0])
		}
		for _, p := range parts[1:] {
			if v, err := strconv.Atoi(p); err != nil || v != k {
				return nil, fmt.Errorf("novacube-report: size %q: expected equal radices (a k-ary n-cube such as 8x8)", f)
			}
		}
		out = append(out, novacube.Size{K: k, N: len(parts)})
	}
	return out, nil
}
