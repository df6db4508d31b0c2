package topo

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// torusClosed holds the closed forms of a mixed-radix torus or mesh.
type torusClosed struct {
	want      shapeWant
	diameter  int
	avgHops   float64 // over ordered pairs of distinct switches
	bisection int
}

func torusForms(dims []int, hosts int, mesh bool) torusClosed {
	n := 1
	for _, k := range dims {
		n *= k
	}
	c := torusClosed{want: shapeWant{switches: n, hosts: n * hosts, radix: hosts}}
	// The sum of distances over all ordered pairs is Σ_i (N/k_i)² · S_i,
	// with S_i the sum over ordered pairs of one ring (k·⌊k²/4⌋) or path
	// ((k−1)k(k+1)/3).
	total := 0
	big := 0
	for i, k := range dims {
		if k > dims[big] {
			big = i
		}
		if k == 2 {
			c.want.radix++
		} else {
			c.want.radix += 2
		}
		var ring int
		if mesh {
			c.want.cables += n / k * (k - 1)
			c.diameter += k - 1
			ring = (k - 1) * k * (k + 1) / 3
		} else {
			if k == 2 {
				c.want.cables += n / 2
			} else {
				c.want.cables += n
			}
			c.diameter += k / 2
			ring = k * (k * k / 4)
		}
		total += (n / k) * (n / k) * ring
	}
	if n > 1 {
		c.avgHops = float64(total) / float64(n*(n-1))
	}
	c.bisection = n / dims[big]
	if !mesh && dims[big] > 2 {
		c.bisection *= 2
	}
	return c
}

var torusCases = [][]int{{8, 4}, {4, 4, 4}, {3, 5, 7}, {2, 3}, {2, 2, 2}, {5}, {2}, {3, 3}, {6, 2, 3}, {4, 2, 5}}

func TestTorusCounts(t *testing.T) {
	for _, dims := range torusCases {
		for _, mesh := range []bool{false, true} {
			for _, hosts := range []int{0, 1, 2} {
				tp, err := Torus(dims, hosts, mesh)
				if err != nil {
					t.Fatal(err)
				}
				c := torusForms(dims, hosts, mesh)
				_, st := verifyShape(t, tp, c.want)
				name := tp.Kind + " " + tp.Params
				if st.Diameter != c.diameter {
					t.Errorf("%s: diameter %d, want %d", name, st.Diameter, c.diameter)
				}
				if hosts > 0 && math.Abs(st.AvgSwitchHops-c.avgHops) > 1e-9 {
					t.Errorf("%s: average hops %v, want %v", name, st.AvgSwitchHops, c.avgHops)
				}
				if tp.Bisection != c.bisection {
					t.Errorf("%s: bisection %d, want %d", name, tp.Bisection, c.bisection)
				}
			}
		}
	}
}

// TestTorusCoordinates recovers every switch's coordinates from its
// description and checks them against Coords, the numbering, the cabling
// (neighbours differ by ±1, mod k in a torus, in exactly one dimension) and
// the fixed port layout.
func TestTorusCoordinates(t *testing.T) {
	for _, dims := range [][]int{{3, 5, 7}, {4, 2, 3}, {8, 4}} {
		for _, mesh := range []bool{false, true} {
			const hosts = 2
			tp, err := Torus(dims, hosts, mesh)
			if err != nil {
				t.Fatal(err)
			}
			g, err := fabric.Compile(tp.Fabric)
			if err != nil {
				t.Fatal(err)
			}
			for s := range g.NumSwitches() {
				x := parseCoordDesc(t, tp.Kind, g.SwitchName(int32(s)))
				if !reflect.DeepEqual(x, tp.Coords[s]) {
					t.Fatalf("%s: coords %v, Coords[%d] = %v", g.SwitchName(int32(s)), x, s, tp.Coords[s])
				}
				idx, mul := 0, 1
				for i, k := range dims {
					idx += x[i] * mul
					mul *= k
				}
				if idx != s {
					t.Fatalf("%s is switch %d, want %d", g.SwitchName(int32(s)), s, idx)
				}
			}
			for c := range g.NumChannels() {
				a, b := tp.Coords[g.Tail[c]], tp.Coords[g.Head[c]]
				dim, port, base := -1, 0, hosts+1
				for i, k := range dims {
					width := 2
					if k == 2 {
						width = 1
					}
					if a[i] == b[i] {
						base += width
						continue
					}
					if dim >= 0 {
						t.Fatalf("%s: differs in two dimensions", g.ChannelName(int32(c)))
					}
					dim, port = i, base
					base += width
					diff := (b[i] - a[i] + k) % k
					switch {
					case k == 2:
					case diff == 1 && (!mesh || b[i] == a[i]+1):
					case diff == k-1 && (!mesh || b[i] == a[i]-1):
						port++ // the "−" port
					default:
						t.Fatalf("%s: not neighbours in dimension %d", g.ChannelName(int32(c)), i)
					}
				}
				if dim < 0 || int(g.OutPort[c]) != port {
					t.Fatalf("%s: port %d, want %d (dimension %d)", g.ChannelName(int32(c)), g.OutPort[c], port, dim)
				}
			}
		}
	}
}

