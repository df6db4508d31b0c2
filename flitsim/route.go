package flitsim

import "github.com/nuesm/nuesm/studies/vcpolicy"

// Per-hop routing under a RoutingPolicy. A switch decides when a packet's
// head arrives; it sees, per output port, the flits its own inputs hold
// for that port plus the downstream buffer's fill on the VC the packet
// would use (credits). Candidates go to scratch slices of the sim; random
// choices draw from the switch's own PCG stream.

// routePolicy returns the output VC of packet p entering switch sw on
// link l.
func (s *sim) routePolicy(sw, l, p int32) int32 {
	n, pol := s.n, s.n.pol
	pk := &s.pk[p]
	if sw == n.nodeSw[pk.dst] {
		lo := n.nChan + int32(len(n.nodeTerm)) + pk.dst
		vl := pk.vlOff
		if pol.VC == nil {
			vl = n.hopVL(sw, n.lkDstPort[l], n.lkSrcPort[lo], pk.sl, pk.vlOff)
		}
		return lo<<s.vs | int32(vl)
	}
	var c int32 = -1
	switch pol.Kind {
	case RouteMinimal:
		c = s.leastOccupied(sw, s.minimal(sw, pk, s.cand[:0]), pk, pk.phase)
	case RouteLAR:
		c = s.lar(sw, pk)
	case RouteValiant, RouteUGAL:
		c = s.valiant(sw, pk)
	case RouteConditional:
		c = s.conditional(sw, pk)
	case RoutePORA:
		c = s.poraHop(sw, pk)
	}
	if c < 0 { // RouteLFT, or no candidate (cannot happen on a connected fabric)
		c, _ = n.outLink(sw, pk.dlid)
	}
	vl := s.hopVC(sw, n.lkDstPort[l], c, pk, pk.phase)
	if pol.VC != nil && pol.VC.Want(s.hop(sw, c, pk, pk.phase)) >= pol.VC.VCs && !pol.VC.Clamp {
		s.vcOverflow++
	}
	s.advance(sw, c, pk)
	return c<<s.vs | int32(vl)
}

// hop describes the next hop of pk from x over channel c with phase ph
// (counters before the hop).
func (s *sim) hop(x, c int32, pk *packet, ph uint8) vcpolicy.Hop {
	pol := s.n.pol
	head := s.n.lkDstSw[c]
	return vcpolicy.Hop{Global: pol.group[x] != pol.group[head], Hops: int(pk.hops), LocalHops: int(pk.local),
		GlobalHops: int(pk.global), HopsInGroup: int(pk.ingr), Phase: int(ph),
		IntoDest: pol.group[head] == pol.group[s.n.nodeSw[pk.dst]]}
}

// hopVC returns the VL of pk's hop from x over channel c (in port in).
func (s *sim) hopVC(x int32, in uint8, c int32, pk *packet, ph uint8) uint8 {
	v := s.n.pol.VC
	if v == nil {
		return s.n.hopVL(x, in, s.n.lkSrcPort[c], pk.sl, pk.vlOff)
	}
	vc, _ := v.VC(s.hop(x, c, pk, ph)) // overflow: top VC, counted by the caller
	return uint8(vc) + pk.vlOff
}

// queue returns the flits waiting for channel c at x plus the fill of the
// downstream buffer of the VC pk would take (phase ph).
func (s *sim) queue(x, c int32, pk *packet, ph uint8) int32 {
	vl := s.hopVC(x, 0, c, pk, ph)
	return s.outPend[c] + int32(s.cfg.BufferFlits) - s.ov[c<<s.vs|int32(vl)].credits
}

// over reports whether channel c's queue is at or above the threshold.
func (s *sim) over(x, c int32, pk *packet, ph uint8) bool {
	return float64(s.queue(x, c, pk, ph)) >= s.n.pol.th*float64(s.cfg.BufferFlits)
}

