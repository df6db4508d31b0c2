package fabric

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
)

// DOTOptions control WriteDOT.
type DOTOptions struct {
	// Load gives every channel (Graph channel ids) a load in [0, 1]
	// (utilisation, or paths over the busiest channel's); nil draws the
	// fabric alone.
	Load []float64
	// LoadName names the load in the legend, e.g. "utilisation".
	LoadName string
	// Terminals also draws the CA and router ports.
	Terminals bool
}

// WriteDOT writes g as a graphviz graph: one node per switch (and
// terminal with Terminals), one edge per cable. With loads, an edge's
// colour runs from grey (idle) over yellow to red (the busier direction
// of the cable at 1) and its width grows with the load; its label gives
// both directions. Node and edge names are quoted, so any description is
// safe. O(switches + channels).
func WriteDOT(w io.Writer, g *Graph, opt DOTOptions) error {
	if opt.Load != nil && len(opt.Load) != g.NumChannels() {
		return fmt.Errorf("fabric: DOT: %d loads for %d channels", len(opt.Load), g.NumChannels())
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "graph fabric {\n\tgraph [overlap=false, splines=true, outputorder=edgesfirst];\n\tnode [shape=box, style=filled, fillcolor=\"#eeeeee\", fontsize=10];\n")
	if opt.Load != nil {
		name := opt.LoadName
		if name == "" {
			name = "load"
		}
		fmt.Fprintf(bw, "\tlabel=%s;\n", dotQuote("edge colour and width: "+name+" of the busier direction, grey 0 → yellow → red 1"))
	}
	for s := range g.Switches {
		fmt.Fprintf(bw, "\t%s;\n", dotQuote(g.SwitchName(int32(s))))
	}
	for c := int32(0); c < int32(g.NumChannels()); c++ {
		back := g.ChannelAt(g.Head[c], g.InPort[c])
		if back >= 0 && back < c {
			continue // the cable is drawn from its first channel
		}
		fmt.Fprintf(bw, "\t%s -- %s [%s];\n", dotQuote(g.SwitchName(g.Tail[c])), dotQuote(g.SwitchName(g.Head[c])), edgeAttrs(g, opt.Load, c, back))
	}
	if opt.Terminals {
		for _, t := range g.Terms {
			if t.Switch < 0 {
				continue
			}
			name := g.F.PortName(PortRef{Node: t.Node, Port: t.Port})
			fmt.Fprintf(bw, "\t%s [shape=ellipse, fillcolor=white];\n\t%s -- %s [color=\"#bbbbbb\"];\n",
				dotQuote(name), dotQuote(name), dotQuote(g.SwitchName(t.Switch)))
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// edgeAttrs are the attributes of the cable of channel c and its reverse
// back (-1 none).
func edgeAttrs(g *Graph, load []float64, c, back int32) string {
	ports := fmt.Sprintf("taillabel=%d, headlabel=%d, fontsize=8", g.OutPort[c], g.InPort[c])
	if load == nil {
		return ports
	}
	l, lb := load[c], 0.0
	if back >= 0 {
		lb = load[back]
	}
	hi := math.Max(l, lb)
	return fmt.Sprintf("%s, color=%q, penwidth=%.2f, label=\"%.2f / %.2f\"", ports, loadColour(hi), 1+4*math.Min(hi, 1), l, lb)
}

// loadColour maps [0, 1] to grey (0), then yellow to red.
func loadColour(x float64) string {
	if !(x > 0) {
		return "#bbbbbb"
	}
	x = math.Min(x, 1)
	return fmt.Sprintf("#%02x%02x00", 255, int(math.Round(220*(1-x))))
}

// dotQuote quotes s as a DOT identifier.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
