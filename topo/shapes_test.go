package topo

// Shared checks for the generators of fattree.go, xgft.go, clos.go,
// torus.go, hypercube.go, kautz.go and random.go, with gonum as the
// reference for distances and components.

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"
	gtopo "gonum.org/v1/gonum/graph/topo"
)

// shapeWant is what a test expects of a generated fabric.
type shapeWant struct {
	switches, hosts, cables, radix int
}

// shapeOracleMax bounds the switch count for the gonum oracle.
const shapeOracleMax = 400

// verifyShape checks a generated topology: validity, counts, radix, host
// attachment, no loopback or parallel cables, unique readable switch
// descriptions, Coords/Group lengths, and (on small instances) distances
// and components against gonum. It returns the compiled graph and its hop
// statistics.
func verifyShape(t *testing.T, tp *Topology, want shapeWant) (*fabric.Graph, fabric.HopStats) {
	t.Helper()
	f := tp.Fabric
	if err := f.Validate(); err != nil {
		t.Fatalf("%s %s: Validate: %v", tp.Kind, tp.Params, err)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatalf("%s %s: Compile: %v", tp.Kind, tp.Params, err)
	}
	name := tp.Kind + " " + tp.Params
	if got := f.Count(fabric.Switch); got != want.switches {
		t.Errorf("%s: switches = %d, want %d", name, got, want.switches)
	}
	if got := f.Count(fabric.CA); got != want.hosts {
		t.Errorf("%s: CAs = %d, want %d", name, got, want.hosts)
	}
	if got := g.NumChannels() / 2; got != want.cables {
		t.Errorf("%s: switch cables = %d, want %d", name, got, want.cables)
	}
	if tp.Radix != want.radix {
		t.Errorf("%s: radix = %d, want %d", name, tp.Radix, want.radix)
	}
	if g.Loopbacks != 0 {
		t.Errorf("%s: %d loopback cables", name, g.Loopbacks)
	}
	if got := len(f.Links()); got != want.hosts+want.cables {
		t.Errorf("%s: %d links, want %d host + %d switch cables", name, got, want.hosts, want.cables)
	}
	descs := map[string]bool{}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		switch n.Kind {
		case fabric.Switch:
			if n.NumPorts() != tp.Radix {
				t.Fatalf("%s: switch %q has %d ports, radix %d", name, n.Desc, n.NumPorts(), tp.Radix)
			}
			if !strings.HasPrefix(n.Desc, tp.Kind+" ") || descs[n.Desc] {
				t.Fatalf("%s: switch description %q not unique or not %q-prefixed", name, n.Desc, tp.Kind)
			}
			descs[n.Desc] = true
		case fabric.CA:
			p := n.Ports[1]
			if n.NumPorts() != 1 || !p.Cabled() || f.Nodes[p.Peer.Node].Kind != fabric.Switch {
				t.Fatalf("%s: CA %q is not one port cabled to a switch", name, n.Desc)
			}
		}
	}
	seen := map[[2]int32]bool{}
	for c := range g.NumChannels() {
		e := [2]int32{g.Tail[c], g.Head[c]}
		if seen[e] {
			t.Fatalf("%s: parallel cables between %s and %s", name, g.SwitchName(e[0]), g.SwitchName(e[1]))
		}
		seen[e] = true
	}
	if tp.Coords != nil && len(tp.Coords) != want.switches {
		t.Errorf("%s: %d coordinates for %d switches", name, len(tp.Coords), want.switches)
	}
	if tp.Group != nil && len(tp.Group) != want.switches {
		t.Errorf("%s: %d groups for %d switches", name, len(tp.Group), want.switches)
	}
	st := g.Hops()
	if g.NumSwitches() <= shapeOracleMax {
		shapeOracle(t, name, g, st)
	}
	return g, st
}

