package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcaudit"
)

func init() { registerStudy(newRSIVCCmd) }

func newRSIVCCmd() *cobra.Command {
	var rf rsiFlags
	var policies, misroutes string
	var noUTurn, cycles bool
	c := &cobra.Command{
		Use:   "rsi-vc",
		Short: "RSI VC rules judged under both routings inside super nodes: every minimal port and dimension order (seed 000 §IV-B)",
		Long: `Audit VC rules on RSI networks (as 'nuesm study vc-audit rsi --minimal
tables') twice: with the two-level tables holding every minimal port inside
a super node, and with dimension-order routing there (--local dor). One row
per network, misroute mode and rule; each verdict says whether its cycle
stays inside one super node or runs through several. Dimension order needs
a layer 1 with dimensions: BR (butterfly-AxB), HR (hypercube-N), DF (full-N).`,
		Example: `  nuesm study rsi-vc --layer1 BR,HR --supernodes 3,8
  nuesm study rsi-vc --layer1 BR --supernodes 3 --misroute none --policy phase,global-hops --cycles`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRSIVC(cmd.OutOrStdout(), rf, policies, misroutes, noUTurn, cycles)
		},
	}
	rf.add(c, "3,8")
	fl := c.Flags()
	rf.layer1, fl.Lookup("layer1").DefValue = "BR,HR", "BR,HR"
	fl.StringVar(&policies, "policy", "rsi-paper,phase", "VC policies, comma-separated (as vc-audit)")
	fl.StringVar(&misroutes, "misroute", "none,lar-own,lar-toward", "misroute modes, comma-separated (as vc-audit)")
	fl.BoolVar(&noUTurn, "no-uturn", false, "a misroute may not leave through the channel the packet came in on")
	fl.BoolVar(&cycles, "cycles", false, "print every cycle and overflowing hop after the table")
	return c
}

func runRSIVC(w io.Writer, rf rsiFlags, policies, misroutes string, noUTurn, cycles bool) error {
	pols, mrs, err := parseVCAudit(policies, misroutes)
	if err != nil {
		return err
	}
	cfgs, err := rf.configs()
	if err != nil {
		return err
	}
	locals := []rsi.Local{rsi.AnyMinimal, rsi.DimOrder}
	fmt.Fprintf(w, "Minimal routing: the two-level tables; U-turn misroutes: %v.\n\n", !noUTurn)
	fmt.Fprintln(w, "| network | misroute | VC rule | VCs | any minimal port | dimension order |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	var notes []string
	for _, c := range cfgs {
		var nets [2]*rsiNet
		for i, l := range locals {
			if nets[i], err = buildRSI(c, l); err != nil {
				return err
			}
		}
		for _, m := range mrs {
			for _, p := range pols {
				var cell [2]string
				for i, n := range nets {
					r, err := vcaudit.Audit(vcaudit.Config{Graph: n.tb.G, Tables: n.tb, Misroute: m, Policy: p, NoUTurn: noUTurn})
					if err != nil {
						return err
					}
					verdict, why := auditVerdict(r, fmt.Sprintf("%s, %s + %s", n.name, p.Name, m), false)
					cell[i] = cycleWhere(verdict, r)
					notes = append(notes, why...)
				}
				fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s |\n", nets[0].name, m, p.Name, p.VCs, cell[0], cell[1])
			}
		}
	}
	if !cycles {
		notes = nil
	}
	writeAuditNotes(w, notes, pols)
	return nil
}

// cycleWhere adds to a verdict where its cycle lies: inside one super
// node or through several.
func cycleWhere(verdict string, r *vcaudit.Result) string {
	if r.Acyclic {
		return verdict
	}
	where := fmt.Sprintf("through %d super nodes", r.CycleGroups)
	if r.CycleGroups == 1 {
		where = "inside 1 super node"
	}
	head := fmt.Sprintf("CYCLE of %d", len(r.Cycle.Channels))
	return strings.Replace(verdict, head, head+" "+where, 1)
}
