package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

func init() { register(newExportCmd) }

// tableFilesHelp says what each file of a table set is.
const tableFilesHelp = `Files of a table set:
  nuesm.lft          the LFTs, compact (gzip; lft/LFTFORMAT.md): the set's
                     record of them, what diff, plan, verify and serve read
  opensm-lfts.dump   the LFTs as OpenSM's file engine loads them
                     (opensm -R file -U FILE); the largest file by far
  nuesm.sl           the SL of every path (lft/SLFORMAT.md)
  nuesm.sl2vl        the SL-to-VL tables (lft/SL2VLFORMAT.md)
  qos-policy.conf    the SLs as an OpenSM QoS policy (opensm -Q -Y FILE),
                     when a policy can hold them
  fabric.topo        the dump routed: diff, plan, verify and export find it
Sets written before nuesm.lft and nuesm.sl2vl existed hold
opensm-lfts.dump and opensm-sl2vl.dump instead; every reader takes both.`

func newExportCmd() *cobra.Command {
	var (
		fabricPath string
		useDefault bool
		out        string
	)
	c := &cobra.Command{
		Use:   "export TABLES -o DIR",
		Short: "Write a table set's LFTs and SL2VL tables in OpenSM's dump forms",
		Long: `Write the tables of a set in OpenSM's dump forms, into DIR:
opensm-lfts.dump (for opensm -R file -U) and opensm-sl2vl.dump (the form
of OpenSM's own SL2VL dump, to compare with it); the set's qos-policy.conf
is in OpenSM's form already. TABLES is a directory written by "nuesm route
-o" or published by "nuesm serve" (a generation without the OpenSM dump:
routed with --compact, published for the deployer, or kept as history), or
an LFT file. The fabric is --fabric, --default, or TABLES' fabric.topo.

` + tableFilesHelp,
		Example: `  nuesm export /var/lib/nuesm/previous -o /tmp/rollback
  nuesm export out/nuesm.lft --fabric fabric.topo -o out/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fabricArgs := []string{fabricPath}
			if fabricPath == "" && !useDefault {
				p, err := setFabric("TABLES", args[0], fabricFlagHint)
				if err != nil {
					return err
				}
				fabricArgs = []string{p}
			} else if useDefault {
				fabricArgs = nil
			}
			l, err := loadGraph(cmd.ErrOrStderr(), fabricArgs, useDefault)
			if err != nil {
				return err
			}
			r, err := lft.ReadTableSet(args[0], l.Graph, lft.ReadOptions{})
			if err != nil {
				return inputError(err)
			}
			written, err := exportOpenSM(out, l.Graph, r)
			if err != nil {
				return err
			}
			for _, p := range written {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	c.Flags().StringVar(&fabricPath, "fabric", "", "fabric dump the tables are for (default: TABLES' fabric.topo)")
	c.Flags().BoolVar(&useDefault, "default", false, "the tables are for the embedded default fabric")
	c.Flags().StringVarP(&out, "output", "o", "", "directory to write into (created if needed)")
	c.MarkFlagsMutuallyExclusive("fabric", "default")
	_ = c.MarkFlagRequired("output")
	return c
}

// exportOpenSM writes the OpenSM dumps of r into dir and returns their
// paths.
func exportOpenSM(dir string, g *fabric.Graph, r *lft.Routing) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range []struct {
		name  string
		write func(string, *fabric.Graph, *lft.Routing) error
	}{{lft.LFTsFile, lft.WriteOpenSMLFTsFile}, {lft.OpenSMSL2VLFile, lft.WriteOpenSMSL2VLFile}} {
		p := filepath.Join(dir, f.name)
		if err := f.write(p, g, r); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}
