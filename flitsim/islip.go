package flitsim

import "math/bits"

// islipAll is switchAll for the router of BookSim2's defaults and its
// kin: one iSLIP iteration, wormhole switching, round-robin VL
// arbitration. Per switch it makes the same requests, grants and moves in
// the same order as switchCycle with saRequests and islipGrants, in one
// pass over the inputs with the tables held in locals across switches.
func (s *sim) islipAll() {
	now, next := s.now, s.now+1
	nowFP := now << 10
	vs := s.vs & 31
	vmask := int32(1)<<vs - 1
	swIn, swInOff := s.n.swIn, s.n.swInOff
	iv, en, ov, freeAt, actMask, swActIn := s.iv, s.en, s.ov, s.freeAt, s.actMask, s.swActIn
	swVA, swMark, saPtr, inWords := s.swVA, s.swMark, s.saPtr, s.inWords
	for _, sw := range s.active {
		ins := swIn[swInOff[sw]:swInOff[sw+1]]
		again := swVA[sw] && s.switchVA(sw, ins)
		// Requests in input order, VLs ascending. The switch runs once
		// per cycle and sends one flit per input, so no input has sent
		// yet.
		reqs := s.saReqs[:0]
		for wi, base := int32(0), sw*inWords; wi < inWords; wi++ {
			for mask := swActIn[base+wi]; mask != 0; mask &= mask - 1 {
				li := ins[wi<<6|int32(bits.TrailingZeros64(mask))]
				for m := actMask[li]; m != 0; m &= m - 1 {
					ivc := li<<vs | int32(bits.TrailingZeros32(m))
					e := &en[iv[ivc].active]
					if e.arr <= e.sent {
						continue
					}
					o := e.out
					if ov[o].credits <= 0 {
						continue
					}
					if freeAt[o>>vs] > nowFP {
						again = true // waits for its link's bandwidth
						continue
					}
					reqs = append(reqs, saReq{ivc, o})
				}
			}
		}
		s.saReqs = reqs
		switch {
		case len(reqs) == 0:
		case len(reqs) == 1 || apart(reqs, vs):
			// Every output grants its only request and every input
			// accepts its only grant, in the order of the requests.
			for _, q := range reqs {
				vl := uint8(q.out & vmask)
				saPtr[q.ivc>>vs] = uint8(q.ivc&vmask) + 1
				s.forward(q.ivc, arbChoice{vl: vl}, 1<<vl)
			}
			again = true
		default:
			if len(reqs) <= len(smallGrants{}.g) {
				s.islipSmall(reqs)
			} else {
				s.islipGrants1(reqs)
			}
			again = true
		}
		if again && swMark[sw] != next {
			swMark[sw] = next
			s.nextActive = append(s.nextActive, sw)
		}
	}
	s.active, s.nextActive = s.nextActive, s.active[:0]
}

// islipGrants1 is islipGrants for the requests of one switch (islipAll):
// outputs grant round-robin over their VLs, inputs accept the grant of
// the VL closest after their pointer, in the order of saRequests.
func (s *sim) islipGrants1(reqs []saReq) {
	vs := s.vs & 31
	vmask := int32(1)<<vs - 1
	s.tick++
	tick := s.tick
	lkTick, lkMask, ovBest := s.lkTick, s.lkMask, s.ovBest
	lkList := s.lkList[:0]
	for _, q := range reqs {
		lo := q.out >> vs
		if lkTick[lo] != tick {
			lkTick[lo], lkMask[lo] = tick, 0
			lkList = append(lkList, lo)
		}
		lkMask[lo] |= 1 << uint32(q.out&vmask)
		ovBest[q.out] = q.ivc
	}
	s.lkList = lkList
	arbSt, ivTick, ivBest, saPtr := s.arbSt, s.ivTick, s.ivBest, s.saPtr
	grants := s.grants[:0]
	for _, lo := range lkList {
		ready := lkMask[lo]
		rr := arbSt[lo].rr
		vl := uint8((int(rr) + bits.TrailingZeros32(bits.RotateLeft32(ready, -int(rr)))) & 31)
		ivc := ovBest[lo<<vs|int32(vl)]
		li := ivc >> vs
		g := saGrant{ivc: ivc, c: arbChoice{vl: vl}, ready: ready}
		if ivTick[li] != tick {
			ivTick[li], ivBest[li] = tick, int32(len(grants))
			grants = append(grants, g)
			continue
		}
		b := &grants[ivBest[li]]
		ptr := int32(saPtr[li])
		if rrKey(ivc&vmask, ptr, 32) < rrKey(b.ivc&vmask, ptr, 32) {
			*b = g
		}
	}
	s.grants = grants
	for _, g := range grants {
		saPtr[g.ivc>>vs] = uint8(g.ivc&vmask) + 1
		s.forward(g.ivc, g.c, g.ready)
	}
}

// apart reports whether no two requests share an input link or an output
// link (then iSLIP grants them all).
func apart(reqs []saReq, vs uint8) bool {
	for i, a := range reqs {
		for _, b := range reqs[i+1:] {
			if a.out>>vs == b.out>>vs || a.ivc>>vs == b.ivc>>vs {
				return false
			}
		}
	}
	return true
}

