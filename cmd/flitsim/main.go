// Command flitsim runs the flit-level simulator on a fabric: route it with
// nuesm's engines (or read tables written by `nuesm route` or OpenSM),
// replay traffic and report throughput, latency, link loads and
// deadlocks. Subcommands are thin: flags in, package flitsim out.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/internal/buildinfo"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/internal/exitstatus"
	"github.com/nuesm/nuesm/internal/vlflag"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		// Errors of package flitsim name it already.
		fmt.Fprintln(os.Stderr, "flitsim:", strings.TrimPrefix(err.Error(), "flitsim: "))
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "flitsim",
		Short: "Flit-level simulator of lossless InfiniBand-style fabrics",
		Long: `flitsim replays a routing (nuesm's engines or OpenSM tables) on a
cycle-driven, flit-level model of the fabric and measures throughput,
latency, link utilisation and VL buffer occupancy; it stops at a deadlock
and prints the cycle of blocked buffers.

Examples:
  flitsim run --default --engine ftree --traffic uniform --load 0.8
  flitsim run --gen torus --gen-param dims=8x8 --engine dor --vls 2 --traffic uniform --load 0.5
  flitsim run fabric.topo --lfts out/ --traffic shift --json result.json
  # min-hop on a ring is not deadlock-free: --unsafe simulates it anyway,
  # and the run stops at the deadlock with its cycle of buffers (exit 4)
  flitsim run --gen ring --gen-param switches=5 --engine minhop --unsafe --traffic uniform --load 1 \
      --switching vct --queueing fifo --packet-flits 4 --buffer-flits 4

` + defaults.MaxDumpHelp + "\n\n" + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(vlflag.Check(cmd.Flags(), "vls"))
		},
	}
	buildinfo.AddVersion(root)
	root.AddCommand(newRunCmd(), newSweepCmd(), newMergeCmd(), newSummaryCmd())
	exitstatus.MarkUsage(root)
	return root
}
