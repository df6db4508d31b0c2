package main

import (
	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/flitsim/plot"
)

func newSummaryCmd() *cobra.Command {
	var plotPrefix string
	c := &cobra.Command{
		Use:   "summary SWEEP_DIR… [--plot PREFIX]",
		Short: "Compare sweeps: a Markdown table per traffic pattern, engines × fabrics",
		Long: `Read DIR/sweep.json of every sweep given and print, per traffic pattern, a
Markdown table with one row per engine and one column per fabric: the
simulated throughput (the best accepted load of the sweep, averaged over
seeds; the throughput of the shift exchange) and, in parentheses, the
analytic bound, as fractions of the link bandwidth (for the shift exchange
also the phase-by-phase estimate, Bound.PhaseSaturation). Open-loop patterns get
a second table: the saturation point, the highest offered load whose
accepted load is within 5 % of it. A cell says why an
engine was not simulated (VLs needed, cyclic CDG, not applicable). With
--plot, PREFIX-PATTERN.svg (or .png when PREFIX ends in .png) draws the
simulated throughput as grouped bars.`,
		Example: `  flitsim summary out/fattree-shift out/torus-shift --plot out/summary`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var docs []flitsim.SweepDoc
			for _, d := range args {
				doc, err := flitsim.ReadSweepDoc(d)
				if err != nil {
					return inputError(err)
				}
				docs = append(docs, doc)
			}
			for _, t := range flitsim.Summarize(docs) {
				t.WriteMarkdown(cmd.OutOrStdout())
				if plotPrefix != "" {
					if err := plot.WriteSummary(t, plotPrefix); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&plotPrefix, "plot", "", "also draw grouped bars to PREFIX-PATTERN.svg")
	return c
}
