package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/studies/rsi"
)

func init() { registerStudy(newRSIFDFRCmd) }

func newRSIFDFRCmd() *cobra.Command {
	var rf rsiFlags
	var fails []string
	var rule, sweep string
	var noRecovery, all, summary bool
	c := &cobra.Command{
		Use:   "rsi-fdfr",
		Short: "Spread of an RSI node or link failure through the two-level tables, and its recovery (seed 000 §V)",
		Long: `Fail nodes or cables of an RSI network and follow the fault discovery (FD,
Algorithm 2) and fault recovery (FR, Algorithm 3) packets of seed 000 §V
through the two-level tables: which entries are invalidated, which nodes
hear of the failure, which pairs lose every route, and how recovery spreads.

A failure is node:N or link:N:PORT, where N is a switch index or sS/nI
(node I of super node S) and PORT the node's port. --sweep nodes|links
fails each node (or each cable) alone and prints one row per failure;
with --summary one row per network and FR rule instead: how many of the
failures leave entries invalid or pairs without a route once the element
is back (several networks and --rule literal,healed allowed then).
FR rules: literal (Algorithm 3 as printed) or healed (forward once the
node's tables are whole again, the text's reading).`,
		Example: `  nuesm study rsi-fdfr --layer1 BR --supernodes 8 --fail node:s0/n0
  nuesm study rsi-fdfr --layer1 BR --supernodes 3 --fail link:s0/n0:8 --rule healed
  nuesm study rsi-fdfr --layer1 BR --supernodes 8 --sweep nodes
  nuesm study rsi-fdfr --layer1 DF,HR,SR,BR --supernodes 8 --sweep nodes --summary --rule literal,healed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if summary {
				return runRSIFDFRSummary(cmd.OutOrStdout(), rf, sweep, rule, noRecovery || len(fails) > 0)
			}
			r, err := parseFRRule(rule)
			if err != nil {
				return err
			}
			opt := rsi.Options{Rule: r, NoRecovery: noRecovery}
			return runRSIFDFR(cmd.OutOrStdout(), rf, fails, sweep, opt, all)
		},
	}
	rf.add(c, "8")
	rf.addLocal(c)
	fl := c.Flags()
	fl.StringArrayVar(&fails, "fail", nil, "failed element, node:N or link:N:PORT (N = index or sS/nI); repeatable")
	fl.StringVar(&sweep, "sweep", "", "fail every node (nodes) or every cable (links) alone, one row each")
	fl.StringVar(&rule, "rule", "literal", "FR forwarding rule: literal or healed (with --summary a comma-separated list)")
	fl.BoolVar(&summary, "summary", false, "with --sweep: one row per network and rule, what stays broken after FR")
	fl.BoolVar(&noRecovery, "no-recovery", false, "stop after FD propagation")
	fl.BoolVar(&all, "all", false, "list every node, not only those the failure touched")
	return c
}

func parseFRRule(s string) (rsi.FRRule, error) {
	switch s {
	case "literal":
		return rsi.FRLiteral, nil
	case "healed":
		return rsi.FRHealed, nil
	}
	return 0, usageError(fmt.Errorf("--rule %q, expected literal or healed", s))
}

func runRSIFDFR(w io.Writer, rf rsiFlags, fails []string, sweep string, opt rsi.Options, all bool) error {
	cfgs, err := rf.configs()
	if err != nil {
		return err
	}
	if len(cfgs) != 1 {
		return usageError(fmt.Errorf("rsi-fdfr takes one network, got %d (give one value to --layer1, --supernodes and --links)", len(cfgs)))
	}
	if (len(fails) == 0) == (sweep == "") {
		return usageError(fmt.Errorf("give --fail or --sweep (one of them)"))
	}
	if sweep != "" && sweep != "nodes" && sweep != "links" {
		return usageError(fmt.Errorf("--sweep %q, expected nodes or links", sweep))
	}
	n, err := rf.buildRSI(cfgs[0])
	if err != nil {
		return err
	}
	if sweep != "" {
		fmt.Fprintf(w, "%s (%s), FR rule %s\n\n", n.name, n.tp.Params, opt.Rule)
		return fdfrSweep(w, n.tb, sweep, opt)
	}
	var fs []rsi.Failure
	for _, s := range fails {
		f, err := parseRSIFailure(n.tb, s)
		if err != nil {
			return usageError(err)
		}
		fs = append(fs, f)
	}
	o, err := rsi.Simulate(n.tb, fs, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s (%s), FR rule %s\n\n", n.name, n.tp.Params, opt.Rule)
	o.Write(w, n.tb, all)
	return nil
}

// runRSIFDFRSummary prints one --summary row per network and FR rule.
func runRSIFDFRSummary(w io.Writer, rf rsiFlags, sweep, rules string, badFlags bool) error {
	if sweep != "nodes" && sweep != "links" {
		return usageError(fmt.Errorf("--summary needs --sweep nodes or --sweep links"))
	}
	if badFlags {
		return usageError(fmt.Errorf("--summary sweeps single failures with recovery; it does not combine with --fail or --no-recovery"))
	}
	var rs []rsi.FRRule
	for _, s := range strings.Split(rules, ",") {
		r, err := parseFRRule(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	cfgs, err := rf.configs()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, rsi.SweepHeader); err != nil {
		return err
	}
	for _, cfg := range cfgs {
		n, err := rf.buildRSI(cfg)
		if err != nil {
			return err
		}
		fs, what := rsi.NodeFailures(n.tb), "nodes"
		if sweep == "links" {
			fs, what = rsi.LinkFailures(n.tb), "cables"
		}
		for _, r := range rs {
			s, err := rsi.Sweep(n.tb, fs, rsi.Options{Rule: r})
			if err != nil {
				return err
			}
			if err := rsi.WriteSweepRow(w, n.name, what, n.tb, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// fdfrSweep fails each node (or each cable) alone and prints one row each.
func fdfrSweep(w io.Writer, tb *rsi.Tables, what string, opt rsi.Options) error {
	g := tb.G
	fs := rsi.NodeFailures(tb)
	if what == "links" {
		fs = rsi.LinkFailures(tb)
	}
	fmt.Fprintln(w, "| failure | FD packets | FD rounds | nodes informed | ports invalid | entries emptied | pairs lost after FD | of which silent | FR packets | FR rounds | invalid after FR | pairs lost after FR | of which silent |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range fs {
		o, err := rsi.Simulate(tb, []rsi.Failure{f}, opt)
		if err != nil {
			return err
		}
		informed, ports, emptied := 0, 0, 0
		for _, n := range o.Nodes {
			if n.FDIn > 0 {
				informed++
			}
			ports += n.T1Ports + n.T2Ports
			emptied += n.T1Emptied + n.T2Emptied
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", f.Describe(g), o.FDPackets, o.FDRounds,
			informed, ports, emptied, o.After.Lost, o.After.LostSilent, o.FRPackets, o.FRRounds, o.Invalid, o.Recovered.Lost, o.Recovered.LostSilent)
	}
	return nil
}

// parseRSIFailure reads node:N or link:N:PORT.
func parseRSIFailure(tb *rsi.Tables, s string) (rsi.Failure, error) {
	kind, rest, _ := strings.Cut(s, ":")
	bad := func(why string) (rsi.Failure, error) {
		return rsi.Failure{}, fmt.Errorf("--fail %q: %s (expected node:N or link:N:PORT, N a switch index or sS/nI)", s, why)
	}
	switch kind {
	case "node":
		x, err := parseRSINode(tb, rest)
		if err != nil {
			return bad(err.Error())
		}
		return rsi.Failure{Kind: rsi.FailNode, Node: x}, nil
	case "link":
		i := strings.LastIndex(rest, ":")
		if i < 0 {
			return bad("no port")
		}
		x, err := parseRSINode(tb, rest[:i])
		if err != nil {
			return bad(err.Error())
		}
		p, err := strconv.Atoi(rest[i+1:])
		if err != nil || p < 1 || p > 255 {
			return bad("port " + rest[i+1:])
		}
		c := tb.G.ChannelAt(x, uint8(p))
		if c < 0 {
			return bad(fmt.Sprintf("port %d of %s is not cabled to another node", p, tb.G.SwitchName(x)))
		}
		return rsi.Failure{Kind: rsi.FailLink, Channel: c}, nil
	}
	return bad("unknown kind " + strconv.Quote(kind))
}

// parseRSINode reads a switch index or sS/nI.
func parseRSINode(tb *rsi.Tables, s string) (int32, error) {
	if sn, node, ok := strings.Cut(s, "/"); ok {
		a, err1 := strconv.Atoi(strings.TrimPrefix(sn, "s"))
		b, err2 := strconv.Atoi(strings.TrimPrefix(node, "n"))
		if err1 != nil || err2 != nil || a < 0 || a >= len(tb.Members) || b < 0 || b >= len(tb.Members[a]) {
			return 0, fmt.Errorf("no node %q", s)
		}
		return tb.Members[a][b], nil
	}
	x, err := strconv.Atoi(s)
	if err != nil || x < 0 || x >= tb.G.NumSwitches() {
		return 0, fmt.Errorf("no node %q (%d nodes)", s, tb.G.NumSwitches())
	}
	return int32(x), nil
}
