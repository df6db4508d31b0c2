package topo

// Shared checks for the direct-network generators (dragonfly, fbfly,
// slimfly, novacube, rsi). Helper names carry a "direct" prefix so they do
// not collide with other test files of the package.

import (
	"math/bits"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"
)

// directWant are the closed-form counts a generated topology must match.
type directWant struct {
	switches, hosts, cables int // cables: switch-to-switch
}

// directCheck validates tp and its fabric against closed-form counts and
// the generator conventions, and returns the compiled graph.
func directCheck(t *testing.T, tp *Topology, want directWant) *fabric.Graph {
	t.Helper()
	f := tp.Fabric
	if err := f.Validate(); err != nil {
		t.Fatalf("%s %s: Validate: %v", tp.Kind, tp.Params, err)
	}
	if got := f.Count(fabric.Switch); got != want.switches {
		t.Fatalf("%s %s: %d switches, want %d", tp.Kind, tp.Params, got, want.switches)
	}
	if got := f.Count(fabric.CA); got != want.hosts {
		t.Fatalf("%s %s: %d hosts, want %d", tp.Kind, tp.Params, got, want.hosts)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.NumChannels(); got != 2*want.cables {
		t.Fatalf("%s %s: %d switch cables, want %d", tp.Kind, tp.Params, got/2, want.cables)
	}
	seen := map[string]bool{}
	for s, id := range g.Switches {
		n := f.Node(id)
		if n.NumPorts() != tp.Radix {
			t.Fatalf("%s: switch %q has %d ports, radix %d", tp.Kind, n.Desc, n.NumPorts(), tp.Radix)
		}
		if !strings.HasPrefix(n.Desc, tp.Kind+" ") || seen[n.Desc] {
			t.Fatalf("%s: switch %d: label %q not unique or not prefixed", tp.Kind, s, n.Desc)
		}
		seen[n.Desc] = true
	}
	if tp.Coords != nil && len(tp.Coords) != want.switches {
		t.Fatalf("%s: %d coords for %d switches", tp.Kind, len(tp.Coords), want.switches)
	}
	if tp.Group != nil && len(tp.Group) != want.switches {
		t.Fatalf("%s: %d groups for %d switches", tp.Kind, len(tp.Group), want.switches)
	}
	return g
}

// directDeterministic builds twice and compares the results deeply.
func directDeterministic(t *testing.T, build func() (*Topology, error)) {
	t.Helper()
	a, err := build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s %s: two builds differ", a.Kind, a.Params)
	}
}

// directGonumOracle compares fabric.Graph.BFS from every switch with
// gonum's Dijkstra on a simple graph built from the fabric's cables (unit
// weights, parallel cables merged).
func directGonumOracle(t *testing.T, g *fabric.Graph) {
	t.Helper()
	S := g.NumSwitches()
	ug := simple.NewUndirectedGraph()
	for s := 0; s < S; s++ {
		ug.AddNode(simple.Node(s))
	}
	for c := 0; c < g.NumChannels(); c++ {
		u, v := int64(g.Tail[c]), int64(g.Head[c])
		if u < v && !ug.HasEdgeBetween(u, v) {
			ug.SetEdge(simple.Edge{F: simple.Node(u), T: simple.Node(v)})
		}
	}
	dist := make([]int32, S)
	for s := 0; s < S; s++ {
		g.BFS(int32(s), dist, nil)
		sp := path.DijkstraFrom(simple.Node(s), ug)
		for d := 0; d < S; d++ {
			w := sp.WeightTo(int64(d))
			if float64(dist[d]) != w {
				t.Fatalf("switch %d -> %d: BFS %d, gonum %v", s, d, dist[d], w)
			}
		}
	}
}

// directDistSum returns the sum of BFS distances over all ordered switch
// pairs and the diameter (integers, for exact comparisons).
func directDistSum(g *fabric.Graph) (sum int64, diam int) {
	S := g.NumSwitches()
	dist := make([]int32, S)
	queue := make([]int32, S)
	for s := 0; s < S; s++ {
		g.BFS(int32(s), dist, queue)
		for _, d := range dist {
			sum += int64(d)
			diam = max(diam, int(d))
		}
	}
	return sum, diam
}

// directDegrees returns the minimum and maximum switch degree (channels).
func directDegrees(g *fabric.Graph) (lo, hi int) {
	lo = 1 << 30
	for s := 0; s < g.NumSwitches(); s++ {
		d := g.Degree(int32(s))
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

// directExample turns a generator's Example flags into Generate params.
func directExample(t *testing.T, kind string) map[string]string {
	t.Helper()
	gen, ok := Lookup(kind)
	if !ok {
		t.Fatalf("kind %q not registered", kind)
	}
	fields := strings.Fields(gen.Example)
	params := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		name, ok := strings.CutPrefix(fields[i], "--")
		if !ok {
			t.Fatalf("%s: Example %q: %q is not a flag", kind, gen.Example, fields[i])
		}
		params[name] = fields[i+1]
	}
	if len(fields)%2 != 0 {
		t.Fatalf("%s: Example %q: odd number of fields", kind, gen.Example)
	}
	return params
}

// directMinBisection returns the minimum number of cables between two
// halves of the switches, by brute force (small graphs only: at most 24
// switches, even count).
func directMinBisection(g *fabric.Graph) int {
	S := g.NumSwitches()
	best := 1 << 30
	half := S / 2
	// Fix switch S−1 on side 0 to count each cut once.
	for mask := uint32(0); mask < 1<<(S-1); mask++ {
		if bits.OnesCount32(mask) != half {
			continue
		}
		cut := 0
		for c := 0; c < g.NumChannels(); c++ {
			u, v := g.Tail[c], g.Head[c]
			if u < v && (mask>>u)&1 != (mask>>v)&1 {
				cut++
			}
		}
		best = min(best, cut)
	}
	return best
}