// paused reports whether the downstream buffer behind c is filled to the
// threshold (Ethernet PAUSE, seed 002 §V-D).
func (s *sim) paused(x, c int32, pk *packet, ph uint8) bool {
	vl := s.hopVC(x, 0, c, pk, ph)
	fill := int32(s.cfg.BufferFlits) - s.ov[c<<s.vs|int32(vl)].credits
	return float64(fill) >= s.n.pol.th*float64(s.cfg.BufferFlits)
}

// advance updates pk's counters for its hop from x over c.
func (s *sim) advance(x, c int32, pk *packet) {
	pol := s.n.pol
	head := s.n.lkDstSw[c]
	if pk.hops < 255 {
		pk.hops++
	}
	if pol.group[x] != pol.group[head] {
		pk.global++
		pk.ingr = 0
	} else {
		pk.local++
		pk.ingr++
	}
	if pk.target > 0 && pol.group[head] == pk.target-1 {
		pk.target = 0
	}
}

// minimal appends pk's minimal choices at x: toward its target group
// while it has one, else toward its destination (RSI tables or every
// shortest-path port).
func (s *sim) minimal(x int32, pk *packet, buf []int32) []int32 {
	pol, g := s.n.pol, s.n.g
	if pk.target > 0 && pol.group[x] != pk.target-1 {
		return s.toward(x, pk.target-1, buf)
	}
	d := s.n.nodeSw[pk.dst]
	if t := pol.Tables; t != nil {
		return append(buf, t.Lookup(x, d)...)
	}
	S := int32(len(pol.group))
	row := pol.dist[d*S : (d+1)*S]
	dx := row[x]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if row[g.Head[c]] == dx-1 {
			buf = append(buf, c)
		}
	}
	return buf
}

// toward appends the choices at x that lead minimally into group t.
func (s *sim) toward(x, t int32, buf []int32) []int32 {
	pol, g := s.n.pol, s.n.g
	if tb := pol.Tables; tb != nil {
		return append(buf, tb.T2(x, int(t))...)
	}
	S := int32(len(pol.group))
	row := pol.gdist[t*S : (t+1)*S]
	dx := row[x]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if row[g.Head[c]] == dx-1 {
			buf = append(buf, c)
		}
	}
	return buf
}

// leastOccupied returns the candidate with the shortest queue, ties
// broken from a random start; -1 for none.
func (s *sim) leastOccupied(x int32, cs []int32, pk *packet, ph uint8) int32 {
	switch len(cs) {
	case 0:
		return -1
	case 1:
		return cs[0]
	}
	k := s.swRng[x].IntN(len(cs))
	best, bq := int32(-1), int32(0)
	for i := range cs {
		c := cs[(k+i)%len(cs)]
		if q := s.queue(x, c, pk, ph); best < 0 || q < bq {
			best, bq = c, q
		}
	}
	return best
}

// lar is seed 000 Algorithm 1. P_A is the least occupied minimal port.
// Misroute candidates are the ports other than P_A under Th: inside the
// destination's super node, its local ports; elsewhere the switch's own
// global ports, plus with LARToward the local ports toward another super
// node's gateway (the packet then aims at that super node), as vcaudit's
// lar-own and lar-toward.
func (s *sim) lar(x int32, pk *packet) int32 {
	pol, g := s.n.pol, s.n.g
	pa := s.leastOccupied(x, s.minimal(x, pk, s.cand[:0]), pk, pk.phase)
	if pa < 0 || pk.phase != 0 || !s.over(x, pa, pk, 0) {
		return pa
	}
	alt, tgt := s.alt[:0], s.altT[:0]
	xg, dg := pol.group[x], pol.group[s.n.nodeSw[pk.dst]]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		hg := pol.group[g.Head[c]]
		if c != pa && (xg == dg) == (hg == xg) && !s.over(x, c, pk, 1) {
			alt, tgt = append(alt, c), append(tgt, 0)
		}
	}
	if pol.LARToward && xg != dg {
		for t := int32(0); t < pol.ng; t++ {
			if t == xg || t == dg {
				continue
			}
			for _, c := range s.toward(x, t, s.cand[:0]) {
				if c != pa && pol.group[g.Head[c]] == xg && !s.over(x, c, pk, 1) {
					alt, tgt = append(alt, c), append(tgt, t+1)
				}
			}
		}
	}
	s.alt, s.altT = alt, tgt
	if len(alt) == 0 {
		return pa
	}
	i := s.swRng[x].IntN(len(alt))
	pk.phase, pk.target = 1, tgt[i]
	s.misroute(pk)
	return alt[i]
}