// shapeOracle compares fabric.Graph.BFS and Hops with gonum's Dijkstra and
// connected components on the switch graph.
func shapeOracle(t *testing.T, name string, g *fabric.Graph, st fabric.HopStats) {
	t.Helper()
	S := g.NumSwitches()
	ug := simple.NewUndirectedGraph()
	for s := range S {
		ug.AddNode(simple.Node(s))
	}
	for c := range g.NumChannels() {
		if u, v := g.Tail[c], g.Head[c]; u < v {
			ug.SetEdge(simple.Edge{F: simple.Node(u), T: simple.Node(v)})
		}
	}
	comps := gtopo.ConnectedComponents(ug)
	if (len(comps) == 1) != st.Connected {
		t.Errorf("%s: gonum finds %d components, Hops says connected=%v", name, len(comps), st.Connected)
	}
	terms := make([]int64, S)
	for s := range S {
		terms[s] = int64(len(g.TermsOf(int32(s))))
	}
	dist := make([]int32, S)
	diam, caDiam := 0, 0
	var swSum, swPairs, termSum, termPairs int64
	for s := range S {
		g.BFS(int32(s), dist, nil)
		sp := path.DijkstraFrom(simple.Node(s), ug)
		for u := range S {
			w := sp.WeightTo(int64(u))
			if math.IsInf(w, 1) {
				if dist[u] != -1 {
					t.Fatalf("%s: BFS %d->%d = %d, gonum: unreachable", name, s, u, dist[u])
				}
				continue
			}
			if int32(w) != dist[u] {
				t.Fatalf("%s: BFS %d->%d = %d, gonum %v", name, s, u, dist[u], w)
			}
			d := int(w)
			diam = max(diam, d)
			if terms[s] > 0 && terms[u] > 0 {
				caDiam = max(caDiam, d)
				if s != u {
					swSum += int64(d)
					swPairs++
				}
				termSum += int64(d) * terms[s] * terms[u]
				termPairs += terms[s] * terms[u]
			}
			if s == u {
				termPairs -= terms[s]
			}
		}
	}
	if diam != st.Diameter || caDiam != st.CADiameter {
		t.Errorf("%s: diameter %d/%d (CA), gonum %d/%d", name, st.Diameter, st.CADiameter, diam, caDiam)
	}
	if swPairs > 0 && math.Abs(float64(swSum)/float64(swPairs)-st.AvgSwitchHops) > 1e-9 {
		t.Errorf("%s: average switch hops %v, gonum %v", name, st.AvgSwitchHops, float64(swSum)/float64(swPairs))
	}
	if st.Connected && termPairs > 0 && math.Abs(float64(termSum)/float64(termPairs)-st.AvgTermHops) > 1e-9 {
		t.Errorf("%s: average terminal hops %v, gonum %v", name, st.AvgTermHops, float64(termSum)/float64(termPairs))
	}
}

// verifyDeterministic builds a topology twice and requires equal results.
func verifyDeterministic(t *testing.T, build func() (*Topology, error)) {
	t.Helper()
	a, err := build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Fabric, b.Fabric) {
		t.Fatalf("%s %s: two builds differ", a.Kind, a.Params)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s %s: two builds differ outside the fabric", a.Kind, a.Params)
	}
}

// bruteBisection returns the fewest switch cables crossing a cut of the
// switches into two sides with equal host counts (or equal switch counts
// when there are no hosts), by trying every cut. Small graphs only.
func bruteBisection(t *testing.T, g *fabric.Graph) int {
	t.Helper()
	S := g.NumSwitches()
	if S > 22 {
		t.Fatalf("bruteBisection: %d switches is too many", S)
	}
	weight := make([]int, S)
	total := 0
	for s := range S {
		weight[s] = len(g.TermsOf(int32(s)))
		total += weight[s]
	}
	if total == 0 {
		for s := range weight {
			weight[s] = 1
		}
		total = S
	}
	best := -1
	for mask := 0; mask < 1<<(S-1); mask++ { // switch S-1 always on side 0
		w := 0
		for s := range S - 1 {
			if mask>>s&1 == 1 {
				w += weight[s]
			}
		}
		if 2*w != total {
			continue
		}
		cut := 0
		for c := range g.NumChannels() {
			u, v := int(g.Tail[c]), int(g.Head[c])
			if u < v && (mask>>u&1) != (mask>>v&1) {
				cut++
			}
		}
		if best < 0 || cut < best {
			best = cut
		}
	}
	return best
}

// wantParamError requires err to be a "topo: <kind>: …" parameter error.
func wantParamError(t *testing.T, kind string, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: %s accepted", kind, what)
	}
	if !strings.HasPrefix(err.Error(), "topo: "+kind+": ") {
		t.Fatalf("%s: %s: error %q lacks the \"topo: %s: \" prefix", kind, what, err, kind)
	}
}

// TestShapeRegistry builds every kind of these files from its defaults and
// from its Example flags through the registry.
func TestShapeRegistry(t *testing.T) {
	for _, kind := range []string{"fattree", "xgft", "clos2", "clos3", "torus", "mesh", "hypercube", "kautz", "random"} {
		g, ok := Lookup(kind)
		if !ok {
			t.Fatalf("%s: not registered", kind)
		}
		if g.Short == "" || g.Example == "" {
			t.Errorf("%s: missing Short or Example", kind)
		}
		if _, err := Generate(kind, nil); err != nil {
			t.Errorf("%s: defaults: %v", kind, err)
		}
		params := map[string]string{}
		f := strings.Fields(g.Example)
		for i := 0; i+1 < len(f); i += 2 {
			params[strings.TrimPrefix(f[i], "--")] = f[i+1]
		}
		tp, err := Generate(kind, params)
		if err != nil {
			t.Errorf("%s %s: %v", kind, g.Example, err)
			continue
		}
		if tp.Kind != kind {
			t.Errorf("%s: built kind %q", kind, tp.Kind)
		}
	}
}
