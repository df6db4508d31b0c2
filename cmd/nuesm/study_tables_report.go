package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/topo"
)

func init() { registerStudy(newTablesReportCmd) }

// rsiFlags select the RSI networks of tables-report and rsi-fdfr.
type rsiFlags struct {
	layer1, superNodes, links string
	radix                     int
	gateways                  string
	local                     string
}

func (f *rsiFlags) add(c *cobra.Command, sn string) {
	fl := c.Flags()
	fl.StringVar(&f.layer1, "layer1", "BR", "layer-1 topologies, comma-separated: DF, HR, SR, BR or full-N, hypercube-N, slimfly-N, butterfly-AxB")
	fl.StringVar(&f.superNodes, "supernodes", sn, "super node counts, comma-separated")
	fl.StringVar(&f.links, "links", "1", "global cables per super-node pair, comma-separated")
	fl.IntVar(&f.radix, "radix", topo.RSINodeRadix, "inter-node ports per node (the CA port comes on top)")
	fl.StringVar(&f.gateways, "gateways", "spread", "global cable placement: spread or pack")
}

// addLocal adds --local, the routing inside super nodes.
func (f *rsiFlags) addLocal(c *cobra.Command) {
	c.Flags().StringVar(&f.local, "local", "any", "routing inside super nodes: any (every minimal port) or dor (dimension order; BR, HR, DF)")
}

// rsiNet is one generated RSI network with its two-level tables.
type rsiNet struct {
	name string
	tp   *topo.Topology
	tb   *rsi.Tables
}

// configs expands the comma lists into every combination.
func (f *rsiFlags) configs() ([]topo.RSIConfig, error) {
	gw, err := topo.ParseRSIGateways(f.gateways)
	if err != nil {
		return nil, usageError(err)
	}
	ints := func(flag, s string) ([]int, error) {
		var out []int
		for _, v := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				return nil, usageError(fmt.Errorf("--%s %q: expected positive integers separated by commas", flag, s))
			}
			out = append(out, n)
		}
		return out, nil
	}
	sns, err := ints("supernodes", f.superNodes)
	if err != nil {
		return nil, err
	}
	links, err := ints("links", f.links)
	if err != nil {
		return nil, err
	}
	var out []topo.RSIConfig
	for _, l1 := range strings.Split(f.layer1, ",") {
		for _, sn := range sns {
			for _, l := range links {
				out = append(out, topo.RSIConfig{Layer1: strings.TrimSpace(l1), SuperNodes: sn, LinksPerPair: l, NodeRadix: f.radix, Gateways: gw})
			}
		}
	}
	return out, nil
}

// buildRSI generates the network and its two-level tables with the
// routing the --local flag selects.
func (f *rsiFlags) buildRSI(c topo.RSIConfig) (*rsiNet, error) {
	local := rsi.AnyMinimal
	if f.local != "" {
		var err error
		if local, err = rsi.ParseLocal(f.local); err != nil {
			return nil, usageError(fmt.Errorf("--local: %w", err))
		}
	}
	return buildRSI(c, local)
}

// buildRSI generates the network and its two-level tables.
func buildRSI(c topo.RSIConfig, local rsi.Local) (*rsiNet, error) {
	tp, err := c.Build()
	if err != nil {
		return nil, usageError(err) // the network's parameters are flags
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		return nil, err
	}
	tb, err := rsiTables(tp, g, local)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s %d SN × %d link", strings.ToUpper(c.Layer1), c.SuperNodes, c.LinksPerPair)
	if local != rsi.AnyMinimal {
		name += ", " + local.Describe()
	}
	return &rsiNet{name: name, tp: tp, tb: tb}, nil
}

// rsiTables builds the two-level tables of a generated RSI fabric; the
// dimensions of dimension-order routing come from its layer 1.
func rsiTables(tp *topo.Topology, g *fabric.Graph, local rsi.Local) (*rsi.Tables, error) {
	opt := rsi.BuildOptions{Local: local}
	if local == rsi.DimOrder {
		layer1 := ""
		for _, f := range strings.Fields(tp.Params) {
			if v, ok := strings.CutPrefix(f, "layer1="); ok {
				layer1 = v
			}
		}
		if tp.Kind != "rsi" || layer1 == "" {
			return nil, fmt.Errorf("dimension-order routing inside super nodes needs an rsi fabric, not %s", tp.Kind)
		}
		dims, err := topo.RSILayer1Dims(layer1)
		if err != nil {
			return nil, err
		}
		opt.Dims = dims
	}
	return rsi.BuildWith(g, tp.Group, opt)
}

func newTablesReportCmd() *cobra.Command {
	var rf rsiFlags
	var perNode bool
	c := &cobra.Command{
		Use:   "tables-report",
		Short: "RSI two-level routing tables (T1/T2) against flat tables, per node (seed 000 §IV-A)",
		Long: `Build the two-level routing tables of RSI networks (seed 000 §IV-A, Fig. 4:
T1 with one entry per other node of the super node, T2 with one entry per
other super node, each entry holding every minimal port) and compare their
size with a flat table from MinHop routing of the same fabric. --local dor
keeps one port per entry: dimension order inside super nodes. "flat entries"
counts destination nodes as the paper does (3 × 16 nodes: 47 against 2 + 15);
"flat IB LFT LIDs" counts what an InfiniBand LFT holds (router and processor
each own a LID). Hops are those of two-level routing.`,
		Example: `  nuesm study tables-report --layer1 BR --supernodes 3 --links 1,16   # the paper's 47 vs 17
  nuesm study tables-report --layer1 DF,HR,SR,BR --supernodes 8
  nuesm study tables-report --layer1 BR --supernodes 3 --per-node`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTablesReport(cmd.Context(), cmd.OutOrStdout(), rf, perNode)
		},
	}
	rf.add(c, "3")
	rf.addLocal(c)
	c.Flags().BoolVar(&perNode, "per-node", false, "also list every node's table sizes")
	return c
}

func runTablesReport(ctx context.Context, w io.Writer, rf rsiFlags, perNode bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfgs, err := rf.configs()
	if err != nil {
		return err
	}
	var rows []rsi.SizeSummary
	type detail struct {
		net   *rsiNet
		sizes []rsi.NodeSizes
	}
	var details []detail
	for _, cfg := range cfgs {
		n, err := rf.buildRSI(cfg)
		if err != nil {
			return err
		}
		flat, err := rsi.FlatLFT(ctx, n.tb.G)
		if err != nil {
			return err
		}
		sizes := n.tb.Sizes(flat)
		rows = append(rows, rsi.Summarize(n.name, n.tb, sizes))
		details = append(details, detail{n, sizes})
	}
	rsi.WriteSizeTable(w, rows)
	if perNode {
		for _, d := range details {
			fmt.Fprintf(w, "\n%s (%s)\n\n", d.net.name, d.net.tp.Params)
			rsi.WriteNodeSizes(w, d.net.tb.G, d.sizes)
		}
	}
	return nil
}
