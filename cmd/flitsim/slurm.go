package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/flitsim/plot"
)

// sweepOnly are the sweep flags an array task must not inherit.
var sweepOnly = map[string]bool{"slurm-array": true, "slurm-time": true, "slurm-partition": true,
	"flitsim-bin": true, "out": true, "point": true, "workers": true, "plots": true}

// writeSlurmArray writes DIR/sweep.sbatch (flitsim.SlurmArray): a job
// array of n tasks, task i running `flitsim sweep` with the same flags
// and --point i.
func writeSlurmArray(cmd *cobra.Command, args []string, sf sweepFlags, n int) error {
	dir, err := filepath.Abs(sf.slurmArray)
	if err != nil {
		return err
	}
	bin := sf.bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("find the flitsim binary (give --flitsim-bin): %w", err)
		}
	}
	argv := []string{"sweep"}
	for _, a := range args {
		abs, err := filepath.Abs(a)
		if err != nil {
			return err
		}
		argv = append(argv, abs)
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sweepOnly[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				argv = append(argv, "--"+f.Name, v)
			}
			return
		}
		argv = append(argv, "--"+f.Name+"="+f.Value.String())
	})
	a := flitsim.SlurmArray{Dir: dir, Bin: bin, Args: argv, Points: n, Time: sf.slurmTime, Partition: sf.slurmPart}
	path, err := a.Write()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d array tasks); after the jobs: flitsim merge %s -o OUT\n", path, n, filepath.Join(dir, "points"))
	return nil
}

func newMergeCmd() *cobra.Command {
	var out, plots string
	c := &cobra.Command{
		Use:   "merge POINTS_DIR|FILE… -o DIR",
		Short: "Join the point files of a SLURM array sweep into the sweep's CSV, JSON and plots",
		Long: `Read the point-NNNNN.json files written by 'flitsim sweep --point' (the tasks
of a --slurm-array script), check that every point of the sweep is there
exactly once, and write DIR/sweep.csv, DIR/sweep.json and the plots, the
same files a local sweep writes.`,
		Example: `  flitsim merge slurm/points -o out/`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError(fmt.Errorf("--out DIR is required"))
			}
			if err := checkPlots(plots); err != nil {
				return err
			}
			doc, err := flitsim.MergePointFiles(args)
			if err != nil {
				return inputError(err)
			}
			return writeSweep(cmd.OutOrStdout(), out, doc, plots)
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "output directory")
	c.Flags().StringVar(&plots, "plots", "svg", "plot format: svg, png or none")
	return c
}

// checkPlots refuses a --plots other than svg, png or none (a usage
// error).
func checkPlots(plots string) error {
	if plots != "svg" && plots != "png" && plots != "none" {
		return usageError(fmt.Errorf("--plots %q, expected svg, png or none", plots))
	}
	return nil
}

// writeSweep writes DIR/sweep.csv, DIR/sweep.json and the plots, and
// prints the best throughput per engine; plots is svg, png or none
// (checkPlots).
func writeSweep(stdout io.Writer, dir string, doc flitsim.SweepDoc, plots string) error {
	csvPath, jsonPath, err := flitsim.WriteSweepFiles(dir, doc)
	if err != nil {
		return err
	}
	if plots != "none" {
		if err := plot.WriteSweep(dir, doc, plots); err != nil {
			return err
		}
	}
	if err := flitsim.WriteBest(stdout, doc.Rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s\n", csvPath, jsonPath)
	return nil
}
