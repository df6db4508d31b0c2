package routing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// Directions of travel in one dimension.
const (
	dirPlus  = 0 // towards x+1
	dirMinus = 1 // towards x−1
)

// maxGridPoints bounds the product of the dimension sizes DOR accepts, so
// that absurd coordinates in switch descriptions cannot make recognition
// allocate a huge grid.
const maxGridPoints = 1 << 24

// torusShape is a recognised complete mesh or torus: the coordinates of
// every switch and the port that leaves each switch in each dimension and
// direction.
type torusShape struct {
	n     int     // dimensions
	k     []int32 // size of each dimension
	wrap  []bool  // dimension i wraps (torus); always false for k <= 2
	bit   []int8  // SL bit of dimension i's dateline, -1 when it needs none
	nbits int     // dateline SL bits in use
	coord []int32 // switch s, dimension i -> coord[s*n+i]
	port  []uint8 // switch s, dimension i, direction -> port[(s*n+i)*2+dir]; 0 = none
}

// x returns coordinate i of switch s.
func (t *torusShape) x(s int32, i int) int32 { return t.coord[int(s)*t.n+i] }

// portOf returns the port leaving switch s in dimension i towards dir.
func (t *torusShape) portOf(s int32, i, dir int) uint8 { return t.port[(int(s)*t.n+i)*2+dir] }

// label formats the coordinates of switch s as "(x,y,…)".
func (t *torusShape) label(s int32) string {
	return coordString(t.coord[int(s)*t.n : (int(s)+1)*t.n])
}

func coordString(c []int32) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(v)))
	}
	b.WriteByte(')')
	return b.String()
}

// parseCoords reads the coordinates at the end of a switch description,
// "<anything> (x,y,…)", as the topo generators write them. ok is false when
// the description does not end in a parenthesised list of non-negative
// integers.
func parseCoords(desc string) (c []int32, ok bool) {
	desc = strings.TrimSpace(desc)
	if !strings.HasSuffix(desc, ")") {
		return nil, false
	}
	open := strings.LastIndexByte(desc, '(')
	if open < 0 {
		return nil, false
	}
	for _, f := range strings.Split(desc[open+1:len(desc)-1], ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 || v >= maxGridPoints {
			return nil, false
		}
		c = append(c, int32(v))
	}
	return c, true
}

// parseDims reads "8x8x8" (or "8,8,8").
func parseDims(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == 'X' || r == ',' }) {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v >= maxGridPoints {
			return nil, fmt.Errorf("dims %q: %q is not a size >= 1", s, f)
		}
		out = append(out, int32(v))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dims %q: no sizes, expected e.g. 8x8x8", s)
	}
	return out, nil
}

// parseWrap reads "1,1,0" or "1x1x0" (which dimensions wrap).
func parseWrap(s string) ([]bool, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == 'X' || r == ',' })
	if len(f) == 0 {
		return nil, fmt.Errorf("torus %q: no flags, expected one 0 or 1 per dimension, e.g. 1x1x0", s)
	}
	out := make([]bool, len(f))
	for i, v := range f {
		switch strings.TrimSpace(v) {
		case "1":
			out[i] = true
		case "0":
		default:
			return nil, fmt.Errorf("torus %q: flag %q, expected 0 or 1", s, v)
		}
	}
	return out, nil
}

