package main

import (
	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/internal/buildinfo"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/internal/exitstatus"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "nuesm",
		Short: "Deadlock-free routing engine for lossless InfiniBand-style fabrics",
		Long: `nuesm reads ibnetdiscover fabric dumps (or generates fabrics), computes
deadlock-free forwarding tables and proves them safe.

Examples:
  nuesm info fabric.topo                   # summary of a dump
  nuesm info --default                     # summary of the embedded default fabric
  nuesm gen torus --dims 4x4x4 -o t.topo   # generate a 3D torus
  nuesm gen --help                         # list generators
  nuesm route fabric.topo --engine nue -o out/   # route, verify, write tables
  nuesm verify out/                        # prove the tables of a set safe

` + defaults.MaxDumpHelp + "\n\n" + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return checkVLs(cmd.Flags())
		},
	}
	buildinfo.AddVersion(root)
	root.AddCommand(newGenCmd(), newInfoCmd(), newRouteCmd(), newVerifyCmd(), newServeCmd(), newDotCmd())
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	root.AddCommand(newStudyCmd())
	root.AddCommand(studyAliases()...)
	exitstatus.MarkUsage(root)
	return root
}

// subcommands are the commands that files of this package add through
// register (tools beside the main route/verify/serve flow), so each lives
// in its own file without editing this one.
var subcommands []func() *cobra.Command

// register adds a command constructor; call it from an init function.
func register(mk func() *cobra.Command) { subcommands = append(subcommands, mk) }
