package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcaudit"
	"github.com/nuesm/nuesm/studies/vcpolicy"
	"github.com/nuesm/nuesm/topo"
)

func init() { registerStudy(newVCAuditCmd) }

func newVCAuditCmd() *cobra.Command {
	var policies, misroutes, minimal, local string
	var params []string
	var long, noUTurn bool
	c := &cobra.Command{
		Use:   "vc-audit KIND [--param NAME=VALUE…]",
		Short: "Judge VC policies: build the CDG a policy plus routing creates and report acyclic or the cycle",
		Long: `Generate a fabric (any 'nuesm gen' kind; groups = its Dragonfly groups or
RSI super nodes), route it adaptively (every minimal port, or the RSI
two-level tables of seed 000 §IV-A with --minimal tables), optionally with
one misroute per packet, assign VCs by each policy, and check the channel
dependency graph over (channel, VC) for a cycle. --local dor routes inside
RSI super nodes by dimension order instead of by every minimal port.

Policies: ` + vcPolicyList() + `, hops:N (Gunther's total-hop rule with
N VCs), or a spec vcs=N,local=COUNTER[+K],global=COUNTER[+K][,clamp] with
counters zero, hops, local-hops, global-hops, hops-in-group, phase, into-dest.
Misroutes: none; lar-own / lar-toward (LAR, seed 000 Algorithm 1, both
readings of "ports to other super nodes"); source-global (seed 002 §V-D:
at the source only, onto an own global port); any (one non-minimal hop).`,
		Example: `  nuesm study vc-audit rsi --param layer1=BR --param supernodes=3 --minimal tables --misroute none,lar-own --policy rsi-paper,phase,hops:8
  nuesm study vc-audit dragonfly --param p=2 --param a=4 --param h=2 --misroute none,source-global --policy one-vc,df-2vc
  nuesm study vc-audit fbfly --param dims=4x4x4 --policy hops:2,hops:3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVCAudit(cmd.OutOrStdout(), args[0], vcAuditFlags{params, vcRouting{minimal, local, noUTurn}, misroutes, policies, long})
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&params, "param", nil, "generator parameter NAME=VALUE (as 'nuesm gen KIND --NAME VALUE'); repeatable")
	fl.StringVar(&policies, "policy", "one-vc", "VC policies, comma-separated (a spec with commas: separate policies by ';')")
	fl.StringVar(&misroutes, "misroute", "none", "misroute modes, comma-separated")
	fl.StringVar(&minimal, "minimal", "auto", "minimal routing: shortest (every shortest-path port), tables (two-level tables: T1 in the group, T2 between groups), auto (tables for rsi and dragonfly)")
	fl.StringVar(&local, "local", "any", "with --minimal tables on rsi: routing inside super nodes, any (every minimal port) or dor (dimension order)")
	fl.BoolVar(&noUTurn, "no-uturn", false, "a misroute may not leave through the channel the packet came in on")
	fl.BoolVar(&long, "long", false, "print whole cycles, one channel per line")
	return c
}

func vcPolicyList() string {
	var n []string
	for _, p := range vcpolicy.Presets() {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

func splitVCPolicies(s string) []string {
	if strings.Contains(s, ";") {
		return strings.Split(s, ";")
	}
	if strings.Contains(s, "=") {
		return []string{s}
	}
	return strings.Split(s, ",")
}

// vcRouting is the minimal routing of an audit: shortest, tables or auto;
// inside super nodes any or dor; and whether misroutes may U-turn.
type vcRouting struct {
	minimal, local string
	noUTurn        bool
}

// vcAuditFlags are the command's flags as given: generator parameters, the
// minimal routing, the misroute and policy lists, and --long.
type vcAuditFlags struct {
	params              []string
	routing             vcRouting
	misroutes, policies string
	long                bool
}

func runVCAudit(w io.Writer, kind string, f vcAuditFlags) error {
	rt, misroutes, policies, long := f.routing, f.misroutes, f.policies, f.long
	minimal := rt.minimal
	pm := map[string]string{}
	for _, p := range f.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return usageError(fmt.Errorf("--param %q, expected NAME=VALUE", p))
		}
		pm[k] = v
	}
	pols, mrs, err := parseVCAudit(policies, misroutes)
	if err != nil {
		return err
	}
	local, err := rsi.ParseLocal(rt.local)
	if err != nil {
		return usageError(fmt.Errorf("--local: %w", err))
	}
	if minimal != "shortest" && minimal != "tables" && minimal != "auto" {
		return usageError(fmt.Errorf("--minimal %q, expected shortest, tables or auto", minimal))
	}
	tp, err := topo.Generate(kind, pm)
	if err != nil {
		return usageError(err) // KIND and --param name the fabric
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		return err
	}
	cfg := vcaudit.Config{Graph: g, NoUTurn: rt.noUTurn}
	if tp.Kind == "rsi" || tp.Kind == "dragonfly" {
		cfg.Group = tp.Group
		if minimal == "auto" {
			minimal = "tables"
		}
	}
	if minimal == "auto" {
		minimal = "shortest"
	}
	if minimal == "tables" {
		if cfg.Group == nil {
			return usageError(fmt.Errorf("--minimal tables needs a grouped fabric (rsi or dragonfly), not %s", tp.Kind))
		}
		if cfg.Tables, err = rsiTables(tp, g, local); err != nil {
			return err
		}
		if local != rsi.AnyMinimal {
			minimal += " (" + local.Describe() + " inside super nodes)"
		}
	} else if local != rsi.AnyMinimal {
		return usageError(fmt.Errorf("--local %s needs --minimal tables", local))
	}
	fmt.Fprintf(w, "%s %s: %d switches, %d channels; minimal routing: %s; U-turn misroutes: %v\n\n", tp.Kind, tp.Params, g.NumSwitches(), g.NumChannels(), minimal, !rt.noUTurn)
	fmt.Fprintln(w, "| policy | misroute | VCs | VCs wanted | longest path | CDG vertices | CDG edges | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var cycles []string
	for _, m := range mrs {
		for _, p := range pols {
			cfg.Misroute, cfg.Policy = m, p
			r, err := vcaudit.Audit(cfg)
			if err != nil {
				return err
			}
			verdict, why := auditVerdict(r, fmt.Sprintf("%s + %s", p.Name, m), long)
			cycles = append(cycles, why...)
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", p.Name, m, p.VCs, r.VCsWanted, r.MaxPath, r.Vertices, r.Edges, verdict)
		}
	}
	writeAuditNotes(w, cycles, pols)
	return nil
}

// parseVCAudit reads the --policy and --misroute lists; its errors are
// usage errors.
func parseVCAudit(policies, misroutes string) ([]vcpolicy.Policy, []vcaudit.Misroute, error) {
	var pols []vcpolicy.Policy
	for _, s := range splitVCPolicies(policies) {
		p, err := vcpolicy.Parse(s)
		if err != nil {
			return nil, nil, usageError(err)
		}
		pols = append(pols, p)
	}
	var mrs []vcaudit.Misroute
	for _, s := range strings.Split(misroutes, ",") {
		m, err := vcaudit.ParseMisroute(strings.TrimSpace(s))
		if err != nil {
			return nil, nil, usageError(err)
		}
		mrs = append(mrs, m)
	}
	return pols, mrs, nil
}

// auditVerdict condenses a result into a table cell and the notes that
// explain it (the cycle, an overflowing hop), each labelled with label.
func auditVerdict(r *vcaudit.Result, label string, long bool) (string, []string) {
	var notes []string
	verdict := "acyclic"
	if !r.Acyclic {
		verdict = fmt.Sprintf("CYCLE of %d", len(r.Cycle.Channels))
		text := r.Cycle.Error()
		if long {
			text = r.Cycle.Long()
		}
		notes = append(notes, fmt.Sprintf("%s:\n%s", label, text))
	}
	if r.Overflow > 0 {
		verdict += fmt.Sprintf("; %d hops overflow", r.Overflow)
		notes = append(notes, fmt.Sprintf("%s overflow: %s", label, r.OverflowExample))
	}
	if r.DeadlockFree() {
		verdict = "acyclic: deadlock-free"
	}
	return verdict, notes
}

// writeAuditNotes prints the cycles and overflows, then the policies.
func writeAuditNotes(w io.Writer, notes []string, pols []vcpolicy.Policy) {
	for _, c := range notes {
		fmt.Fprintf(w, "\n%s\n", c)
	}
	if len(pols) > 0 {
		fmt.Fprintln(w, "\npolicies:")
		for _, p := range pols {
			fmt.Fprintf(w, "- %s (%s): %s\n", p.Name, p, p.Doc)
		}
	}
}
