package vcaudit

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/studies/vcpolicy"
)

// auditor holds the distances and the CDG under construction.
type auditor struct {
	cfg   Config
	g     *fabric.Graph
	group []int
	isEnd []bool    // switch has terminals: it sources and sinks traffic
	dist  [][]int32 // dist[d][x]: minimal hops from x to d under the routing
	gdist [][]int32 // gdist[t][x]: hops from x into group t (LARToward)

	edges    map[uint64]struct{}
	used     []bool
	maxPath  int
	wanted   int
	overflow int
	overEx   string
}

// state is a packet at a switch.
type state struct {
	x, in        int32 // switch, incoming channel (-1 at the source)
	invc         int8
	phase        int8
	target       int32 // group the misroute aims at (LARToward), -1 none
	hops, local  int8
	global, ingr int8
}

func newAuditor(cfg Config) (*auditor, error) {
	g := cfg.Graph
	if g == nil || g.NumSwitches() == 0 {
		return nil, fmt.Errorf("%w: no fabric", ErrConfig)
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if cfg.MaxHops == 0 {
		cfg.MaxHops = 64
	}
	if cfg.MaxHops < 1 || cfg.MaxHops > 127 {
		return nil, fmt.Errorf("%w: MaxHops %d, expected 1..127", ErrConfig, cfg.MaxHops)
	}
	n := g.NumSwitches()
	group := cfg.Group
	if group == nil && cfg.Tables != nil {
		group = cfg.Tables.Group
	}
	if group == nil {
		group = make([]int, n)
	}
	if len(group) != n {
		return nil, fmt.Errorf("%w: %d group values for %d switches", ErrConfig, len(group), n)
	}
	ng := 0
	for _, v := range group {
		if v < 0 {
			return nil, fmt.Errorf("%w: negative group %d", ErrConfig, v)
		}
		ng = max(ng, v+1)
	}
	if t := cfg.Tables; t != nil {
		if t.G != g {
			return nil, fmt.Errorf("%w: tables of another fabric", ErrConfig)
		}
		for x, v := range group {
			if t.Group[x] != v {
				return nil, fmt.Errorf("%w: groups differ from the tables' super nodes at %s", ErrConfig, g.SwitchName(int32(x)))
			}
		}
	}
	if cfg.Misroute < NoMisroute || cfg.Misroute > AnyPort {
		return nil, fmt.Errorf("%w: misroute %d", ErrConfig, cfg.Misroute)
	}
	a := &auditor{cfg: cfg, g: g, group: group, isEnd: make([]bool, n),
		edges: map[uint64]struct{}{}, used: make([]bool, g.NumChannels()*cfg.Policy.VCs)}
	for x := int32(0); int(x) < n; x++ {
		a.isEnd[x] = len(g.TermsOf(x)) > 0
	}
	a.dist = make([][]int32, n)
	for d := int32(0); int(d) < n; d++ {
		a.dist[d] = a.bfs([]int32{d})
	}
	if cfg.Misroute == LARToward {
		members := make([][]int32, ng)
		for x, v := range group {
			members[v] = append(members[v], int32(x))
		}
		a.gdist = make([][]int32, ng)
		for t := range members {
			a.gdist[t] = a.bfs(members[t])
		}
	}
	return a, nil
}

// bfs returns hop distances to the set src (cables are bidirectional).
func (a *auditor) bfs(src []int32) []int32 {
	g := a.g
	d := make([]int32, g.NumSwitches())
	for i := range d {
		d[i] = -1
	}
	q := append([]int32(nil), src...)
	for _, s := range src {
		d[s] = 0
	}
	for h := 0; h < len(q); h++ {
		v := q[h]
		for c := g.Off[v]; c < g.Off[v+1]; c++ {
			w := g.Head[c]
			if d[w] < 0 {
				d[w] = d[v] + 1
				q = append(q, w)
			}
		}
	}
	return d
}

// global reports whether channel c joins two groups.
func (a *auditor) global(c int32) bool { return a.group[a.g.Tail[c]] != a.group[a.g.Head[c]] }

// minimal appends the minimal choices at x toward d.
func (a *auditor) minimal(buf []int32, x, d int32) []int32 {
	if t := a.cfg.Tables; t != nil {
		return append(buf, t.Lookup(x, d)...)
	}
	return a.downhill(buf, x, a.dist[d])
}

// towardGroup appends the choices at x that bring it minimally into t.
func (a *auditor) towardGroup(buf []int32, x int32, t int) []int32 {
	if tb := a.cfg.Tables; tb != nil {
		return append(buf, tb.T2(x, t)...)
	}
	return a.downhill(buf, x, a.gdist[t])
}

// downhill appends the channels at x whose head is one hop closer under
// the distances row.
func (a *auditor) downhill(buf []int32, x int32, row []int32) []int32 {
	g := a.g
	dx := row[x]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if row[g.Head[c]] == dx-1 {
			buf = append(buf, c)
		}
	}
	return buf
}

