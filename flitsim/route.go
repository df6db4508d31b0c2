package flitsim

// Per-hop routing under a Policy: the run's side. A switch decides when a
// packet's head arrives; the Router sees, per output port, the flits the
// switch's inputs hold for that port plus the downstream buffer's fill on
// the VC the packet would use (credits). Random choices draw from the
// switch's own PCG stream.

// routePolicy returns the output VC of packet p entering switch sw on
// link l.
func (s *sim) routePolicy(sw, l, p int32) int32 {
	n, pol := s.n, s.n.pol
	pk := &s.pk[p]
	if sw == n.nodeSw[pk.dst] {
		lo := n.nChan + int32(len(n.nodeTerm)) + pk.dst
		vl := pk.vlOff * uint8(n.pool)
		if pol.vc == nil {
			vl = n.hopVL(sw, n.lkDstPort[l], n.lkSrcPort[lo], pk.sl, pk.vlOff)
		}
		return lo<<s.vs | int32(vl)
	}
	s.hop.pk, s.hop.x = pk, sw
	c := s.router.Next(&s.hop)
	if c < 0 { // the LFT, or no candidate (cannot happen on a connected fabric)
		c, _ = n.outLink(sw, pk.dlid)
	}
	vl := s.hopVC(sw, n.lkDstPort[l], c, pk, pk.ps.Phase)
	if pol.vc != nil {
		if _, over := pol.vc.HopVC(s.vcHop(sw, c, pk, pk.ps.Phase)); over {
			s.vcOverflow++
		}
	}
	s.advance(sw, c, pk)
	return c<<s.vs | int32(vl)
}

// vcHop describes the next hop of pk from x over channel c with phase ph
// (counters before the hop).
func (s *sim) vcHop(x, c int32, pk *packet, ph uint8) VCHop {
	group := s.n.pol.group
	head := s.n.lkDstSw[c]
	ps := &pk.ps
	return VCHop{Global: group[x] != group[head], Hops: int(ps.Hops), LocalHops: int(ps.Local),
		GlobalHops: int(ps.Global), HopsInGroup: int(ps.InGroup), Phase: int(ph),
		IntoDest: group[head] == group[s.n.nodeSw[pk.dst]]}
}

// hopVC returns the VL of pk's hop from x over channel c (in port in).
func (s *sim) hopVC(x int32, in uint8, c int32, pk *packet, ph uint8) uint8 {
	v := s.n.pol.vc
	if v == nil {
		return s.n.hopVL(x, in, s.n.lkSrcPort[c], pk.sl, pk.vlOff)
	}
	vc, _ := v.HopVC(s.vcHop(x, c, pk, ph)) // overflow: top VC, counted by the caller
	return (uint8(vc) + pk.vlOff) * uint8(s.n.pool)
}

// advance updates pk's counters for its hop from x over c.
func (s *sim) advance(x, c int32, pk *packet) {
	group := s.n.pol.group
	head := s.n.lkDstSw[c]
	ps := &pk.ps
	if ps.Hops < 255 {
		ps.Hops++
	}
	if group[x] != group[head] {
		ps.Global++
		ps.InGroup = 0
	} else {
		ps.Local++
		ps.InGroup++
	}
	if ps.Target > 0 && group[head] == ps.Target-1 {
		ps.Target = 0
	}
}