// smallGrants holds the outputs and grants of a switch with few requests
// (islipSmall).
type smallGrants struct {
	out   [8]int32  // outputs in the order of their first request
	mask  [8]uint32 // VLs requesting each
	g     [8]saGrant
	in    [8]int32 // input link of each grant
	no, n int
}

// islipSmall is islipGrants1 for a few requests: the same grants in the
// same order, found by scanning the requests instead of stamping
// per-link scratch tables.
func (s *sim) islipSmall(reqs []saReq) {
	vs := s.vs & 31
	vmask := int32(1)<<vs - 1
	var t smallGrants
	for _, q := range reqs {
		lo := q.out >> vs
		k := 0
		for k < t.no && t.out[k] != lo {
			k++
		}
		if k == t.no {
			t.out[k], t.no = lo, t.no+1
		}
		t.mask[k] |= 1 << uint32(q.out&vmask)
	}
	arbSt, saPtr := s.arbSt, s.saPtr
	for k := 0; k < t.no; k++ {
		lo, ready := t.out[k], t.mask[k]
		rr := arbSt[lo].rr
		vl := uint8((int(rr) + bits.TrailingZeros32(bits.RotateLeft32(ready, -int(rr)))) & 31)
		o := lo<<vs | int32(vl)
		var ivc int32
		for _, q := range reqs {
			if q.out == o {
				ivc = q.ivc
				break
			}
		}
		li := ivc >> vs
		g := saGrant{ivc: ivc, c: arbChoice{vl: vl}, ready: ready}
		j := 0
		for j < t.n && t.in[j] != li {
			j++
		}
		if j == t.n {
			t.in[j], t.g[j], t.n = li, g, t.n+1
			continue
		}
		ptr := int32(saPtr[li])
		if rrKey(ivc&vmask, ptr, 32) < rrKey(t.g[j].ivc&vmask, ptr, 32) {
			t.g[j] = g
		}
	}
	for j := 0; j < t.n; j++ {
		g := t.g[j]
		saPtr[g.ivc>>vs] = uint8(g.ivc&vmask) + 1
		s.forward(g.ivc, g.c, g.ready)
	}
}

// saReq is a switch allocation request: input VC ivc's packet in progress
// has a flit for output VC out.
type saReq struct{ ivc, out int32 }

// vaFIFO1 is allocVCs for one iteration with FIFO input VCs and no VC
// pools: every idle input VC proposes its head packet once its route
// stall is over and its output VC is free (under virtual cut-through,
// with room for the whole packet), and each output VC grants the proposal
// closest after its pointer. With one proposal per input VC, iSLIP's
// accept stage takes every grant, so both allocators grant the same;
// they differ in what they report (see allocVCs).
func (s *sim) vaFIFO1(sw int32, ins []int32) bool {
	vs := s.vs & 31
	iv, en, ov, inMask, actMask := s.iv, s.en, s.ov, s.inMask, s.actMask
	reqs := s.reqs[:0]
	for wi, base := int32(0), sw*s.inWords; wi < s.inWords; wi++ {
		for mi := s.swIdleIn[base+wi]; mi != 0; mi &= mi - 1 {
			i := wi<<6 | int32(bits.TrailingZeros64(mi))
			li := ins[i]
			for m := inMask[li] &^ actMask[li]; m != 0; m &= m - 1 {
				vl := int32(bits.TrailingZeros32(m))
				ivc := li<<vs | vl
				e := iv[ivc].head
				if !s.routed(e) {
					continue
				}
				o := en[e].out
				if ov[o].owner < 0 && (!s.vct || ov[o].credits >= s.P) {
					reqs = append(reqs, vaReq{ivc: ivc, e: e, ov: o, inKey: i<<vs | vl})
				}
			}
		}
	}
	s.reqs = reqs
	K := int32(len(ins)) << vs
	switch len(reqs) {
	case 0:
		return false
	case 1:
		s.grantVC(&reqs[0], true, K)
		return false
	}
	s.tick++
	tick := s.tick
	s.ovList = s.ovList[:0]
	for r := range reqs {
		q := &reqs[r]
		if s.ovTick[q.ov] != tick {
			s.ovTick[q.ov], s.ovBest[q.ov] = tick, int32(r)
			s.ovList = append(s.ovList, q.ov)
		} else if b := &reqs[s.ovBest[q.ov]]; rrKey(q.inKey, ov[q.ov].vaPtr, K) < rrKey(b.inKey, ov[q.ov].vaPtr, K) {
			s.ovBest[q.ov] = int32(r)
		}
	}
	for _, o := range s.ovList {
		s.grantVC(&reqs[s.ovBest[o]], true, K)
	}
	// Round-robin asks again for the refused proposals; after iSLIP every
	// proposed output VC is taken.
	return s.cfg.Allocator != ISLIP && len(s.ovList) < len(reqs)
}