// recogniseTorus checks that g is a complete mesh or torus and returns its
// shape; engine names the errors. cfg.Dims and cfg.Torus override the
// detection (see DOR). Shape problems wrap ErrNotApplicable.
func recogniseTorus(g *fabric.Graph, engine string, cfg DORConfig) (*torusShape, error) {
	S := g.NumSwitches()
	if S == 0 {
		return nil, NotApplicable(engine, "fabric has no switches")
	}
	dims := cfg.Dims
	// Coordinates: from the descriptions when every switch has them, else
	// from the switch order when dims is given.
	all := make([][]int32, S)
	missing := int32(-1)
	for s := int32(0); int(s) < S; s++ {
		c, ok := parseCoords(g.F.Nodes[g.Switches[s]].Desc)
		if !ok {
			missing = s
			break
		}
		all[s] = c
	}
	t := &torusShape{}
	switch {
	case missing < 0:
		t.n = len(all[0])
		for s := int32(1); int(s) < S; s++ {
			if len(all[s]) != t.n {
				return nil, NotApplicable(engine, "switch %q has %d coordinates, switch %q has %d",
					g.SwitchName(0), t.n, g.SwitchName(s), len(all[s]))
			}
		}
		if dims != nil && len(dims) != t.n {
			return nil, NotApplicable(engine, "dims=%s gives %d dimensions, switch %q has %d coordinates", fmtDims(dims), len(dims), g.SwitchName(0), t.n)
		}
	case dims != nil:
		t.n = len(dims)
		prod := 1
		for _, k := range dims {
			prod *= int(k)
			if prod > maxGridPoints {
				break
			}
		}
		if prod != S {
			return nil, NotApplicable(engine, "dims=%s needs %d switches, fabric has %d", fmtDims(dims), prod, S)
		}
		for s := 0; s < S; s++ {
			all[s] = make([]int32, t.n)
			for i, v := 0, s; i < t.n; i++ {
				all[s][i] = int32(v % int(dims[i]))
				v /= int(dims[i])
			}
		}
	default:
		return nil, NotApplicable(engine, "switch %q has no coordinates", g.SwitchName(missing))
	}
	t.coord = make([]int32, S*t.n)
	for s := 0; s < S; s++ {
		copy(t.coord[s*t.n:], all[s])
	}
	if err := t.size(g, engine, dims); err != nil {
		return nil, err
	}
	if err := t.wraps(g, engine, cfg.Torus); err != nil {
		return nil, err
	}
	if err := t.links(g, engine); err != nil {
		return nil, err
	}
	return t, nil
}

// size fixes the dimension sizes (given, or the largest coordinate + 1)
// and checks that the switches fill the grid exactly once.
func (t *torusShape) size(g *fabric.Graph, engine string, dims []int32) error {
	S := g.NumSwitches()
	t.k = make([]int32, t.n)
	if dims != nil {
		copy(t.k, dims)
	}
	for s := int32(0); int(s) < S; s++ {
		for i := 0; i < t.n; i++ {
			x := t.x(s, i)
			if dims != nil && x >= dims[i] {
				return NotApplicable(engine, "switch %q has coordinates %s outside dims=%s", g.SwitchName(s), t.label(s), fmtDims(dims))
			}
			t.k[i] = max(t.k[i], x+1)
		}
	}
	prod := 1
	for _, k := range t.k {
		prod *= int(k)
		if prod > maxGridPoints {
			return NotApplicable(engine, "coordinates span more than %d grid points", maxGridPoints)
		}
	}
	at := make([]int32, prod) // grid point -> switch + 1
	for s := int32(0); int(s) < S; s++ {
		p := t.gridIndex(s)
		if at[p] != 0 {
			return NotApplicable(engine, "switches %q and %q both have coordinates %s", g.SwitchName(at[p]-1), g.SwitchName(s), t.label(s))
		}
		at[p] = s + 1
	}
	if prod != S {
		for p, s := range at {
			if s == 0 {
				c := make([]int32, t.n)
				for i, v := 0, p; i < t.n; i++ {
					c[i] = int32(v % int(t.k[i]))
					v /= int(t.k[i])
				}
				return NotApplicable(engine, "switch %s missing from the %s grid: DOR cannot route around failures", coordString(c), fmtDims(t.k))
			}
		}
	}
	return nil
}

func (t *torusShape) gridIndex(s int32) int {
	p := 0
	for i := t.n - 1; i >= 0; i-- {
		p = p*int(t.k[i]) + int(t.x(s, i))
	}
	return p
}

func fmtDims(d []int32) string {
	parts := make([]string, len(d))
	for i, k := range d {
		parts[i] = strconv.Itoa(int(k))
	}
	return strings.Join(parts, "x")
}

