package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
)

func init() { register(newPlanCmd) }

type planFlags struct {
	tf         tablePairFlags
	vls        int
	reorder    bool
	noPause    bool
	verify     bool
	oneShot    bool
	asJSON     bool
	exhaustive int
	switchDel  bool
}

func newPlanCmd() *cobra.Command {
	var pf planFlags
	c := &cobra.Command{
		Use:   "plan OLD NEW [--verify] [--json]",
		Short: "Plan a consistent update from OLD to NEW tables, safe at every step",
		Long: `Compute an update plan from the OLD tables to the NEW ones: ordered steps of
LFT, SL and SL2VL writes (each step's writes may land in any order), barriers
that wait until packets of earlier steps have left the fabric, and drain
phases (pause, write, resume) where needed. Every intermediate state is
loop-free, delivers every connected pair and keeps the dependencies of
packets in flight (old, new and mixed paths) acyclic per VL. Pairs whose
path changes stay in order by pausing them across the change; with
--allow-reorder they keep injecting and only loop and deadlock freedom are
kept for them. With --no-pause a plan that needs a drain phase is an error
(exit status 4) and the drain fallback is printed.

--verify proves the plan: every state of small steps one by one, larger
steps by the union argument, and the in-flight dependencies of every epoch;
it prints the proof obligations met. --one-shot plans nothing and verifies
what an unordered subnet manager does (every change at once).

` + tablesHelp,
		Example: `  nuesm plan old/ new/ --verify          # two "nuesm route -o" directories
  nuesm plan out/serve/previous out/serve/current --verify   # serve keeps the previous generation
  nuesm plan --fabric now.topo old/ new/ --allow-reorder --vls 8 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, old, new, err := pf.tf.load(cmd.ErrOrStderr(), args[0], args[1])
			if err != nil {
				return err
			}
			return runPlan(cmd, g, old, new, pf)
		},
	}
	pf.tf.add(c)
	fl := c.Flags()
	fl.IntVar(&pf.vls, "vls", 0, "data VLs available during the transition, 1..15 (default: 8, or more if the tables use more)")
	fl.BoolVar(&pf.reorder, "allow-reorder", false, "let pairs whose path changes keep injecting (out-of-order delivery possible)")
	fl.BoolVar(&pf.noPause, "no-pause", false, "fail instead of planning drain phases")
	fl.BoolVar(&pf.verify, "verify", false, "prove the plan and print the proof obligations")
	fl.BoolVar(&pf.oneShot, "one-shot", false, "verify the unordered all-at-once update instead of planning")
	fl.BoolVar(&pf.asJSON, "json", false, "print JSON")
	fl.IntVar(&pf.exhaustive, "exhaustive", 0, "check steps of up to N write units state by state (0 = 8, -1 = never)")
	fl.BoolVar(&pf.switchDel, "switch-delivery", false, "also prove every switch's own packets delivered in every state")
	return c
}

func runPlan(cmd *cobra.Command, g *fabric.Graph, old, new *lft.Routing, pf planFlags) error {
	ctx := cmd.Context()
	vls := pf.vls
	if vls == 0 {
		vls = max(plan.DefaultMaxVLs, old.NumVLs, new.NumVLs)
	}
	opt := plan.Options{MaxVLs: vls, AllowReorder: pf.reorder, NoPause: pf.noPause, MaxExhaustive: pf.exhaustive, SwitchDelivery: pf.switchDel}
	var (
		p     *plan.Plan
		drain *plan.DrainError
	)
	if pf.oneShot {
		d, err := lft.Diff(g, old, new)
		if err != nil {
			return err
		}
		p = plan.OneShot(d)
		p.AllowReorder, p.MaxVLs = pf.reorder, vls
		pf.verify = true
	} else {
		var err error
		p, err = plan.Build(ctx, g, old, new, opt)
		if need := max(old.NumVLs, new.NumVLs); errors.Is(err, plan.ErrUnsafeTables) && pf.vls > 0 && pf.vls < need {
			return unsafeError(fmt.Errorf("%w (--vls %d: the tables use %d VLs)", err, pf.vls, need))
		}
		if errors.Is(err, plan.ErrUnsafeTables) {
			return unsafeError(err)
		}
		if err != nil && !errors.As(err, &drain) {
			return err
		}
	}
	pj := p.JSON(g)
	if drain != nil {
		pj.Fallback = &plan.DrainReport{Dests: drain.Dests, Pairs: drain.Pairs, Reason: drain.Reason}
	}
	var rep *plan.Report
	var verr error
	if pf.verify {
		rep, verr = plan.Verify(ctx, g, old, new, p, opt)
		if rep == nil {
			return verr
		}
		pj.Verify = rep.JSON()
	}
	out := cmd.OutOrStdout()
	if pf.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(pj); err != nil {
			return err
		}
	} else {
		printPlan(out, p, pj, rep)
	}
	switch {
	case verr != nil:
		return unsafeError(fmt.Errorf("the plan is not safe: %w", verr))
	case drain != nil:
		return unsafeError(fmt.Errorf("%w; without --no-pause the plan above drains them", drain))
	}
	return nil
}

// printPlan prints the steps (or, after --verify, the report, which lists
// them with what was proven) and the metrics.
func printPlan(w io.Writer, p *plan.Plan, pj *plan.PlanJSON, rep *plan.Report) {
	m := pj.Metrics
	fmt.Fprintf(w, "plan:           %d steps (%d write, %d barriers, %d drain phases), %d LFT entries in %d blocks, %d SL changes, %d SL2VL tables\n",
		m.Steps, m.WriteSteps, m.Barriers, m.DrainPhases, m.Writes, m.Blocks, m.SLWrites, m.SL2VLWrites)
	fmt.Fprintf(w, "pairs:          %d connected (CA and router sources to every other port's LID), %d change path/SL/VL, %d lost by the old tables, %d paused\n", m.Pairs, m.ChangedPairs, m.LostPairs, m.PausedPairs)
	if len(m.Strategies) > 0 {
		fmt.Fprintf(w, "destinations:  ")
		for _, s := range []string{"dark", "in-place", "sl-last", "sl-first", "fresh-sl", "drained"} {
			if n := m.Strategies[s]; n > 0 {
				fmt.Fprintf(w, " %s %d", s, n)
			}
		}
		fmt.Fprintln(w)
	}
	for _, d := range p.Dests {
		if d.Strategy == plan.Drained && d.Why != "" {
			fmt.Fprintf(w, "drained:        e.g. LID %d: %s\n", d.DLID, d.Why)
			break
		}
	}
	if pj.Fallback != nil {
		fmt.Fprintf(w, "NO LIVE PLAN:   %d destinations need a drain phase (%d pairs); the plan below is the drain fallback\n", len(pj.Fallback.Dests), pj.Fallback.Pairs)
	}
	if rep != nil {
		fmt.Fprint(w, rep.String())
		return
	}
	for _, s := range pj.Steps {
		switch s.Kind {
		case plan.Write:
			n := 0
			for _, sw := range s.LFT {
				n += len(sw.Entries)
			}
			fmt.Fprintf(w, "step %-3d write  %6d entries %5d blocks on %d switches %4d SLs %3d SL2VL  %s\n", s.Index, n, s.Blocks, len(s.LFT), len(s.SL), len(s.SL2VL), s.Note)
		case plan.Pause, plan.Resume:
			var pairs int64
			for _, pa := range s.Paused {
				pairs += pa.Pairs
			}
			fmt.Fprintf(w, "step %-3d %-6s %d pairs to %d LIDs  %s\n", s.Index, s.Kind, pairs, len(s.Paused), s.Note)
		default:
			fmt.Fprintf(w, "step %-3d %-6s %s\n", s.Index, s.Kind, s.Note)
		}
	}
}
