package novacube

import (
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
)

// Directions of travel in one dimension.
const (
	dirPlus  = 0 // towards x+1
	dirMinus = 1 // towards x−1
)

// novaShape is a recognised NovaCube (seed 004, §4.1): a k-ary n-cube
// whose switches carry their coordinates, with one jump-over cable from
// every node of the (even) k- or (k−1)-ary sub-cube to its antipode.
type novaShape struct {
	k, n   int
	coord  []int32 // switch s, dimension i -> coord[s*n+i]
	grid   []int32 // grid index -> switch
	port   []uint8 // switch s, dimension i, direction -> port[(s*n+i)*2+dir]
	jump   []uint8 // switch s -> port of its jump-over cable, 0 = none
	jumpTo []int32 // switch s -> jump-over partner, -1 = none
	cube   *Cube   // node i: grid index i
	node   []int32 // switch -> cube node (grid index)
}

func (t *novaShape) x(s int32, i int) int32 { return t.coord[int(s)*t.n+i] }

func (t *novaShape) portOf(s int32, i, dir int) uint8 { return t.port[(int(s)*t.n+i)*2+dir] }

func (t *novaShape) label(s int32) string {
	parts := make([]string, t.n)
	for i := range parts {
		parts[i] = strconv.Itoa(int(t.x(s, i)))
	}
	return "(" + strings.Join(parts, ",") + ")"
}

func (t *novaShape) gridIndex(s int32) int {
	p := 0
	for i := t.n - 1; i >= 0; i-- {
		p = p*t.k + int(t.x(s, i))
	}
	return p
}

// recogniseNova checks that g is a complete NovaCube and returns its
// shape. Anything else wraps routing.ErrNotApplicable, naming the first offence.
func recogniseNova(g *fabric.Graph, engine string) (*novaShape, error) {
	S := g.NumSwitches()
	if S == 0 {
		return nil, routing.NotApplicable(engine, "fabric has no switches")
	}
	t := &novaShape{}
	kmax := int32(0)
	for s := int32(0); int(s) < S; s++ {
		c, ok := routing.SwitchCoords(g.F.Nodes[g.Switches[s]].Desc)
		if !ok {
			return nil, routing.NotApplicable(engine, "switch %q has no coordinates", g.SwitchName(s))
		}
		if s == 0 {
			t.n = len(c)
		}
		if len(c) != t.n {
			return nil, routing.NotApplicable(engine, "switch %q has %d coordinates, expected %d", g.SwitchName(s), len(c), t.n)
		}
		for _, v := range c {
			kmax = max(kmax, v+1)
		}
		t.coord = append(t.coord, c...)
	}
	t.k = int(kmax)
	prod := 1
	for i := 0; i < t.n; i++ {
		prod *= t.k
		if prod > S {
			break
		}
	}
	if prod != S || t.k < 3 {
		return nil, routing.NotApplicable(engine, "%d switches are no complete k-ary %d-cube with k >= 3", S, t.n)
	}
	cube, err := NewCube(t.k, t.n, true)
	if err != nil {
		return nil, routing.NotApplicable(engine, "%v", err)
	}
	t.cube, t.node = cube, make([]int32, S)
	t.grid = make([]int32, S)
	for i := range t.grid {
		t.grid[i] = -1
	}
	for s := int32(0); int(s) < S; s++ {
		p := t.gridIndex(s)
		if t.grid[p] >= 0 {
			return nil, routing.NotApplicable(engine, "switches %q and %q both have coordinates %s", g.SwitchName(t.grid[p]), g.SwitchName(s), t.label(s))
		}
		t.grid[p], t.node[s] = s, int32(p)
	}
	t.port = make([]uint8, S*t.n*2)
	t.jump = make([]uint8, S)
	t.jumpTo = make([]int32, S)
	for s := int32(0); int(s) < S; s++ {
		t.jumpTo[s] = -1
		if p := cube.Jump(int(t.node[s])); p >= 0 {
			t.jumpTo[s] = t.grid[p]
		}
	}
	if err := t.cables(g, engine); err != nil {
		return nil, err
	}
	return t, nil
}

// cables records the port of every ring and jump-over cable and refuses
// any other cable, a missing one, or a cube without jumps.
func (t *novaShape) cables(g *fabric.Graph, engine string) error {
	S := g.NumSwitches()
	jumps := 0
	for c := 0; c < g.NumChannels(); c++ {
		a, b := g.Tail[c], g.Head[c]
		if dim, dir, ok := t.neighbour(a, b); ok {
			if p := &t.port[(int(a)*t.n+dim)*2+dir]; *p == 0 {
				*p = g.OutPort[c]
			}
			continue
		}
		if t.jumpTo[a] == b {
			if t.jump[a] == 0 {
				t.jump[a] = g.OutPort[c]
				jumps++
			}
			continue
		}
		return routing.NotApplicable(engine, "cable %s-%s (%q port %d) is neither a torus nor a jump-over link",
			t.label(a), t.label(b), g.SwitchName(a), g.OutPort[c])
	}
	if jumps == 0 {
		return routing.NotApplicable(engine, "no jump-over links: a torus, not a NovaCube (use dor)")
	}
	for s := int32(0); int(s) < S; s++ {
		for i := 0; i < t.n; i++ {
			for dir := dirPlus; dir <= dirMinus; dir++ {
				if t.portOf(s, i, dir) == 0 {
					return routing.NotApplicable(engine, "link of %s in dimension %d missing: PORA tables do not route around failures", t.label(s), i)
				}
			}
		}
		if t.jumpTo[s] >= 0 && t.jump[s] == 0 {
			return routing.NotApplicable(engine, "jump-over link %s-%s missing", t.label(s), t.label(t.jumpTo[s]))
		}
	}
	return nil
}

// neighbour reports whether b is a ring neighbour of a: the dimension and
// the direction seen from a.
func (t *novaShape) neighbour(a, b int32) (dim, dir int, ok bool) {
	dim = -1
	for i := 0; i < t.n; i++ {
		if t.x(a, i) != t.x(b, i) {
			if dim >= 0 {
				return 0, 0, false
			}
			dim = i
		}
	}
	if dim < 0 {
		return 0, 0, false
	}
	k := int32(t.k)
	xa, xb := t.x(a, dim), t.x(b, dim)
	switch {
	case (xa+1)%k == xb:
		return dim, dirPlus, true
	case (xb+1)%k == xa:
		return dim, dirMinus, true
	}
	return 0, 0, false
}
