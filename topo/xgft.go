package topo

import (
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// XGFT builds the extended generalized fat tree XGFT(h; m1,…,mh; w1,…,wh)
// of Öhring, Ibel, Das and Kumar ("On generalized fat trees", IPPS 1995,
// Section 2). m and w hold m1..mh and w1..wh (so m[0] is m1).
//
// The tree has levels 0..h. Level 0 holds the ∏ m_i hosts, levels 1..h hold
// switches. Every node at level i ≥ 1 has m_i children and every node below
// the top has w_(i+1) parents. A level-i node is the tuple
// (x_h,…,x_(i+1), y_i,…,y_1) with x_j < m_j and y_j < w_j, so level i has
// ∏_(j>i) m_j · ∏_(j≤i) w_j nodes; it is cabled to the w_(i+1) level-(i+1)
// nodes obtained by replacing x_(i+1) with any y_(i+1).
//
// Hosts are single-port CAs, so w1 must be 1: level-1 switches carry m1
// hosts each. Radix = max over i of m_i + w_(i+1) (w_(h+1) = 0). Ports: a
// level-i switch reaches child x_i on port x_i+1 (hosts of a level-1 switch
// on 1..m1) and parent y_(i+1) on port m_i+1+y_(i+1); other ports stay
// free.
//
// Switches are numbered level by level from level 1, each level in
// mixed-radix order of its tuple (x_h most significant); labels read
// "L<i> (tuple)" with the paper's level i. Group[s] = i−1, so leaf switches
// are group 0 as in every tree kind of this package. Coords is nil and
// Bisection 0: the bisection of a slimmed XGFT depends on all of m and w and
// is not computed here. FatTree, Clos2 and Clos3 are special cases
// (k-ary n-tree = XGFT(n; k,…,k; 1,k,…,k)).
func XGFT(h int, m, w []int) (*Topology, error) {
	const kind = "xgft"
	radix, err := xgftRadix(h, m, w)
	if err != nil {
		return nil, err
	}
	rad, size, switches := xgftLevels(h, m, w)
	if err := checkLIDBudget(kind, switches, size[0]); err != nil {
		return nil, err
	}

	s := newSpec(kind, fmt.Sprintf("h=%d m=%s w=%s", h, fmtInts(m, ","), fmtInts(w, ",")), radix)
	first := make([]int, h+1) // spec index of the first switch of level i
	digits := make([]int, h)
	for i := 1; i <= h; i++ {
		first[i] = len(s.labels)
		hosts := 0
		if i == 1 {
			hosts = m[0]
		}
		for idx := range size[i] {
			mixedDecode(idx, rad[i], digits)
			s.addSwitch(fmt.Sprintf("L%d %s", i, coordLabel(digits)), hosts)
			s.group = append(s.group, i-1)
		}
	}
	for i := 1; i < h; i++ {
		p := h - i - 1 // tuple position of x_(i+1) (level i) and y_(i+1) (level i+1)
		for idx := range size[i] {
			mixedDecode(idx, rad[i], digits)
			child := digits[p]
			for y := range w[i] {
				digits[p] = y
				parent := mixedEncode(digits, rad[i+1])
				s.linkPorts(first[i]+idx, m[i-1]+1+y, first[i+1]+parent, child+1)
			}
		}
	}
	return s.build()
}

// xgftRadix checks XGFT's parameters and returns the switch radix.
func xgftRadix(h int, m, w []int) (int, error) {
	const kind = "xgft"
	if h < 1 {
		return 0, paramError(kind, "height h=%d, expected >= 1", h)
	}
	if len(m) != h {
		return 0, paramError(kind, "h=%d but %d values of m (%s), expected %d", h, len(m), fmtInts(m, ","), h)
	}
	if len(w) != h {
		return 0, paramError(kind, "h=%d but %d values of w (%s), expected %d", h, len(w), fmtInts(w, ","), h)
	}
	for i := range h {
		if m[i] < 1 {
			return 0, paramError(kind, "m%d=%d, expected >= 1", i+1, m[i])
		}
		if w[i] < 1 {
			return 0, paramError(kind, "w%d=%d, expected >= 1", i+1, w[i])
		}
	}
	if w[0] != 1 {
		return 0, paramError(kind, "w1=%d: hosts are single-port CAs with one parent, expected w1=1", w[0])
	}
	radix := 0
	for i := range h {
		up := 0
		if i+1 < h {
			up = w[i+1]
		}
		if r := m[i] + up; r > radix {
			radix = r
		}
	}
	if radix > fabric.MaxPorts {
		return 0, paramError(kind, "switches would need %d ports, expected at most %d", radix, fabric.MaxPorts)
	}
	return radix, nil
}

// xgftLevels returns rad[i], the digit ranges of a level-i tuple, most
// significant first (m_h..m_(i+1), w_i..w_1); size[i], their product; and
// the number of switches (levels 1..h), each capped against overflow.
func xgftLevels(h int, m, w []int) (rad [][]int, size []int, switches int) {
	rad = make([][]int, h+1)
	size = make([]int, h+1)
	for i := 0; i <= h; i++ {
		r := make([]int, 0, h)
		for j := h; j > i; j-- {
			r = append(r, m[j-1])
		}
		for j := i; j >= 1; j-- {
			r = append(r, w[j-1])
		}
		rad[i] = r
		size[i] = 1
		for _, x := range r {
			size[i] = mulCap(size[i], x)
		}
		if i > 0 {
			switches = addCap(switches, size[i])
		}
	}
	return rad, size, switches
}

// mixedDecode writes the digits of x in the mixed radix r (most significant
// first) into d.
func mixedDecode(x int, r, d []int) {
	for j := len(r) - 1; j >= 0; j-- {
		d[j] = x % r[j]
		x /= r[j]
	}
}

// mixedEncode is the inverse of mixedDecode.
func mixedEncode(d, r []int) int {
	x := 0
	for j := range r {
		x = x*r[j] + d[j]
	}
	return x
}

// sizeCap bounds intermediate size computations so that products of
// parameters cannot overflow; anything this large fails checkLIDBudget.
const sizeCap = 1 << 40

// mulCap returns a·b for non-negative a, b, saturated at sizeCap.
func mulCap(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a >= sizeCap || b >= sizeCap || a > sizeCap/b {
		return sizeCap
	}
	return min(a*b, sizeCap)
}

// addCap returns a+b for non-negative a, b, saturated at sizeCap.
func addCap(a, b int) int { return min(a+b, sizeCap) }

// checkLIDBudget rejects parameters whose fabric would need more unicast
// LIDs (one per switch and per host) than InfiniBand has.
func checkLIDBudget(kind string, switches, hosts int) error {
	if n := addCap(switches, hosts); n > fabric.MaxUnicastLID {
		return paramError(kind, "%s switches and %s hosts need more than the %d unicast LIDs", sizeText(switches), sizeText(hosts), fabric.MaxUnicastLID)
	}
	return nil
}

func sizeText(n int) string {
	if n >= sizeCap {
		return "over 2^40"
	}
	return fmt.Sprint(n)
}

// fmtInts joins integers with sep: fmtInts([]int{4,4}, "x") = "4x4".
func fmtInts(xs []int, sep string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

func init() {
	register(Generator{
		Kind:    "xgft",
		Short:   "extended generalized fat tree XGFT(h; m1..mh; w1..wh) (Öhring et al. 1995); w1 must be 1",
		Example: "--h 2 --m 4,4 --w 1,4",
		Params: []Param{
			{"h", "2", "height (switch levels)"},
			{"m", "4,4", "children per node at levels 1..h (m1 = hosts per leaf switch)"},
			{"w", "1,4", "parents per node at levels 0..h-1 (w1 = 1: single-port hosts)"},
		},
		Build: func(v Values) (*Topology, error) {
			h, m, w := v.Int("h"), v.Ints("m"), v.Ints("w")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return XGFT(h, m, w)
		},
	})
}
