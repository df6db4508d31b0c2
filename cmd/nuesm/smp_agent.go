package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/internal/umad"
)

func init() { register(newSMPAgentCmd) }

// newSMPAgentCmd is the OpenSM deployer's SMP writer: a co-process the
// deployer starts with the diags' environment (so a simulator's
// LD_PRELOAD library serves it), fed batches of SMPs on standard input.
func newSMPAgentCmd() *cobra.Command {
	var (
		device   string
		mkey     uint64
		timeout  time.Duration
		retries  int
		parallel int
	)
	c := &cobra.Command{
		Use:    "smp-agent",
		Short:  "Send directed-route SMPs for the OpenSM deployer (JSON batches on stdin, answers on stdout)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return umad.ServeDevice(ctx, device, cmd.InOrStdin(), cmd.OutOrStdout(), mkey, umad.Options{Timeout: timeout, Retries: retries}, parallel)
		},
	}
	f := c.Flags()
	f.StringVar(&device, "device", "/dev/infiniband/umad0", "umad device of the port the SMPs leave from")
	f.Uint64Var(&mkey, "mkey", 0, "M_Key sent with every SMP")
	f.DurationVar(&timeout, "timeout", 200*time.Millisecond, "time to wait for the first try's answer (each retry waits twice as long as the one before, up to 4 times this)")
	f.IntVar(&retries, "retries", 3, "tries after the first when no answer comes (each SMP is retried alone)")
	f.IntVar(&parallel, "parallel", 16, "SMPs in flight at once")
	return c
}
