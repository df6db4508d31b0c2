package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

type verifyFlags struct {
	sl, sl2vl      string
	vls            int
	useDefault     bool
	switchSources  bool
	switchDelivery bool
	skipUnknown    bool
	allowMissing   bool
	metrics        bool
}

func newVerifyCmd() *cobra.Command {
	var vf verifyFlags
	c := &cobra.Command{
		Use:   "verify [FABRIC] TABLES [--sl FILE] [--sl2vl FILE]",
		Short: "Prove forwarding tables safe: delivery, no loops, acyclic CDG per VL",
		Long: `Verify forwarding tables against a fabric: every connected CA pair is
delivered, no forwarding loop, no dead end, VLs within the limit, and the
channel dependency graph over (channel, VL) is acyclic. TABLES is a table
set written by "nuesm route -o" or published by "nuesm serve" (a directory),
or an LFT file: nuesm.lft, OpenSM's opensm-lfts.dump (ours or OpenSM's
own), or ibroute / dump_lfts output. nuesm.sl and nuesm.sl2vl (or
opensm-sl2vl.dump) beside it are read when present, --sl and --sl2vl name
others; without SLs every path uses SL 0 (one VL). OpenSM's LIDs are mapped to the fabric's by port GUID.
Without FABRIC the fabric is the set's fabric.topo (or --default). The
first cycle is printed with switch names and ports. Exit status 4 when the
tables are not safe, 3 when they cannot be read. Every switch's own
packets (port 0) must be delivered too unless --switch-delivery=false:
ftree promises CA traffic only, and "nuesm route" accepts its tables so.`,
		Example: `  nuesm verify out/
  nuesm verify fabric.topo out/nuesm.lft --sl out/nuesm.sl --sl2vl out/nuesm.sl2vl
  nuesm verify fabric.topo /var/log/opensm-lfts.dump
  nuesm verify --default out/opensm-lfts.dump --sl out/nuesm.sl`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runVerify(cmd, args, vf) },
	}
	fl := c.Flags()
	fl.StringVar(&vf.sl, "sl", "", "SL file (nuesm.sl) giving the SL of every path")
	fl.StringVar(&vf.sl2vl, "sl2vl", "", "SL-to-VL tables: nuesm.sl2vl or opensm-sl2vl.dump")
	fl.IntVar(&vf.vls, "vls", lft.MaxVLs, "VL limit to check (1..15)")
	fl.BoolVar(&vf.useDefault, "default", false, "verify against the embedded default fabric")
	fl.BoolVar(&vf.switchSources, "switch-sources", false, "also walk paths from every switch, dependencies included")
	fl.BoolVar(&vf.switchDelivery, "switch-delivery", true, "also check that every switch's own packets are delivered (no dependencies)")
	fl.BoolVar(&vf.skipUnknown, "skip-unknown-switches", false, "ignore tables of switches the fabric does not have")
	fl.BoolVar(&vf.allowMissing, "allow-missing-switches", false, "accept tables that omit some switches")
	fl.BoolVar(&vf.metrics, "metrics", true, "print hop counts and edge forwarding index")
	return c
}

func runVerify(cmd *cobra.Command, args []string, vf verifyFlags) error {
	tables := args[len(args)-1]
	fabricArgs := args[:len(args)-1]
	if len(args) == 1 && !vf.useDefault {
		p, err := setFabric("TABLES", tables, "give FABRIC and TABLES, or --default")
		if err != nil {
			return err
		}
		fabricArgs = []string{p}
	}
	l, err := loadGraph(cmd.ErrOrStderr(), fabricArgs, vf.useDefault)
	if err != nil {
		return err
	}
	g := l.Graph
	r, err := lft.ReadTableSet(tables, g, lft.ReadOptions{SkipUnknownSwitches: vf.skipUnknown, AllowMissingSwitches: vf.allowMissing})
	if errors.Is(err, lft.ErrUnknownSwitch) {
		err = fmt.Errorf("%w (tables of another fabric? --skip-unknown-switches ignores the tables of switches %s does not have)", err, l.File)
	}
	if err != nil {
		return inputError(err)
	}
	if vf.sl != "" {
		if r.SL, r.NumVLs, err = lft.ReadSLFile(vf.sl, g); err != nil {
			return inputError(err)
		}
	}
	if vf.sl2vl != "" {
		if r.SL2VL, err = lft.ReadSL2VLFile(vf.sl2vl, g); err != nil {
			return inputError(err)
		}
	}
	rep, verr := cdg.Verify(g, r, cdg.Options{MaxVLs: vf.vls, SwitchSources: vf.switchSources, SwitchDelivery: vf.switchDelivery})
	if rep == nil {
		return inputError(verr)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "tables:         %s\n", tables)
	fmt.Fprint(out, rep.String())
	fmt.Fprintf(out, "counted:        pairs are ordered (source port, destination port) pairs of the %d source ports: CA and router ports%s\n",
		rep.Sources, map[bool]string{true: " and the switches' own ports (port 0)", false: ""}[vf.switchDelivery || vf.switchSources])
	if vf.metrics && rep.Delivered == rep.Pairs {
		if m, err := routing.Measure(g, r, 0); err == nil {
			fmt.Fprintf(out, "hops:           min %d, avg %.3f, max %d\n", m.MinHops, m.AvgHops, m.MaxHops)
			fmt.Fprintf(out, "EFI:            max %d, avg %.1f\n", m.MaxEFI, m.AvgEFI)
		}
	}
	if verr != nil {
		if vf.switchDelivery && !vf.switchSources && caSafe(g, r, vf) {
			verr = fmt.Errorf("%w (CA and router traffic alone is safe: tables of an engine that promises only that, such as ftree, pass with --switch-delivery=false)", verr)
		}
		return unsafeError(fmt.Errorf("tables are not safe: %w", verr))
	}
	return nil
}

// caSafe reports whether r passes without the switches' own packets:
// what ftree promises, and what nuesm route accepts from it.
func caSafe(g *fabric.Graph, r *lft.Routing, vf verifyFlags) bool {
	_, err := cdg.Verify(g, r, cdg.Options{MaxVLs: vf.vls})
	return err == nil
}