// parseCoordDesc parses "torus (1,2,3)".
func parseCoordDesc(t *testing.T, kind, desc string) []int {
	t.Helper()
	s, ok := strings.CutPrefix(desc, kind+" (")
	if !ok || !strings.HasSuffix(s, ")") {
		t.Fatalf("description %q is not %q", desc, kind+" (x,y,…)")
	}
	var x []int
	for f := range strings.SplitSeq(strings.TrimSuffix(s, ")"), ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("description %q: %v", desc, err)
		}
		x = append(x, v)
	}
	return x
}

// TestTorusSize2 pins the single cable of a size-2 torus dimension.
func TestTorusSize2(t *testing.T) {
	tp, err := Torus([]int{2, 3}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	// dimension 0: 3 pairs, one cable each; dimension 1: two rings of 3.
	verifyShape(t, tp, shapeWant{switches: 6, hosts: 6, cables: 9, radix: 4})
}

func TestTorusBisection(t *testing.T) {
	for _, dims := range [][]int{{4, 4}, {4, 2}, {6, 2}, {4, 3}, {2, 2, 2, 2}, {6, 3}, {8}} {
		for _, mesh := range []bool{false, true} {
			tp, err := Torus(dims, 1, mesh)
			if err != nil {
				t.Fatal(err)
			}
			g, err := fabric.Compile(tp.Fabric)
			if err != nil {
				t.Fatal(err)
			}
			if got := bruteBisection(t, g); got != tp.Bisection {
				t.Errorf("%s %s: brute-force bisection %d, Bisection %d", tp.Kind, tp.Params, got, tp.Bisection)
			}
		}
	}
}

func TestTorusDeterministic(t *testing.T) {
	verifyDeterministic(t, func() (*Topology, error) { return Torus([]int{3, 5, 7}, 2, false) })
	verifyDeterministic(t, func() (*Topology, error) { return Torus([]int{8, 4}, 1, true) })
}

func TestTorusDimsNotRetained(t *testing.T) {
	dims := []int{4, 4}
	tp, err := Torus(dims, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	dims[0] = 9
	if tp.Params != "dims=4x4 hosts=1" {
		t.Errorf("params %q", tp.Params)
	}
}

func TestTorusParams(t *testing.T) {
	for _, c := range []struct {
		dims  []int
		hosts int
		what  string
	}{
		{nil, 1, "no dimensions"},
		{[]int{4, 1, 4}, 1, "a size-1 dimension"},
		{[]int{4, 0}, 1, "a size-0 dimension"},
		{[]int{4, 4}, -1, "negative hosts"},
		{[]int{4, 4, 4}, 250, "255 ports"},
		{[]int{64, 64, 64}, 1, "beyond the LID space"},
		{[]int{1 << 30, 1 << 30, 1 << 30}, 1, "huge dimensions"},
	} {
		for _, mesh := range []bool{false, true} {
			kind := "torus"
			if mesh {
				kind = "mesh"
			}
			_, err := Torus(c.dims, c.hosts, mesh)
			wantParamError(t, kind, err, c.what)
		}
	}
	tp, err := Generate("mesh", map[string]string{"dims": "3x5", "hosts": "0"})
	if err != nil || tp.Kind != "mesh" || tp.Fabric.Count(fabric.Switch) != 15 {
		t.Fatalf("Generate mesh: %v", err)
	}
}

func BenchmarkTorus_8x8x8(b *testing.B) {
	for b.Loop() {
		if _, err := Torus([]int{8, 8, 8}, 4, false); err != nil {
			b.Fatal(err)
		}
	}
}
