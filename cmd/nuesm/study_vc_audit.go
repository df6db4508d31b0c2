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
	var vf vcAuditFlags
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
			return runVCAudit(cmd.OutOrStdout(), args[0], vf)
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&vf.params, "param", nil, "generator parameter NAME=VALUE (as 'nuesm gen KIND --NAME VALUE'); repeatable")
	fl.StringVar(&vf.policies, "policy", "one-vc", "VC policies, comma-separated (a spec with commas: separate policies by ';')")
	fl.StringVar(&vf.misroutes, "misroute", "none", "misroute modes, comma-separated")
	fl.StringVar(&vf.minimal, "minimal", "auto", "minimal routing: shortest (every shortest-path port), tables (two-level tables: T1 in the group, T2 between groups), auto (tables for rsi and dragonfly)")
	fl.BoolVar(&vf.noUTurn, "no-uturn", false, "a misroute may not leave through the channel the packet came in on")
	fl.BoolVar(&vf.long, "long", false, "print whole cycles, one channel per line")
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

// vcAuditFlags are the settings of study vc-audit.
type vcAuditFlags struct {
	params                       []string
	policies, misroutes, minimal string
	long, noUTurn                bool
}

// vcAuditRun is a parsed vc-audit: the fabric, its routing (cfg without
// policy and misroute) and what to audit on it.
type vcAuditRun struct {
	tp      *topo.Topology
	cfg     vcaudit.Config
	minimal string // shortest or tables
	pols    []vcpolicy.Policy
	mrs     []vcaudit.Misroute
}

func runVCAudit(w io.Writer, kind string, vf vcAuditFlags) error {
	r, err := vf.parse(kind)
	if err != nil {
		return err
	}
	if err := r.build(); err != nil {
		return err
	}
	return r.report(w, vf.long)
}

// parse reads the policies, misroutes and --minimal and generates the
// fabric; every error is a usage error.
func (vf vcAuditFlags) parse(kind string) (*vcAuditRun, error) {
	pm := map[string]string{}
	for _, p := range vf.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, usageError(fmt.Errorf("--param %q, expected NAME=VALUE", p))
		}
		pm[k] = v
	}
	r := &vcAuditRun{minimal: vf.minimal}
	for _, s := range splitVCPolicies(vf.policies) {
		p, err := vcpolicy.Parse(s)
		if err != nil {
			return nil, usageError(err)
		}
		r.pols = append(r.pols, p)
	}
	for _, s := range strings.Split(vf.misroutes, ",") {
		m, err := vcaudit.ParseMisroute(strings.TrimSpace(s))
		if err != nil {
			return nil, usageError(err)
		}
		r.mrs = append(r.mrs, m)
	}
	if r.minimal != "shortest" && r.minimal != "tables" && r.minimal != "auto" {
		return nil, usageError(fmt.Errorf("--minimal %q, expected shortest, tables or auto", r.minimal))
	}
	var err error
	if r.tp, err = topo.Generate(kind, pm); err != nil {
		return nil, usageError(err) // KIND and --param name the fabric
	}
	grouped := r.tp.Kind == "rsi" || r.tp.Kind == "dragonfly"
	if r.minimal == "auto" {
		r.minimal = "shortest"
		if grouped {
			r.minimal = "tables"
		}
	}
	if r.minimal == "tables" && !grouped {
		return nil, usageError(fmt.Errorf("--minimal tables needs a grouped fabric (rsi or dragonfly), not %s", r.tp.Kind))
	}
	r.cfg.NoUTurn = vf.noUTurn
	return r, nil
}

// build compiles the fabric and, for --minimal tables, its two-level
// tables.
func (r *vcAuditRun) build() error {
	g, err := fabric.Compile(r.tp.Fabric)
	if err != nil {
		return err
	}
	r.cfg.Graph = g
	if r.tp.Kind == "rsi" || r.tp.Kind == "dragonfly" {
		r.cfg.Group = r.tp.Group
	}
	if r.minimal == "tables" {
		if r.cfg.Tables, err = rsi.Build(g, r.tp.Group); err != nil {
			return err
		}
	}
	return nil
}

// report audits every misroute and policy and prints the table, the
// cycles found (whole with long) and the policies.
func (r *vcAuditRun) report(w io.Writer, long bool) error {
	g, cfg := r.cfg.Graph, r.cfg
	fmt.Fprintf(w, "%s %s: %d switches, %d channels; minimal routing: %s; U-turn misroutes: %v\n\n", r.tp.Kind, r.tp.Params, g.NumSwitches(), g.NumChannels(), r.minimal, !cfg.NoUTurn)
	fmt.Fprintln(w, "| policy | misroute | VCs | VCs wanted | longest path | CDG vertices | CDG edges | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var cycles []string
	for _, m := range r.mrs {
		for _, p := range r.pols {
			cfg.Misroute, cfg.Policy = m, p
			res, err := vcaudit.Audit(cfg)
			if err != nil {
				return err
			}
			verdict := "acyclic"
			if !res.Acyclic {
				verdict = fmt.Sprintf("CYCLE of %d", len(res.Cycle.Channels))
				text := res.Cycle.Error()
				if long {
					text = res.Cycle.Long()
				}
				cycles = append(cycles, fmt.Sprintf("%s + %s:\n%s", p.Name, m, text))
			}
			if res.Overflow > 0 {
				verdict += fmt.Sprintf("; %d hops overflow", res.Overflow)
				cycles = append(cycles, fmt.Sprintf("%s + %s overflow: %s", p.Name, m, res.OverflowExample))
			}
			if res.DeadlockFree() {
				verdict = "acyclic: deadlock-free"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", p.Name, m, p.VCs, res.VCsWanted, res.MaxPath, res.Vertices, res.Edges, verdict)
		}
	}
	for _, c := range cycles {
		fmt.Fprintf(w, "\n%s\n", c)
	}
	if len(r.pols) > 0 {
		fmt.Fprintln(w, "\npolicies:")
		for _, p := range r.pols {
			fmt.Fprintf(w, "- %s (%s): %s\n", p.Name, p, p.Doc)
		}
	}
	return nil
}