// neighbour classifies the cable from switch a to switch b: the dimension
// it runs in, its direction seen from a, and whether it is a wrap-around
// cable (between x = k−1 and x = 0 of a dimension of size >= 3). ok is
// false when a and b are not grid neighbours.
func (t *torusShape) neighbour(a, b int32) (dim, dir int, wrapCable, ok bool) {
	dim = -1
	for i := 0; i < t.n; i++ {
		if t.x(a, i) != t.x(b, i) {
			if dim >= 0 {
				return 0, 0, false, false
			}
			dim = i
		}
	}
	if dim < 0 {
		return 0, 0, false, false
	}
	xa, xb, k := t.x(a, dim), t.x(b, dim), t.k[dim]
	switch {
	case k == 2 || xb == xa+1:
		if xb > xa {
			return dim, dirPlus, false, true
		}
		return dim, dirMinus, false, true
	case xb == xa-1:
		return dim, dirMinus, false, true
	case xa == k-1 && xb == 0:
		return dim, dirPlus, true, true
	case xa == 0 && xb == k-1:
		return dim, dirMinus, true, true
	}
	return 0, 0, false, false
}

// wraps decides which dimensions wrap: torus (DORConfig.Torus), or else a
// dimension of size >= 3 wraps when any wrap-around cable exists (a
// partial set is then reported as missing links). It also assigns the
// dateline SL bits: one per wrapping dimension of size >= 4 (in a ring of 3
// every minimal path is a single hop, so no dependency stays inside it).
func (t *torusShape) wraps(g *fabric.Graph, engine string, torus []bool) error {
	t.wrap = make([]bool, t.n)
	if torus != nil {
		if len(torus) != t.n {
			return fmt.Errorf("%s: torus %s: %d flags for %d dimensions, expected one 0 or 1 per dimension", engine, fmtWrap(torus), len(torus), t.n)
		}
		copy(t.wrap, torus)
	} else {
		for c := 0; c < g.NumChannels(); c++ {
			if dim, _, wc, ok := t.neighbour(g.Tail[c], g.Head[c]); ok && wc {
				t.wrap[dim] = true
			}
		}
	}
	t.bit = make([]int8, t.n)
	for i := range t.wrap {
		t.wrap[i] = t.wrap[i] && t.k[i] >= 3
		t.bit[i] = -1
		if t.wrap[i] && t.k[i] >= 4 {
			t.bit[i] = int8(t.nbits)
			t.nbits++
		}
	}
	return nil
}

// links checks every cable and fills the port table: each cable must join
// grid neighbours (wrap-around cables of a dimension declared not to wrap
// are left unused), and every neighbour the shape expects must be cabled.
// Of parallel cables the lowest port is used.
func (t *torusShape) links(g *fabric.Graph, engine string) error {
	S := g.NumSwitches()
	t.port = make([]uint8, S*t.n*2)
	for c := 0; c < g.NumChannels(); c++ {
		a, b := g.Tail[c], g.Head[c]
		dim, dir, wc, ok := t.neighbour(a, b)
		if !ok {
			return NotApplicable(engine, "cable between %s and %s (%q port %d) is not a neighbour link",
				t.label(a), t.label(b), g.SwitchName(a), g.OutPort[c])
		}
		if wc && !t.wrap[dim] {
			continue
		}
		if p := &t.port[(int(a)*t.n+dim)*2+dir]; *p == 0 {
			*p = g.OutPort[c]
		}
	}
	nb := make([]int32, t.n)
	for s := int32(0); int(s) < S; s++ {
		for i := 0; i < t.n; i++ {
			x, k := t.x(s, i), t.k[i]
			for dir := dirPlus; dir <= dirMinus; dir++ {
				y := x + 1
				if dir == dirMinus {
					y = x - 1
				}
				if k == 2 && y != 1-x {
					continue // the one neighbour is found in the other direction
				}
				if y < 0 || y >= k {
					if !t.wrap[i] {
						continue // mesh boundary
					}
					y = (y + k) % k
				}
				if t.portOf(s, i, dir) != 0 {
					continue
				}
				copy(nb, t.coord[int(s)*t.n:(int(s)+1)*t.n])
				nb[i] = y
				return NotApplicable(engine, "link %s-%s missing: DOR cannot route around failures", t.label(s), coordString(nb))
			}
		}
	}
	return nil
}
