package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

func newDotCmd() *cobra.Command {
	var tables, loads, out string
	var useDefault, terminals bool
	c := &cobra.Command{
		Use:   "dot FABRIC [--tables DIR | --loads FILE.csv] [-o FILE]",
		Short: "Draw a fabric as a graphviz graph, links coloured by routing or simulated load",
		Long: `Write the fabric as a graphviz (DOT) graph: a node per switch, an edge per
cable, labelled with its ports. With --tables (a directory written by
nuesm route, or an LFT dump) the tables are verified and every cable is
coloured by its paths (edge forwarding index, over the busiest channel's);
with --loads (a file written by flitsim run --link-loads) by its simulated
utilisation. Colours run from grey (idle) over yellow to red; the label
gives both directions. Render with graphviz: dot -Tsvg, or neato/sfdp for
large fabrics.`,
		Example: `  nuesm dot fabric.topo | dot -Tsvg -o fabric.svg
  nuesm dot fabric.topo --tables out/ -o hot.dot && sfdp -Tsvg hot.dot -o hot.svg
  flitsim run fabric.topo --lfts out/ --link-loads loads.csv && nuesm dot fabric.topo --loads loads.csv -o sim.dot`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tables != "" && loads != "" {
				return fmt.Errorf("give --tables or --loads, not both")
			}
			l, err := loadGraph(cmd.ErrOrStderr(), args, useDefault)
			if err != nil {
				return err
			}
			g := l.Graph
			opt := fabric.DOTOptions{Terminals: terminals}
			switch {
			case tables != "":
				opt.Load, err = pathLoads(g, tables)
				opt.LoadName = "paths over the busiest channel's (" + tables + ")"
			case loads != "":
				opt.Load, err = readLoads(g, loads)
				opt.LoadName = "simulated utilisation (" + loads + ")"
			}
			if err != nil {
				return err
			}
			write := func(w io.Writer) error { return fabric.WriteDOT(w, g, opt) }
			if out == "" || out == "-" {
				return write(cmd.OutOrStdout())
			}
			return atomicfile.WriteFile(out, write, 0o644)
		},
	}
	fl := c.Flags()
	fl.StringVar(&tables, "tables", "", "colour links by the paths of these tables (nuesm route's directory or an LFT dump)")
	fl.StringVar(&loads, "loads", "", "colour links by the utilisation in this flitsim run --link-loads file")
	fl.StringVarP(&out, "output", "o", "", "output file, written atomically (default stdout)")
	fl.BoolVar(&useDefault, "default", false, "use the embedded default fabric")
	fl.BoolVar(&terminals, "terminals", false, "also draw the CA and router ports")
	return c
}

// pathLoads reads and verifies tables and returns every channel's paths
// over the busiest channel's.
func pathLoads(g *fabric.Graph, dir string) ([]float64, error) {
	r, err := lft.ReadTableSet(dir, g, lft.ReadOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := cdg.Verify(g, r, cdg.Options{}); err != nil {
		return nil, fmt.Errorf("%s: tables fail verification: %w", dir, err)
	}
	m, err := routing.Measure(g, r, 0)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(m.EFI))
	for c, e := range m.EFI {
		if m.MaxEFI > 0 {
			out[c] = float64(e) / float64(m.MaxEFI)
		}
	}
	return out, nil
}

func readLoads(g *fabric.Graph, path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return flitsim.ReadLinkLoads(f, path, g)
}
