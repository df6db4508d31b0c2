package main

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/defaults"
)

func newInfoCmd() *cobra.Command {
	var useDefault, verbose bool
	c := &cobra.Command{
		Use:   "info [FILE]",
		Short: "Summarise an ibnetdiscover dump: nodes, cables, LIDs, hop counts, warnings",
		Example: `  nuesm info fabric.topo
  nuesm info --default          # the embedded default fabric
  nuesm info -v fabric.topo     # list every warning`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := loadFabric(args, useDefault)
			if err != nil {
				return err
			}
			return printInfo(cmd.OutOrStdout(), res, verbose)
		},
	}
	c.Flags().BoolVar(&useDefault, "default", false, "use the embedded default fabric ("+defaults.Generator+")")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every warning")
	return c
}

// loadFabric parses the file named in args (within
// defaults.MaxDumpBytes), or the embedded default, as it is (no LIDs
// assigned).
func loadFabric(args []string, useDefault bool) (*ibnetdiscover.Result, error) {
	path, err := fabricArg(args, useDefault)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return defaults.Fabric()
	}
	limit, err := defaults.MaxDumpBytes()
	if err != nil {
		return nil, usageError(err)
	}
	b, err := ibnetdiscover.ReadDumpFile(path, limit)
	if err != nil {
		return nil, inputError(err)
	}
	res, err := ibnetdiscover.Parse(bytes.NewReader(b), path)
	return res, inputError(err)
}

func printInfo(w io.Writer, res *ibnetdiscover.Result, verbose bool) error {
	f := res.Fabric
	g, err := fabric.Compile(f)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	row("fabric", "%s", res.File)
	row("nodes", "%d switches, %d CAs, %d routers", f.Count(fabric.Switch), f.Count(fabric.CA), f.Count(fabric.Router))
	links := f.Links()
	row("cables", "%d; %d channels between switches, %d loopback cables", len(links), g.NumChannels(), g.Loopbacks)
	for _, lc := range f.LinkCounts() {
		row("", "%-14s %-4s %-6s %d", lc.Ends, lc.Width, lc.Speed, lc.Count)
	}
	eps := f.Endpoints()
	unassigned, lmcs := 0, map[uint8]int{}
	for _, r := range eps {
		p := f.Port(r)
		if p.LID == 0 {
			unassigned++
		}
		lmcs[p.LMC]++
	}
	row("LIDs", "%d endpoints, max LID %d, %d without a LID (lid 0)", len(eps), f.MaxLID(), unassigned)
	switch {
	case len(eps) > 0 && unassigned == len(eps):
		row("", "WARNING: no endpoint has a LID: the dump was taken before a subnet manager assigned LIDs; route and serve assign them in port GUID order, which need not match the subnet manager's")
	case unassigned > 0:
		row("", "WARNING: %d endpoints have no LID; route and serve assign them in port GUID order", unassigned)
	}
	for lmc := uint8(0); lmc < 8; lmc++ {
		if n := lmcs[lmc]; n > 0 && (lmc > 0 || len(lmcs) > 1) {
			row("", "LMC %d: %d endpoints", lmc, n)
		}
	}
	st := g.Hops()
	conn := "connected"
	if !st.Connected {
		conn = "NOT connected"
	}
	row("switch graph", "%s, diameter %d, CA-switch diameter %d", conn, st.Diameter, st.CADiameter)
	row("hops", "%.3f avg between CA-bearing switches, %.3f avg between CAs", st.AvgSwitchHops, st.AvgTermHops)
	if st.Unreachable > 0 {
		row("", "%d ordered CA pairs cannot reach each other", st.Unreachable)
	}
	comps := f.Components()
	row("components", "%d (largest %d nodes)", len(comps), len(comps[0]))
	row("warnings", "%d", len(res.Warnings))
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, wn := range res.Warnings {
		if !verbose && i == 5 {
			fmt.Fprintf(w, "  … %d more (use -v)\n", len(res.Warnings)-5)
			break
		}
		fmt.Fprintf(w, "  %s\n", wn)
	}
	return nil
}
