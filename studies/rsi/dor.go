package rsi

import (
	"fmt"
	"strings"
)

// Local selects the routing inside a super node, which seed 000 §IV-A
// leaves open ("there may be more than one minimal path").
type Local int

const (
	// AnyMinimal stores every minimal port in an entry: the router may
	// take any of them (the adaptive reading).
	AnyMinimal Local = iota
	// DimOrder stores one port: the layer-1 graph is read as a Hamming
	// graph (Options.Dims) and a packet corrects the lowest differing
	// dimension first (dimension-order routing, e-cube on the hypercube,
	// as Dally and Seitz make deterministic routing deadlock-free on a
	// cube). T2 entries lead the same way to the nearest gateway, ties
	// broken by the lowest channel id of its global cable.
	DimOrder
)

var localNames = []string{"any", "dor"}

func (l Local) String() string {
	if l >= 0 && int(l) < len(localNames) {
		return localNames[l]
	}
	return fmt.Sprintf("Local(%d)", int(l))
}

// Describe names the routing for reports.
func (l Local) Describe() string {
	switch l {
	case AnyMinimal:
		return "any minimal port"
	case DimOrder:
		return "dimension order"
	}
	return l.String()
}

// ParseLocal reads "any" or "dor".
func ParseLocal(s string) (Local, error) {
	for i, n := range localNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Local(i), nil
		}
	}
	return 0, fmt.Errorf("rsi: routing inside super nodes %q, expected any or dor", s)
}

// BuildOptions select how BuildWith fills the entries.
type BuildOptions struct {
	Local Local
	// Dims are the digit radices of a super node's member positions for
	// DimOrder (topo.RSILayer1Dims): member i has digit d equal to
	// (i / (k_0·…·k_{d−1})) mod k_d, and every layer-1 cable must join
	// members that differ in exactly one digit.
	Dims []int
}

func (o BuildOptions) validate() error {
	switch o.Local {
	case AnyMinimal:
		if o.Dims != nil {
			return fmt.Errorf("%w: dimensions given without dimension-order routing", ErrGroups)
		}
	case DimOrder:
		if len(o.Dims) == 0 {
			return fmt.Errorf("%w: dimension-order routing needs the layer-1 dimensions", ErrGroups)
		}
		for _, k := range o.Dims {
			if k < 2 {
				return fmt.Errorf("%w: dimension of %d, expected >= 2", ErrGroups, k)
			}
		}
	default:
		return fmt.Errorf("%w: routing inside super nodes %v", ErrGroups, o.Local)
	}
	return nil
}

// dimOrder fills the tables by dimension order.
type dimOrder struct {
	t    *Tables
	dims []int
	off  []int     // off[d]: first slot of dimension d in step[x]
	step [][]int32 // step[x][off[d]+v]: x's channel to its neighbour with digit d = v, -1 self
}

// digit returns digit d of member position i.
func (o *dimOrder) digit(i, d int) int {
	for e := 0; e < d; e++ {
		i /= o.dims[e]
	}
	return i % o.dims[d]
}

// newDimOrder checks that every super node is the Hamming graph of dims
// and indexes each node's layer-1 channels by (dimension, digit).
func newDimOrder(t *Tables, dims []int) (*dimOrder, error) {
	g := t.G
	o := &dimOrder{t: t, dims: dims, off: make([]int, len(dims)+1)}
	for d, k := range dims {
		o.off[d+1] = o.off[d] + k
	}
	size := 1
	for _, k := range dims {
		size *= k
	}
	for sn, m := range t.Members {
		if len(m) != size {
			return nil, fmt.Errorf("%w: super node %d has %d nodes, dimensions %v make %d", ErrGroups, sn, len(m), dims, size)
		}
	}
	o.step = make([][]int32, g.NumSwitches())
	for x := int32(0); int(x) < g.NumSwitches(); x++ {
		st := make([]int32, o.off[len(dims)])
		for i := range st {
			st[i] = -1
		}
		xi := t.Index[x]
		for c := g.Off[x]; c < g.Off[x+1]; c++ {
			v := g.Head[c]
			if t.Group[v] != t.Group[x] {
				continue
			}
			d, diff := o.lowestDiff(xi, t.Index[v])
			if diff != 1 {
				return nil, fmt.Errorf("%w: layer-1 cable %s joins nodes that do not differ in exactly one of dimensions %v", ErrGroups, g.ChannelName(c), dims)
			}
			if s := o.off[d] + o.digit(t.Index[v], d); st[s] < 0 {
				st[s] = c // lowest channel id: channels of x increase
			}
		}
		for d := range dims {
			for v := 0; v < dims[d]; v++ {
				if v != o.digit(xi, d) && st[o.off[d]+v] < 0 {
					return nil, fmt.Errorf("%w: %s has no layer-1 neighbour with digit %d = %d: super node %d is not the Hamming graph of dimensions %v",
						ErrGroups, g.SwitchName(x), d, v, t.Group[x], dims)
				}
			}
		}
		o.step[x] = st
	}
	return o, nil
}

// lowestDiff returns the lowest dimension where positions i and j differ
// (-1 when equal) and the number of dimensions where they differ.
func (o *dimOrder) lowestDiff(i, j int) (low, n int) {
	low = -1
	for d, k := range o.dims {
		if i%k != j%k {
			if n++; low < 0 {
				low = d
			}
		}
		i, j = i/k, j/k
	}
	return low, n
}

// next returns x's channel toward member position j: the lowest differing
// dimension, corrected in one hop.
func (o *dimOrder) next(x int32, j int) int32 {
	d, _ := o.lowestDiff(o.t.Index[x], j)
	return o.step[x][o.off[d]+o.digit(j, d)]
}

// fill sets one-port entries. T2 of x toward super node s takes the
// lowest-id global cable toward s among those leaving nearest to x; every
// node on the dimension-order path there picks the same cable, since its
// nearest cables are among x's.
func (o *dimOrder) fill() {
	t, g := o.t, o.t.G
	n, S := g.NumSwitches(), len(t.Members)
	cables := make([][][]int32, S) // cables[s][u]: global channels s -> u, increasing
	for s := range cables {
		cables[s] = make([][]int32, S)
	}
	for c := 0; c < g.NumChannels(); c++ {
		if su, sv := t.Group[g.Tail[c]], t.Group[g.Head[c]]; su != sv {
			cables[su][sv] = append(cables[su][sv], int32(c))
		}
	}
	t.t1 = make([][]Entry, n)
	t.t2 = make([][]Entry, n)
	for x := int32(0); int(x) < n; x++ {
		sn := t.Group[x]
		t.t1[x] = make([]Entry, len(t.Members[sn]))
		for j := range t.Members[sn] {
			if t.ldist[x][j] > 0 {
				t.t1[x][j] = Entry{o.next(x, j)}
			}
		}
		t.t2[x] = make([]Entry, S)
		for s := 0; s < S; s++ {
			dx := t.gdist[x][s]
			if s == sn || dx <= 0 {
				continue
			}
			for _, c := range cables[sn][s] {
				u := g.Tail[c]
				if t.ldist[x][t.Index[u]]+1 != dx {
					continue
				}
				if u == x {
					t.t2[x][s] = Entry{c}
				} else {
					t.t2[x][s] = Entry{o.next(x, t.Index[u])}
				}
				break
			}
		}
	}
}
