package main

import (
	"github.com/spf13/cobra"
)

// studies are the seed-paper reports (packages under studies/): they sit
// under "nuesm study" so the top level shows the product's commands.
var studies []func() *cobra.Command

// registerStudy adds a study command constructor; call it from an init
// function.
func registerStudy(mk func() *cobra.Command) { studies = append(studies, mk) }

func newStudyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "study",
		Short: "Reports of the seed papers' systems (RSI, NovaCube, I/O placement, addressing, VC audit, fail-in-place)",
		Long: `The seed papers' systems, reproduced and reported. These are studies
beside the product: they do not touch the routing the daemon publishes.
Reproduction reports are under bench/seeds/ (make bench-seeds) and
bench/fip/ (make bench-fip).`,
		// Runnable, so that an unknown study is a usage error, not help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, mk := range studies {
		c.AddCommand(mk())
	}
	return c
}

// studyAliases returns the study commands again at the top level, hidden
// and deprecated, so scripts that call "nuesm fip" keep working for one
// release.
func studyAliases() []*cobra.Command {
	var out []*cobra.Command
	for _, mk := range studies {
		c := mk()
		c.Hidden = true
		c.Deprecated = "use \"nuesm study " + c.Name() + "\""
		out = append(out, c)
	}
	return out
}