type choice struct {
	c      int32
	phase  int8
	target int32
}

// choices lists what a packet in state s may do next toward d.
func (a *auditor) choices(s state, d int32) []choice {
	g := a.g
	var out []choice
	if s.target >= 0 && int(s.target) != a.group[s.x] {
		for _, c := range a.towardGroup(nil, s.x, int(s.target)) {
			out = append(out, choice{c, s.phase, s.target})
		}
		return out
	}
	mins := a.minimal(nil, s.x, d)
	for _, c := range mins {
		out = append(out, choice{c, s.phase, -1})
	}
	if s.phase == 1 || a.cfg.Misroute == NoMisroute {
		return out
	}
	isMin := func(c int32) bool {
		for _, m := range mins {
			if m == c {
				return true
			}
		}
		return false
	}
	// LAR excludes only P_A, the minimal port it picked: another minimal
	// port may be the misroute when there are several.
	excluded := func(c int32) bool {
		return (isMin(c) && len(mins) == 1) || (a.cfg.NoUTurn && s.in >= 0 && c == g.Rev[s.in])
	}
	xg, dg := a.group[s.x], a.group[d]
	for c := g.Off[s.x]; c < g.Off[s.x+1]; c++ {
		hg := a.group[g.Head[c]]
		switch a.cfg.Misroute {
		case LAROwn, LARToward:
			if excluded(c) {
				continue
			}
			if xg == dg && hg == xg {
				out = append(out, choice{c, 1, -1})
			} else if xg != dg && hg != xg {
				out = append(out, choice{c, 1, -1})
			}
		case SourceGlobal:
			if s.hops == 0 && hg != xg && hg != dg {
				out = append(out, choice{c, 1, -1})
			}
		case AnyPort:
			if !isMin(c) && !excluded(c) {
				out = append(out, choice{c, 1, -1})
			}
		}
	}
	if a.cfg.Misroute == LARToward && xg != dg {
		// Local ports toward another group's gateway, aiming at it.
		for t := range a.gdist {
			if t == xg || t == dg {
				continue
			}
			for _, c := range a.towardGroup(nil, s.x, t) {
				if a.group[g.Head[c]] == xg && !excluded(c) {
					out = append(out, choice{c, 1, int32(t)})
				}
			}
		}
	}
	return out
}

// dest explores every packet state toward d from every source.
func (a *auditor) dest(d int32) error {
	g := a.g
	seen := map[state]struct{}{}
	var stack []state
	for x := int32(0); int(x) < g.NumSwitches(); x++ {
		if x != d && a.isEnd[x] {
			s := state{x: x, in: -1, target: -1}
			seen[s] = struct{}{}
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.x == d && s.target < 0 {
			continue
		}
		if int(s.hops) >= a.cfg.MaxHops {
			return fmt.Errorf("vcaudit: a path toward %s exceeds %d hops: the routing loops", g.SwitchName(d), a.cfg.MaxHops)
		}
		ch := a.choices(s, d)
		if len(ch) == 0 {
			return fmt.Errorf("vcaudit: no route from %s to %s", g.SwitchName(s.x), g.SwitchName(d))
		}
		for _, o := range ch {
			glob := a.global(o.c)
			head := g.Head[o.c]
			h := vcpolicy.Hop{Global: glob, Hops: int(s.hops), LocalHops: int(s.local), GlobalHops: int(s.global),
				HopsInGroup: int(s.ingr), Phase: int(o.phase), IntoDest: a.group[head] == a.group[d]}
			a.wanted = max(a.wanted, a.cfg.Policy.Want(h)+1)
			vc, err := a.cfg.Policy.VC(h)
			if err != nil {
				if a.overflow == 0 {
					a.overEx = fmt.Sprintf("%v, hop %d (%s) toward %s", err, s.hops+1, g.ChannelName(o.c), g.SwitchName(d))
				}
				a.overflow++
			}
			V := int32(a.cfg.Policy.VCs)
			to := o.c*V + int32(vc)
			a.used[to] = true
			if s.in >= 0 {
				from := s.in*V + int32(s.invc)
				a.edges[uint64(from)<<32|uint64(to)] = struct{}{}
			}
			n := state{x: head, in: o.c, invc: int8(vc), phase: o.phase, target: o.target,
				hops: s.hops + 1, local: s.local, global: s.global, ingr: s.ingr + 1}
			if glob {
				n.global++
				n.ingr = 0
			} else {
				n.local++
			}
			if n.target >= 0 && int(n.target) == a.group[head] {
				n.target = -1
			}
			a.maxPath = max(a.maxPath, int(n.hops))
			if _, ok := seen[n]; !ok {
				seen[n] = struct{}{}
				stack = append(stack, n)
			}
		}
	}
	return nil
}
