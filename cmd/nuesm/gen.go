package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/topo"
)

func newGenCmd() *cobra.Command {
	var kinds []string
	for _, g := range topo.Generators() {
		kinds = append(kinds, fmt.Sprintf("  %-10s %s", g.Kind, g.Short))
	}
	gen := &cobra.Command{
		Use:   "gen <kind> [flags] -o FILE",
		Short: "Generate a fabric of a known shape as an ibnetdiscover dump",
		Long: "Generate a fabric of a known shape (deterministic; seeded where random),\n" +
			"optionally with injected link/switch failures, and write it atomically.\n\nKinds:\n" +
			strings.Join(kinds, "\n"),
		Example: `  nuesm gen torus --dims 8x8x8 --hosts 4 -o torus.topo
  nuesm gen clos3 --radix 36 -o clos.topo
  nuesm gen dragonfly --p 8 --a 16 --h 8 -o df.topo
  nuesm gen fattree --k 12 --n 3 --fail-link-fraction 0.03 --fail-seed 7 -o ft.topo
  nuesm gen ring --switches 5 --shortcut 2,4 --format ibsim -o ring.net`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, g := range topo.Generators() {
		gen.AddCommand(newGenKindCmd(g))
	}
	return gen
}

// genFlags are the flags every generator shares.
type genFlags struct {
	out, format  string
	failLinks    int
	failLinkFrac float64
	failSw       int
	failSwFrac   float64
	failSeed     uint64
	skipCritical bool
}

func newGenKindCmd(g topo.Generator) *cobra.Command {
	var gf genFlags
	vals := map[string]*string{}
	c := &cobra.Command{
		Use:     g.Kind,
		Short:   g.Short,
		Example: fmt.Sprintf("  nuesm gen %s %s -o fabric.topo", g.Kind, g.Example),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params := map[string]string{}
			for name, v := range vals {
				if cmd.Flags().Changed(name) {
					params[name] = *v
				}
			}
			return runGen(cmd, g.Kind, params, gf)
		},
	}
	for _, p := range g.Params {
		help := p.Help
		if p.Default == "" {
			help += " (optional)"
		}
		vals[p.Name] = c.Flags().String(p.Name, p.Default, help)
	}
	fl := c.Flags()
	fl.StringVarP(&gf.out, "output", "o", "", "output file, written atomically (\"-\" for stdout)")
	fl.StringVar(&gf.format, "format", "ibnetdiscover", "ibnetdiscover (dump) or ibsim (net file for ibsim)")
	fl.IntVar(&gf.failLinks, "fail-links", 0, "remove this many switch-to-switch cables")
	fl.Float64Var(&gf.failLinkFrac, "fail-link-fraction", 0, "remove this fraction (0..1) of switch-to-switch cables")
	fl.IntVar(&gf.failSw, "fail-switches", 0, "remove this many switches")
	fl.Float64Var(&gf.failSwFrac, "fail-switch-fraction", 0, "remove this fraction (0..1) of switches")
	fl.Uint64Var(&gf.failSeed, "fail-seed", 1, "seed of the failure injection")
	fl.BoolVar(&gf.skipCritical, "skip-critical", false, "repair (skip) failures that would disconnect hosts, as fail-in-place does")
	_ = c.MarkFlagRequired("output")
	return c
}

func runGen(cmd *cobra.Command, kind string, params map[string]string, gf genFlags) error {
	if gf.format != "ibnetdiscover" && gf.format != "ibsim" {
		return usageError(fmt.Errorf("--format %q, expected ibnetdiscover or ibsim", gf.format))
	}
	tp, err := topo.Generate(kind, params)
	if err != nil {
		return usageError(err) // the generator's parameters are flags
	}
	f := tp.Fabric
	spec := topo.FailureSpec{
		Links: gf.failLinks, LinkFraction: gf.failLinkFrac,
		Switches: gf.failSw, SwitchFraction: gf.failSwFrac,
		Seed: gf.failSeed, SkipCritical: gf.skipCritical,
	}
	var fails []topo.Failure
	if spec.Links+spec.Switches > 0 || spec.LinkFraction+spec.SwitchFraction > 0 {
		if f, fails, err = topo.InjectFailures(f, spec); err != nil {
			return usageError(err) // a failure spec the fabric cannot meet
		}
	}
	write := ibnetdiscover.WriteFile
	if gf.format == "ibsim" {
		write = ibnetdiscover.WriteIBSimFile
	}
	if gf.out == "-" {
		if gf.format == "ibsim" {
			err = ibnetdiscover.WriteIBSim(os.Stdout, f)
		} else {
			err = ibnetdiscover.Write(os.Stdout, f)
		}
	} else if err = write(gf.out, f); err != nil {
		err = fmt.Errorf("%s not written: %w", gf.out, err)
	}
	if err != nil {
		return err
	}
	critical := 0
	for _, fl := range fails {
		if fl.Critical {
			critical++
		}
	}
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "%s %s: %d switches, %d CAs, %d cables, radix %d",
		tp.Kind, tp.Params, f.Count(fabric.Switch), f.Count(fabric.CA), len(f.Links()), tp.Radix)
	if len(fails) > 0 {
		fmt.Fprintf(w, "; %d failures injected (%d critical)", len(fails), critical)
	}
	if gf.out != "-" {
		fmt.Fprintf(w, " -> %s", gf.out)
	}
	fmt.Fprintln(w)
	return nil
}
