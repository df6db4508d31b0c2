package novacube

import (
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/cdg"
)

// Hop types the class search assigns VC classes to (§5.3 cuts the rings
// with datelines; step 1 and the jumps are what PORA adds to DOR). A
// dateline counts as crossed once the packet took the ring's wrap-around
// link or a jump that passes it in the direction of travel.
const (
	typeFirst    = iota // step-1 regular hop at the source
	typeFirstJ          // step-1 regular hop after a jump at the source
	typeSrcJump         // jump at the source
	typeQuadJump        // + 4·dim + 2·minus + crossed: a jump inside the quadrant, by the ring DOR is in and its direction
)

// typeRing returns the first ring-hop type: + 2·dim + crossed.
func typeRing(n int) int { return typeQuadJump + 4*n }

// numTypes returns the number of hop types in n dimensions.
func numTypes(n int) int { return typeRing(n) + 2*n }

// hopType classifies one hop of a packet in n dimensions.
func hopType(n int) func(s hopState) int {
	return func(s hopState) int {
		switch {
		case s.jumpHere && s.step1:
			return typeSrcJump
		case s.jumpHere:
			return typeQuadJump + 4*s.dorDim + 2*b2i(s.dorMinus) + s.crossedAll>>s.dorDim&1
		case s.step1 && s.jumped:
			return typeFirstJ
		case s.step1:
			return typeFirst
		}
		return typeRing(n) + 2*s.dim + s.crossedAll>>s.dim&1
	}
}

// TypeName names hop type t in n dimensions: "first", "first after
// jump", "source jump", "jump in +d0", "d0", "d0 after dateline", ….
func TypeName(t, n int) string {
	switch t {
	case typeFirst:
		return "first"
	case typeFirstJ:
		return "first after jump"
	case typeSrcJump:
		return "source jump"
	}
	name := fmt.Sprintf("d%d", (t-typeRing(n))/2)
	if q := t - typeQuadJump; t < typeRing(n) {
		name = fmt.Sprintf("jump in %cd%d", "+-"[q/2%2], q/4)
	}
	if (t-typeQuadJump)%2 == 1 {
		name += " after dateline"
	}
	return name
}

// SearchResult is the fewest VC classes of an assignment by hop type that
// leaves a reading deadlock-free, and the assignment found.
type SearchResult struct {
	Variant Variant
	Classes int          // fewest classes, 0 when no assignment by hop type is acyclic
	Class   []int        // hop type -> class (-1: the type has no dependency)
	Scheme  Scheme       // Class as a scheme (Classes == 0: every type its own class)
	Audit   *AuditResult // Audit's verdict on Scheme: acyclic, or the cycle no assignment breaks
	Types   int          // hop types with a dependency
	Checked int          // assignments whose CDG was built and checked
	Pruned  int          // partial assignments cut by a cycle already found
}

// typedEdge is a dependency between (channel, hop type) pairs.
type typedEdge struct {
	from, to int32 // channels
	a, b     int8  // hop types
}

// typedDeps returns the dependencies of every path of v on c between
// channels labelled by hop type.
func typedDeps(c *Cube, v Variant) ([]typedEdge, error) {
	T, sl := numTypes(c.N), c.slots()
	seen, err := walkDeps(c, v, T, hopType(c.N))
	if err != nil {
		return nil, err
	}
	var es []typedEdge
	for i, ok := range seen {
		if !ok {
			continue
		}
		b, slot, a, in := i%T, i/T%sl, i/(T*sl)%T, i/(T*sl*T)
		head := c.dest(in/sl, in%sl)
		es = append(es, typedEdge{from: int32(in), to: int32(head*sl + slot), a: int8(a), b: int8(b)})
	}
	return es, nil
}

// classSearch holds the state of MinClasses' exhaustive search.
type classSearch struct {
	c     *Cube
	edges []typedEdge
	real  map[[2]int32][][2]int8 // (from, to) channels -> type pairs
	used  []int                  // hop types with a dependency, in order
	part  []int                  // hop type -> class
	certs [][]certificate        // by position in used of the last type they name
	res   *SearchResult
}

// certificate is a cycle that every assignment putting each pair's two
// hop types in one class keeps.
type certificate [][2]int

// MinClasses searches the assignments of VC classes to hop types (first
// hop, first hop after a source jump, source jump, quadrant jump and ring
// hop by dimension and by whether that ring's dateline was crossed) for
// the fewest classes whose CDG over (channel, class) is acyclic, by
// increasing class count. It is exhaustive: classes are interchangeable,
// so assignments are enumerated as set partitions (restricted growth
// strings), and a partial assignment is cut when it already merges the
// hop types a cycle found before needs merged (merging classes never
// removes a cycle). The assignment found is confirmed by Audit.
func MinClasses(c *Cube, v Variant) (*SearchResult, error) {
	s, err := newClassSearch(c, v)
	if err != nil {
		return nil, err
	}
	for i, t := range s.used { // every type its own class first: if that is cyclic, nothing is acyclic
		s.part[t] = i
	}
	if cyc, err := s.check(len(s.used)); err != nil || cyc {
		if err == nil {
			err = s.judge(len(s.used), false)
		}
		return s.res, err
	}
	for V := 1; V <= len(s.used); V++ {
		found, err := s.enumerate(0, 0, V)
		if err != nil {
			return nil, err
		}
		if found {
			return s.res, s.judge(V, true)
		}
	}
	return nil, fmt.Errorf("novacube: %s: the class search missed the acyclic assignment by type", v)
}