func (s *sim) misroute(pk *packet) {
	if pk.measured {
		s.misrouted++
	}
}

// valiant routes VAL and UGAL: at the source switch an inter-group packet
// draws a random intermediate group (neither its own nor the
// destination's); VAL always aims at it, UGAL only when the minimal
// port's queue × hops exceeds the Valiant port's queue × hops plus
// UGALBias. Then minimally (to the intermediate group first).
func (s *sim) valiant(x int32, pk *packet) int32 {
	pol := s.n.pol
	d := s.n.nodeSw[pk.dst]
	xg, dg := pol.group[x], pol.group[d]
	if pk.hops == 0 && xg != dg && pol.ng > 2 {
		t := s.otherGroup(s.swRng[x].Int32N(pol.ng-2), xg, dg)
		aim := pol.Kind == RouteValiant
		if !aim {
			S := int32(len(pol.group))
			pm := s.leastOccupied(x, s.minimal(x, pk, s.cand[:0]), pk, 0)
			pk.target = t + 1
			pv := s.leastOccupied(x, s.minimal(x, pk, s.cand[:0]), pk, 1)
			pk.target = 0
			hm := float64(pol.dist[d*S+x])
			hv := float64(pol.gdist[t*S+x] + pol.gdist[t*S+d])
			aim = pm < 0 || pv >= 0 && float64(s.queue(x, pm, pk, 0))*hm > float64(s.queue(x, pv, pk, 1))*hv+pol.UGALBias
		}
		if aim {
			pk.target, pk.phase = t+1, 1
			s.misroute(pk)
		}
	}
	return s.leastOccupied(x, s.minimal(x, pk, s.cand[:0]), pk, pk.phase)
}

// otherGroup maps r in 0..ng−3 to the r-th group other than a and b.
func (s *sim) otherGroup(r, a, b int32) int32 {
	lo, hi := min(a, b), max(a, b)
	if r >= lo {
		r++
	}
	if r >= hi {
		r++
	}
	return r
}

// conditional is seed 002 §V-D: minimal rules toward remote groups are
// defaults, disabled while their output is paused; then a packet at its
// source switch takes its source's static alternative: the switch's own
// global ports to groups other than the destination's, tried from a
// position fixed by the source node, the first not paused (the paper has
// one unconditional alternative per host; skipping a paused one keeps
// UN throughput near MIN), else the default.
func (s *sim) conditional(x int32, pk *packet) int32 {
	pol, g := s.n.pol, s.n.g
	pa := s.leastOccupied(x, s.minimal(x, pk, s.cand[:0]), pk, pk.phase)
	xg, dg := pol.group[x], pol.group[s.n.nodeSw[pk.dst]]
	if pa < 0 || pk.hops != 0 || xg == dg || !s.paused(x, pa, pk, 0) {
		return pa
	}
	alt := s.alt[:0]
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if hg := pol.group[g.Head[c]]; hg != xg && hg != dg {
			alt = append(alt, c)
		}
	}
	s.alt = alt
	for i := range alt {
		if c := alt[(int(pk.src)+i)%len(alt)]; !s.paused(x, c, pk, 1) {
			pk.phase = 1
			s.misroute(pk)
			return c
		}
	}
	return pa
}
