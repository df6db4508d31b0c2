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
	var policies, misroutes, minimal string
	var params []string
	var long, noUTurn bool
	c := &cobra.Command{
		Use:   "vc-audit KIND [--param NAME=VALUE…]",
		Short: "Judge VC policies: build the CDG a policy plus routing creates and report acyclic or the cycle",
		Long: `Generate a fabric (any 'nuesm gen' kind; groups = its Dragonfly groups or
RSI super nodes), route it adaptively (every minimal port, or the RSI
two-level tables of seed 000 §IV-A with --minimal tables), optionally with
one misroute per packet, assign VCs by each policy, and check the channel
dependency graph over (channel, VC) for a cycle.

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
			return runVCAudit(cmd.OutOrStdout(), args[0], params, minimal, misroutes, policies, long, noUTurn)
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&params, "param", nil, "generator parameter NAME=VALUE (as 'nuesm gen KIND --NAME VALUE'); repeatable")
	fl.StringVar(&policies, "policy", "one-vc", "VC policies, comma-separated (a spec with commas: separate policies by ';')")
	fl.StringVar(&misroutes, "misroute", "none", "misroute modes, comma-separated")
	fl.StringVar(&minimal, "minimal", "auto", "minimal routing: shortest (every shortest-path port), tables (two-level tables: T1 in the group, T2 between groups), auto (tables for rsi and dragonfly)")
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

func runVCAudit(w io.Writer, kind string, params []string, minimal, misroutes, policies string, long, noUTurn bool) error {
	pm := map[string]string{}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return usageError(fmt.Errorf("--param %q, expected NAME=VALUE", p))
		}
		pm[k] = v
	}
	var pols []vcpolicy.Policy
	for _, s := range splitVCPolicies(policies) {
		p, err := vcpolicy.Parse(s)
		if err != nil {
			return usageError(err)
		}
		pols = append(pols, p)
	}
	var mrs []vcaudit.Misroute
	for _, s := range strings.Split(misroutes, ",") {
		m, err := vcaudit.ParseMisroute(strings.TrimSpace(s))
		if err != nil {
			return usageError(err)
		}
		mrs = append(mrs, m)
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
	cfg := vcaudit.Config{Graph: g, NoUTurn: noUTurn}
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
		if cfg.Tables, err = rsi.Build(g, tp.Group); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%s %s: %d switches, %d channels; minimal routing: %s; U-turn misroutes: %v\n\n", tp.Kind, tp.Params, g.NumSwitches(), g.NumChannels(), minimal, !noUTurn)
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
			verdict := "acyclic"
			if !r.Acyclic {
				verdict = fmt.Sprintf("CYCLE of %d", len(r.Cycle.Channels))
				text := r.Cycle.Error()
				if long {
					text = r.Cycle.Long()
				}
				cycles = append(cycles, fmt.Sprintf("%s + %s:\n%s", p.Name, m, text))
			}
			if r.Overflow > 0 {
				verdict += fmt.Sprintf("; %d hops overflow", r.Overflow)
				cycles = append(cycles, fmt.Sprintf("%s + %s overflow: %s", p.Name, m, r.OverflowExample))
			}
			if r.DeadlockFree() {
				verdict = "acyclic: deadlock-free"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", p.Name, m, p.VCs, r.VCsWanted, r.MaxPath, r.Vertices, r.Edges, verdict)
		}
	}
	for _, c := range cycles {
		fmt.Fprintf(w, "\n%s\n", c)
	}
	if len(pols) > 0 {
		fmt.Fprintln(w, "\npolicies:")
		for _, p := range pols {
			fmt.Fprintf(w, "- %s (%s): %s\n", p.Name, p, p.Doc)
		}
	}
	return nil
}
