package novacube

import (
	"fmt"
	"math"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// Props are the analytic properties of a k-ary n-cube torus or NovaCube,
// measured on the fabric the generator builds, beside the paper's closed
// forms (§4.2). Links and cuts count cables; throughputs are per node in
// units of one channel's bandwidth b_c.
type Props struct {
	Kind  string // "torus" or "novacube"
	K, N  int
	Nodes int

	Links, LinksFormula int // switch-to-switch cables; eq. 11 (torus: n·k^n)

	Diameter, DiameterFormula int // BFS; eq. 3 (torus: ⌊k/2⌋·n)
	APL                       float64
	APLFormula                float64 // eq. 10 (2D NovaCube only, else NaN)

	BisectionFormula int // eq. 4 in cables: (k^n + 4k^{n−1})/2 (torus: 2k^{n−1})
	BisectionDimCut  int // cables across the cut halving dimension 0
	BisectionBest    int // least of the linear cuts tried (even k; 0 otherwise)

	ThroughputFormula float64 // eq. 7: (2k+8)/k (torus: 8/k)
	ThroughputCut     float64 // 4·BisectionBest/N: the bound of the best cut
	ThroughputChannel float64 // 2·Links/(N·APL): every channel busy on minimal paths
}

// Analyse builds the fabric (no hosts) and measures it: all-pairs BFS over
// the switch graph, O(N·(N+L)), plus 3^n linear cuts.
func Analyse(kind string, k, n int) (*Props, error) {
	var tp *topo.Topology
	var err error
	switch kind {
	case "torus":
		if k < 3 {
			return nil, fmt.Errorf("%w: torus k = %d, expected >= 3", ErrParam, k)
		}
		dims := make([]int, n)
		for i := range dims {
			dims[i] = k
		}
		tp, err = topo.Torus(dims, 0, false)
	case "novacube":
		tp, err = topo.NovaCube(k, n, 0)
	default:
		return nil, fmt.Errorf("%w: kind %q, expected torus or novacube", ErrParam, kind)
	}
	if err != nil {
		return nil, err
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		return nil, err
	}
	S := g.NumSwitches()
	if S > maxNodes {
		return nil, fmt.Errorf("%w: %d switches exceed %d", ErrParam, S, maxNodes)
	}
	p := &Props{Kind: kind, K: k, N: n, Nodes: S, Links: g.NumChannels() / 2}
	p.formulas()
	sum := 0
	dist := make([]int32, S)
	queue := make([]int32, 0, S)
	for s := int32(0); int(s) < S; s++ {
		for i := range dist {
			dist[i] = -1
		}
		dist[s] = 0
		queue = append(queue[:0], s)
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if v := g.Head[c]; dist[v] < 0 {
					dist[v] = dist[u] + 1
					queue = append(queue, v)
				}
			}
		}
		if len(queue) != S {
			return nil, fmt.Errorf("novacube: %s k=%d n=%d is disconnected", kind, k, n)
		}
		for _, d := range dist {
			sum += int(d)
			p.Diameter = max(p.Diameter, int(d))
		}
	}
	p.APL = float64(sum) / float64(S*(S-1))
	p.BisectionDimCut, p.BisectionBest = cuts(g, tp.Coords, k, n)
	if p.BisectionBest > 0 {
		p.ThroughputCut = 4 * float64(p.BisectionBest) / float64(S)
	}
	p.ThroughputChannel = 2 * float64(p.Links) / (float64(S) * p.APL)
	return p, nil
}

// formulas fills the paper's closed forms (§4.1, eqs. 3, 4, 7, 10, 11)
// for the torus or NovaCube of p's size.
func (p *Props) formulas() {
	k, n := p.K, p.N
	kn, kn1 := p.Nodes, p.Nodes/p.K
	if p.Kind == "torus" {
		p.LinksFormula = n * kn
		p.DiameterFormula = (k / 2) * n
		p.APLFormula = math.NaN()
		p.BisectionFormula = 2 * kn1
		p.ThroughputFormula = 8 / float64(k)
	} else {
		p.LinksFormula = n * kn
		if k%2 == 0 {
			p.LinksFormula += kn / 2
		} else {
			p.LinksFormula += ipow(k-1, n) / 2
		}
		p.DiameterFormula = (k / 2) * n / 2
		p.APLFormula = math.NaN()
		if n == 2 {
			kf := float64(k)
			p.APLFormula = (kf*kf*kf/3 + kf*kf/2 - 4*kf/3 + 1) / (kf*kf - 1)
		}
		p.BisectionFormula = (kn + 4*kn1) / 2
		p.ThroughputFormula = (2*float64(k) + 8) / float64(k)
	}
}

// cuts counts the cables across the halving of dimension 0 (⌊k/2⌋ slices
// on one side) and, for even k, the least over the linear cuts
// {x : (c·x mod k) < k/2} with c ∈ {−1, 0, 1}^n (first non-zero entry 1),
// each of which splits the nodes in equal halves. The least is an upper
// bound on the minimum bisection (eq. 4 is the dimension cut).
func cuts(g *fabric.Graph, coords [][]int, k, n int) (dimCut, best int) {
	count := func(side func(x []int) bool) int {
		c := 0
		for ch := 0; ch < g.NumChannels(); ch++ {
			if side(coords[g.Tail[ch]]) && !side(coords[g.Head[ch]]) {
				c++
			}
		}
		return c
	}
	dimCut = count(func(x []int) bool { return x[0] < k/2 })
	if k%2 == 1 {
		return dimCut, 0
	}
	vec := make([]int, n)
	for code := 1; code < ipow(3, n); code++ {
		first := 0
		for i, v := 0, code; i < n; i++ {
			vec[i] = v%3 - 1
			v /= 3
			if first == 0 {
				first = vec[i]
			}
		}
		if first != 1 {
			continue
		}
		c := count(func(x []int) bool {
			s := 0
			for i := range x {
				s += vec[i] * x[i]
			}
			return ((s%k)+k)%k < k/2
		})
		if best == 0 || c < best {
			best = c
		}
	}
	return dimCut, best
}

func ipow(b, e int) int {
	v := 1
	for ; e > 0; e-- {
		v *= b
	}
	return v
}