// newClassSearch walks v's paths on c and indexes the typed dependencies.
func newClassSearch(c *Cube, v Variant) (*classSearch, error) {
	es, err := typedDeps(c, v)
	if err != nil {
		return nil, err
	}
	s := &classSearch{c: c, edges: es, real: map[[2]int32][][2]int8{}, res: &SearchResult{Variant: v}}
	occurs := make([]bool, numTypes(c.N))
	for _, e := range es {
		k := [2]int32{e.from, e.to}
		s.real[k] = append(s.real[k], [2]int8{e.a, e.b})
		occurs[e.a], occurs[e.b] = true, true
	}
	s.part = make([]int, len(occurs))
	for t, ok := range occurs {
		s.part[t] = -1
		if ok {
			s.used = append(s.used, t)
		}
	}
	s.certs = make([][]certificate, len(s.used))
	s.res.Types = len(s.used)
	return s, nil
}

// enumerate assigns classes to s.used[i:] given that classes [0, k) are in
// use, and reports whether an acyclic assignment with exactly V classes
// was found (left in s.part).
func (s *classSearch) enumerate(i, k, V int) (bool, error) {
	if i == len(s.used) {
		if k < V {
			return false, nil
		}
		cyc, err := s.check(V)
		return !cyc, err
	}
	if k+len(s.used)-i < V {
		return false, nil
	}
	for cl := 0; cl <= k && cl < V; cl++ {
		s.part[s.used[i]] = cl
		if s.cut(i) {
			s.res.Pruned++
			continue
		}
		found, err := s.enumerate(i+1, max(k, cl+1), V)
		if found || err != nil {
			return found, err
		}
	}
	return false, nil
}

// cut reports whether a known cycle survives the assignment of s.used[:i+1].
func (s *classSearch) cut(i int) bool {
	for _, cert := range s.certs[i] {
		keeps := true
		for _, p := range cert {
			if s.part[p[0]] != s.part[p[1]] {
				keeps = false
				break
			}
		}
		if keeps {
			return true
		}
	}
	return false
}

// check builds the CDG of assignment s.part over V classes, reports
// whether it is cyclic, and files the cycle as a certificate.
func (s *classSearch) check(V int) (bool, error) {
	s.res.Checked++
	from, to := make([]int32, len(s.edges)), make([]int32, len(s.edges))
	for i, e := range s.edges {
		from[i] = e.from*int32(V) + int32(s.part[e.a])
		to[i] = e.to*int32(V) + int32(s.part[e.b])
	}
	g, err := cdg.NewCSR(s.c.Nodes()*s.c.slots()*V, from, to)
	if err != nil {
		return false, err
	}
	cyc := cdg.FindCycle(g)
	if cyc == nil {
		return false, nil
	}
	cert := s.certificate(cyc, V)
	last := 0
	for _, p := range cert {
		for pos, t := range s.used {
			if t == p[0] || t == p[1] {
				last = max(last, pos)
			}
		}
	}
	s.certs[last] = append(s.certs[last], cert)
	return true, nil
}

// certificate explains cycle cyc of the class CDG by dependencies between
// typed channels, preferring at each channel to leave on the type it was
// entered on, and returns the pairs of types the cycle needs in one class.
func (s *classSearch) certificate(cyc []int32, V int) certificate {
	var cert certificate
	first, arrive := -1, -1
	for i, x := range cyc {
		y := cyc[(i+1)%len(cyc)]
		var pick [2]int8
		picked := false
		for _, ab := range s.real[[2]int32{x / int32(V), y / int32(V)}] {
			if s.part[ab[0]] != int(x%int32(V)) || s.part[ab[1]] != int(y%int32(V)) {
				continue
			}
			if !picked || int(ab[0]) == arrive {
				pick, picked = ab, true
			}
		}
		if first < 0 {
			first = int(pick[0])
		} else if int(pick[0]) != arrive {
			cert = append(cert, [2]int{arrive, int(pick[0])})
		}
		arrive = int(pick[1])
	}
	if arrive != first {
		cert = append(cert, [2]int{arrive, first})
	}
	return cert
}

// judge turns assignment s.part into a Scheme and has Audit judge it,
// which must agree with the search's verdict (acyclic or not).
func (s *classSearch) judge(V int, acyclic bool) error {
	r := s.res
	if acyclic {
		r.Classes = V
	}
	r.Class = append([]int(nil), s.part...)
	groups := make([][]string, V)
	for _, t := range s.used {
		groups[r.Class[t]] = append(groups[r.Class[t]], TypeName(t, s.c.N))
	}
	doc := make([]string, V)
	for i, g := range groups {
		doc[i] = fmt.Sprintf("VC%d: %s", i, strings.Join(g, ", "))
	}
	class, typ := r.Class, hopType(s.c.N)
	r.Scheme = Scheme{Name: fmt.Sprintf("by-type/%d", V), VCs: V, Doc: strings.Join(doc, "; "),
		vc: func(h hopState) int { return max(class[typ(h)], 0) }}
	a, err := Audit(s.c, r.Variant, r.Scheme)
	if err != nil {
		return err
	}
	if a.Acyclic != acyclic {
		return fmt.Errorf("novacube: %s: Audit and the class search disagree (acyclic %v, %v) on %s", r.Variant, a.Acyclic, acyclic, r.Scheme.Doc)
	}
	r.Audit = a
	return nil
}
