package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/lft"
)

func init() { register(newDiffCmd) }

// tablePairFlags say where the fabric of two table sets comes from.
type tablePairFlags struct {
	fabric     string
	useDefault bool
}

const tablesHelp = `OLD and NEW are table sets of the same fabric: a directory written by
"nuesm route -o" or published by "nuesm serve" (nuesm.lft or, in older
sets, opensm-lfts.dump; nuesm.sl and nuesm.sl2vl or opensm-sl2vl.dump when
present), or an LFT file (nuesm.lft, opensm-lfts.dump, ibroute or
dump_lfts output; the SL files beside it are read when present). Without
SL files every path uses SL 0. The fabric is --fabric, else the embedded default with
--default, else NEW's fabric.topo (route and serve write it beside the
tables). Both sets are read against that fabric, the fabric as it is now:
OLD entries over failed links are dead, and tables of switches it no longer
has are ignored (an OLD with tables for none of its switches is refused:
a set of another fabric).`

func (tf *tablePairFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&tf.fabric, "fabric", "", "fabric dump the tables are for (default: NEW's fabric.topo)")
	c.Flags().BoolVar(&tf.useDefault, "default", false, "the tables are for the embedded default fabric")
}

// load reads the fabric and the two table sets.
func (tf *tablePairFlags) load(w io.Writer, oldArg, newArg string) (*fabric.Graph, *lft.Routing, *lft.Routing, error) {
	var fabricArgs []string
	switch {
	case tf.fabric != "":
		fabricArgs = []string{tf.fabric}
	case !tf.useDefault:
		p, err := setFabric("NEW", newArg, fabricFlagHint)
		if err != nil {
			return nil, nil, nil, err
		}
		fabricArgs = []string{p}
	}
	l, err := loadGraph(w, fabricArgs, tf.useDefault)
	if err != nil {
		return nil, nil, nil, err
	}
	g := l.Graph
	old, err := readTableSet(oldArg, g, true)
	if err != nil {
		return nil, nil, nil, inputError(fmt.Errorf("OLD: %w", tf.misfit(oldArg, fabricArgs, l.File, err)))
	}
	if err := foreignOld(oldArg, g, old, l.File); err != nil {
		return nil, nil, nil, err
	}
	new, err := readTableSet(newArg, g, false)
	if err != nil {
		return nil, nil, nil, inputError(fmt.Errorf("NEW: %w", tf.misfit(newArg, fabricArgs, l.File, err)))
	}
	return g, old, new, nil
}

// misfit adds to err, a set's tables naming LIDs, switches or ports the
// fabric read (fabricArgs, none for the default; fabricFile in messages)
// does not have, that the set does not fit that fabric, and which option
// names the right one. Generated fabrics share GUID ranges, so another
// fabric's set reads as this one's with conflicting LIDs ("routed twice")
// rather than as unknown switches. A set beside its own fabric.topo, the
// fabric read, is damaged instead and err stays as it is.
func (tf *tablePairFlags) misfit(arg string, fabricArgs []string, fabricFile string, err error) error {
	fit := false
	for _, e := range []error{lft.ErrDuplicate, lft.ErrLIDRange, lft.ErrUnknownSwitch, lft.ErrMissingSwitch, lft.ErrUnknownPort, lft.ErrPortRange} {
		fit = fit || errors.Is(err, e)
	}
	if !fit {
		return err
	}
	own, ok := lft.FabricPath(arg)
	if ok && sameFabric(own, fabricArgs) {
		return err
	}
	name := "the fabric " + fabricFile
	if tf.useDefault {
		name = "the embedded default fabric (--default)"
	}
	hint := "give --fabric with the dump it was routed for"
	if ok {
		hint = "give --fabric " + own
		if tf.useDefault {
			hint += ", or leave out --default to read NEW's " + lft.FabricFile
		}
	}
	return fmt.Errorf("%s does not fit %s: %w; a set of another fabric? %s", arg, name, err, hint)
}

// sameFabric reports whether the dump at path has the same text as the
// fabric read: the file of fabricArgs, or the embedded default.
func sameFabric(path string, fabricArgs []string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if len(fabricArgs) == 0 {
		return string(b) == defaults.Dump()
	}
	f, err := os.ReadFile(fabricArgs[0])
	return err == nil && bytes.Equal(b, f)
}

// foreignOld refuses OLD when it routes nothing and only because every
// switch it has tables for is missing from the fabric: a set of another
// fabric, which read leniently would pass for empty tables and turn the
// diff into "every entry new".
func foreignOld(oldArg string, g *fabric.Graph, old *lft.Routing, fabricFile string) error {
	if old.Entries() > 0 {
		return nil
	}
	_, err := lft.ReadTableSet(oldArg, g, lft.ReadOptions{AllowMissingSwitches: true})
	if !errors.Is(err, lft.ErrUnknownSwitch) {
		return nil
	}
	return inputError(fmt.Errorf("OLD %s: %w: it has tables only for switches the fabric (%s) does not have; a table set of another fabric?", oldArg, lft.ErrUnknownSwitch, fabricFile))
}

// readTableSet reads a directory or dump file (see tablesHelp). Old tables
// may name switches the fabric lost and miss switches it gained.
func readTableSet(path string, g *fabric.Graph, lenient bool) (*lft.Routing, error) {
	r, err := lft.ReadTableSet(path, g, lft.ReadOptions{SkipUnknownSwitches: lenient, AllowMissingSwitches: lenient})
	if err != nil {
		return nil, err
	}
	r.Engine = path
	return r, nil
}

func newDiffCmd() *cobra.Command {
	var (
		tf       tablePairFlags
		asJSON   bool
		entries  int
		switches int
	)
	c := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Compare two table sets: changed LFT entries and blocks, SLs, SL2VL",
		Long: `Compare two table sets of one fabric: per switch the LFT entries that change
and the 64-entry blocks a subnet manager has to write, path SL changes per
destination, SL2VL changes, and a summary. --json prints the same as JSON.

` + tablesHelp,
		Example: `  nuesm route fabric.topo --engine nue -o old/ && nuesm route fabric.topo --engine dfsssp -o new/
  nuesm diff old/ new/
  nuesm diff out/serve/gen-000001 out/serve/current
  nuesm diff --fabric now.topo before/opensm-lfts.dump after/ --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, old, new, err := tf.load(cmd.ErrOrStderr(), args[0], args[1])
			if err != nil {
				return err
			}
			d, err := lft.Diff(g, old, new)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(d.Report(g, entries))
			}
			if d.Empty() {
				fmt.Fprintln(out, "no changes")
				return nil
			}
			return d.Report(g, entries).WriteText(out, switches)
		},
	}
	tf.add(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().IntVar(&entries, "entries", 8, "changed entries listed per switch (-1 = all)")
	c.Flags().IntVar(&switches, "switches", 20, "switches listed (-1 = all)")
	return c
}
