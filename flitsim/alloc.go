package flitsim

import "math/bits"

// Crossbar allocation of one switch per cycle, in two separable stages:
//
//  1. VC allocation. An input VC without a packet in progress proposes
//     its candidate packets: the oldest one (FIFO) or the oldest one per
//     output port (VOQ). A candidate is eligible when its output VC (output
//     link, VL from SL2VL) is free and, for virtual cut-through, the
//     downstream buffer has room for the whole packet. Each output VC
//     grants one proposal, round-robin over the switch's input VCs. With
//     RoundRobin every input VC proposes one candidate (round-robin over
//     its candidates); with ISLIP it proposes all, each input VC accepts
//     one grant, and the stage repeats for Config.Iterations rounds.
//  2. Switch allocation. An input VC with a packet in progress, a flit
//     present, a credit and an output link free to send requests that
//     link. Each input port sends at most one flit per cycle and each
//     output link accepts at most one; the output chooses among the VLs
//     requesting it by the VL arbitration. RoundRobin: each input port
//     proposes one VL (round-robin); ISLIP: inputs request with all VLs,
//     outputs grant, inputs accept (round-robin), iterated.
//
// Round-robin pointers move on every grant with RoundRobin and on grants
// accepted in the first round with ISLIP, as in iSLIP; the VL arbitration
// state moves on every flit sent.

// vaReq is one VC allocation proposal.
type vaReq struct {
	ivc, e, ov int32
	inKey      int32 // the input VC's index at its switch: local input<<vs | vl
	pos        int32 // the candidate's position in its input VC's list
}

// saGrant is one switch allocation grant.
type saGrant struct {
	ivc   int32
	c     arbChoice
	ready uint32
}

// switchCycle allocates and forwards at switch sw; it reports whether the
// switch must run again next cycle (it moved a flit or waits for a link's
// bandwidth). A switch that returns false is woken by the next flit or
// credit arriving at it.
func (s *sim) switchCycle(sw int32) bool {
	n := s.n
	ins := n.swIn[n.swInOff[sw]:n.swInOff[sw+1]]
	stall := s.switchVA(sw, ins)
	return s.allocSwitch(sw, ins) || stall
}

// switchVA runs VC allocation at switch sw if it may grant something; it
// reports whether candidates wait in their route stall (so the switch
// runs again next cycle).
func (s *sim) switchVA(sw int32, ins []int32) bool {
	s.stallWait = false
	if !s.swVA[sw] {
		return false
	}
	if s.now < s.vaWait[sw] {
		return true // VC allocation would only find stalls again
	}
	s.stallMin = 1<<63 - 1
	var refused bool
	if s.fastVA {
		refused = s.vaFIFO1(sw, ins)
	} else {
		refused = s.allocVCs(sw, ins)
	}
	s.swVA[sw] = refused || s.stallWait
	s.vaWait[sw] = 0
	if !refused && s.stallWait && s.n.pool == 1 {
		s.vaWait[sw] = s.stallMin
	}
	return s.stallWait
}

// wakeVA marks that VC allocation at switch sw may grant something new: a
// head flit arrived, an output VC was released, or (virtual cut-through)
// a whole packet's credits are back.
//
// Until then, a switch whose candidates all wait in their route stall
// skips VC allocation up to the earliest stall's end (vaWait): nothing
// else can change its outcome meanwhile. With VC pools a credit can make
// another VC of a pool eligible, so pools always run it.
func (s *sim) wakeVA(sw int32) {
	s.swVA[sw] = true
	s.vaWait[sw] = 0
}

// allocVCs runs VC allocation; it reports whether some eligible proposal
// was refused (so that the stage must run again next cycle). Otherwise
// only a new head flit, a released output VC, the end of a route stall
// (s.stallWait, s.stallMin) or, for virtual cut-through, credits for a
// whole packet can make a new grant possible, and those set the switch's
// flag.
func (s *sim) allocVCs(sw int32, ins []int32) bool {
	K := int32(len(ins)) << s.vs
	islip := s.cfg.Allocator == ISLIP
	for it := 0; it < s.its; it++ {
		s.tick++
		tick := s.tick
		s.reqs = s.reqs[:0]
		for wi, base := int32(0), sw*s.inWords; wi < s.inWords; wi++ {
			for mi := s.swIdleIn[base+wi]; mi != 0; mi &= mi - 1 {
				i := wi<<6 | int32(bits.TrailingZeros64(mi))
				li := ins[i]
				// Input VCs holding packets, none of them in progress.
				for m := s.inMask[li] &^ s.actMask[li]; m != 0; m &= m - 1 {
					vl := int32(bits.TrailingZeros32(m))
					s.vcRequests(li<<s.vs|vl, i<<s.vs|vl, islip)
				}
			}
		}
		if len(s.reqs) == 0 {
			return false
		}
		if len(s.reqs) == 1 && s.its == 1 {
			// Its output VC grants it, its input VC accepts it.
			s.grantVC(&s.reqs[0], true, K)
			return false
		}
		// Each output VC picks the proposal closest after its pointer.
		s.ovList = s.ovList[:0]
		for r := range s.reqs {
			q := &s.reqs[r]
			if s.ovTick[q.ov] != tick {
				s.ovTick[q.ov], s.ovBest[q.ov] = tick, int32(r)
				s.ovList = append(s.ovList, q.ov)
			} else if b := &s.reqs[s.ovBest[q.ov]]; rrKey(q.inKey, s.ov[q.ov].vaPtr, K) < rrKey(b.inKey, s.ov[q.ov].vaPtr, K) {
				s.ovBest[q.ov] = int32(r)
			}
		}
		first := it == 0
		if !islip {
			for _, ov := range s.ovList {
				s.grantVC(&s.reqs[s.ovBest[ov]], true, K)
			}
			return len(s.ovList) < len(s.reqs)
		}
		// Each input VC accepts the grant closest after its pointer.
		s.ivList = s.ivList[:0]
		for _, ov := range s.ovList {
			r := s.ovBest[ov]
			q := &s.reqs[r]
			if s.ivTick[q.ivc] != tick {
				s.ivTick[q.ivc], s.ivBest[q.ivc] = tick, r
				s.ivList = append(s.ivList, q.ivc)
			} else if b := &s.reqs[s.ivBest[q.ivc]]; rrKey(q.pos, int32(s.vaInPtr[q.ivc]), s.E) < rrKey(b.pos, int32(s.vaInPtr[q.ivc]), s.E) {
				s.ivBest[q.ivc] = r
			}
		}
		for _, ivc := range s.ivList {
			s.grantVC(&s.reqs[s.ivBest[ivc]], first, K)
		}
	}
	// After the last round: proposals of input VCs still idle may succeed
	// later.
	for i := range s.reqs {
		if q := &s.reqs[i]; s.iv[q.ivc].active < 0 && s.ov[q.ov].owner < 0 {
			return true
		}
	}
	return false
}

// rrKey is the distance from pointer ptr forward to k, modulo n.
func rrKey(k, ptr, n int32) int32 {
	d := (k - ptr) % n
	if d < 0 {
		d += n
	}
	return d
}

// vcRequests adds the proposals of input VC ivc: all eligible candidates
// (all=true) or the one closest after the VC's pointer.
func (s *sim) vcRequests(ivc, inKey int32, all bool) {
	s.scan++
	stamp := s.scan
	best, bestKey := vaReq{e: -1}, int32(1<<30)
	pos := int32(0)
	for e := s.iv[ivc].head; e >= 0; e, pos = s.en[e].next, pos+1 {
		ov := s.en[e].out
		if s.voq {
			lo := ov >> s.vs
			if s.seen[lo] == stamp {
				continue // an older packet goes to the same output port
			}
			s.seen[lo] = stamp
		}
		if !s.routed(e) {
			if !s.voq {
				break
			}
			continue
		}
		if s.n.pool > 1 {
			ov = s.poolVC(ov, ivc)
		}
		if s.ov[ov].owner < 0 && (!s.vct || s.ov[ov].credits >= s.P) {
			q := vaReq{ivc: ivc, e: e, ov: ov, inKey: inKey, pos: pos}
			if all {
				s.reqs = append(s.reqs, q)
			} else if k := rrKey(pos, int32(s.vaInPtr[ivc]), s.E); k < bestKey {
				best, bestKey = q, k
			}
		}
		if !s.voq {
			break
		}
	}
	if best.e >= 0 {
		s.reqs = append(s.reqs, best)
	}
}

// routed reports whether candidate entry e has spent Config.RouteStall
// cycles in route computation and VC allocation since it first became a
// candidate (BookSim2's routing_delay + vc_alloc_delay: the input VC
// starts nothing new meanwhile); otherwise it marks the switch to run
// again.
func (s *sim) routed(e int32) bool {
	if s.cfg.RouteStall == 0 {
		return true
	}
	en := &s.en[e]
	if en.ready < 0 {
		en.ready = s.now + int64(s.cfg.RouteStall)
	}
	if r := en.ready; s.now < r {
		s.stallWait = true
		s.stallMin = min(s.stallMin, r)
		return false
	}
	return true
}

// poolVC returns the VC input VC ivc proposes in the pool that starts at
// output VC base: the first free one with room (for virtual cut-through,
// credits for the whole packet), searched from a position that differs
// between input VCs so that they spread over the pool; base when none is.
func (s *sim) poolVC(base, ivc int32) int32 {
	k := int32(s.n.pool)
	for j := int32(0); j < k; j++ {
		ov := base + (ivc+j)%k
		if s.ov[ov].owner < 0 && (!s.vct || s.ov[ov].credits >= s.P) && s.ov[ov].credits > 0 {
			return ov
		}
	}
	return base
}

func (s *sim) grantVC(q *vaReq, movePtr bool, K int32) {
	s.en[q.e].out = q.ov // the VC of the pool it won
	s.ov[q.ov].owner = q.ivc
	s.iv[q.ivc].active = q.e
	s.actMask[q.ivc>>s.vs] |= 1 << uint32(q.ivc&(1<<s.vs-1))
	s.syncIn(q.ivc >> s.vs)
	if movePtr {
		s.ov[q.ov].vaPtr = (q.inKey + 1) % K
		s.vaInPtr[q.ivc] = uint16(q.pos + 1)
	}
}

// allocSwitch runs switch allocation and forwards the granted flits.
func (s *sim) allocSwitch(sw int32, ins []int32) bool {
	moved, wait := false, false
	for it := 0; it < s.its; it++ {
		s.tick++
		wait = s.saRequests(sw, ins) || wait
		if len(s.lkList) == 0 {
			break
		}
		if s.cfg.Allocator != ISLIP {
			vmask := int32(1)<<s.vs - 1
			for _, lo := range s.lkList {
				c, ok := s.pickOut(lo)
				if !ok {
					continue
				}
				ivc := s.ovBest[lo<<s.vs|int32(c.vl)]
				s.saPtr[ivc>>s.vs] = uint8(ivc&vmask) + 1
				s.inUsed[ivc>>s.vs] = s.now
				s.forward(ivc, c, s.lkMask[lo])
				moved = true
			}
			break
		}
		moved = s.islipGrants(it) || moved
	}
	return moved || wait
}

// saRequests collects, per output link, the input VLs of ins ready to
// send a flit on it (s.lkList, s.lkMask, s.ovBest for this tick); round
// robin leaves one VL per input. It reports whether a VL waits only for
// its output link's bandwidth.
func (s *sim) saRequests(sw int32, ins []int32) (wait bool) {
	tick := s.tick
	nowFP := s.now << 10
	vmask := int32(1)<<s.vs - 1
	s.lkList = s.lkList[:0]
	for wi, base := int32(0), sw*s.inWords; wi < s.inWords; wi++ {
		for mask := s.swActIn[base+wi]; mask != 0; mask &= mask - 1 {
			li := ins[wi<<6|int32(bits.TrailingZeros64(mask))]
			if s.inUsed[li] == s.now {
				continue
			}
			ready := uint32(0)
			for m := s.actMask[li]; m != 0; m &= m - 1 {
				vl := int32(bits.TrailingZeros32(m))
				en := &s.en[s.iv[li<<s.vs|vl].active]
				if en.arr <= en.sent {
					continue
				}
				ov := en.out
				if s.ov[ov].credits <= 0 {
					continue
				}
				if s.freeAt[ov>>s.vs] > nowFP {
					wait = true
					continue
				}
				ready |= 1 << vl
			}
			if s.vct && s.inLock[li] >= 0 {
				ready &= 1 << s.inLock[li] // the packet in progress keeps the input
			}
			if ready == 0 {
				continue
			}
			if s.cfg.Allocator != ISLIP {
				rot := bits.RotateLeft32(ready, -int(s.saPtr[li]))
				ready = 1 << ((int(s.saPtr[li]) + bits.TrailingZeros32(rot)) & 31)
			}
			for r := ready; r != 0; r &= r - 1 {
				ivc := li<<s.vs | int32(bits.TrailingZeros32(r))
				ov := s.en[s.iv[ivc].active].out
				lo := ov >> s.vs
				if s.lkTick[lo] != tick {
					s.lkTick[lo], s.lkMask[lo] = tick, 0
					s.lkList = append(s.lkList, lo)
				}
				s.lkMask[lo] |= 1 << uint32(ov&vmask)
				s.ovBest[ov] = ivc
			}
		}
	}
	return wait
}

// islipGrants is one iSLIP round: every output grants one VL; every input
// accepts the grant of the VL closest after its pointer (pointers move in
// the first round only). It reports whether a flit moved.
func (s *sim) islipGrants(it int) bool {
	tick := s.tick
	vmask := int32(1)<<s.vs - 1
	s.grants = s.grants[:0]
	for _, lo := range s.lkList {
		c, ok := s.pickOut(lo)
		if !ok {
			continue
		}
		ivc := s.ovBest[lo<<s.vs|int32(c.vl)]
		li := ivc >> s.vs
		g := saGrant{ivc: ivc, c: c, ready: s.lkMask[lo]}
		if s.ivTick[li] != tick {
			s.ivTick[li], s.ivBest[li] = tick, int32(len(s.grants))
			s.grants = append(s.grants, g)
			continue
		}
		b := &s.grants[s.ivBest[li]]
		ptr := int32(s.saPtr[li])
		if rrKey(ivc&vmask, ptr, 32) < rrKey(b.ivc&vmask, ptr, 32) {
			*b = g
		}
	}
	for _, g := range s.grants {
		if it == 0 {
			s.saPtr[g.ivc>>s.vs] = uint8(g.ivc&vmask) + 1
		}
		s.inUsed[g.ivc>>s.vs] = s.now
		s.forward(g.ivc, g.c, g.ready)
	}
	return len(s.grants) > 0
}

// pickOut runs the VL arbitration of output link lo among the VLs
// requesting it. Under virtual cut-through a link sends whole packets, as
// InfiniBand links do: the VL of a started packet keeps the link until its
// tail, so packets are not interleaved flit by flit (that would slow each
// packet down and hold output VLs idle). Wormhole interleaves flits of
// different VLs, as virtual channels do.
func (s *sim) pickOut(lo int32) (arbChoice, bool) {
	m := s.lkMask[lo]
	if s.vct && s.outLock[lo] >= 0 {
		m &= 1 << s.outLock[lo] // none ready: no choice
	}
	if s.arb.table {
		return s.arb.tablePick(&s.arbSt[lo], m)
	}
	return rrPick(s.arbSt[lo].rr, m)
}

// forward sends one flit of input VC ivc's packet in progress through the
// crossbar onto its output link; c is the VL arbitration's choice at that
// link and ready the VLs it chose from.
func (s *sim) forward(ivc int32, c arbChoice, ready uint32) {
	now, n, w := s.now, s.n, &s.wh
	vs := s.vs & 31
	v := &s.iv[ivc]
	e := v.active
	en := &s.en[e]
	ov := en.out
	lo := ov >> vs
	li := ivc >> vs
	vl := uint8(ivc & (1<<vs - 1))
	en.sent++
	sent := en.sent
	var kind uint8
	if sent == 1 {
		kind = evHead
	}
	tail := sent == s.P
	if tail {
		kind |= evTail
	}
	v.flits--
	v.stuck = now
	s.st.occ[vl]--
	w.push(now+int64(n.lkLat[li]), event{link: li, vl: vl, kind: evCredit})
	o := &s.ov[ov]
	o.credits--
	if s.outPend != nil {
		s.outPend[lo]--
	}
	s.freeAt[lo] = max(s.freeAt[lo], now<<10) + s.gap
	w.push(now+int64(n.lkDelay[lo]), event{link: lo, pkt: en.pkt, vl: c.vl, kind: kind})
	s.arb.commit(&s.arbSt[lo], c, tail, ready)
	s.flitHops++
	s.lastMove = now
	if s.st.measuring {
		s.st.linkFlits[lo]++
	}
	if s.vct {
		s.inLock[li], s.outLock[lo] = int8(vl), int8(c.vl)
	}
	if tail {
		s.inLock[li], s.outLock[lo] = -1, -1
		o.owner = -1
		v.active = -1
		s.actMask[li] &^= 1 << uint32(vl)
		s.release(ivc, e)
		s.syncIn(li)
		if sw := n.lkDstSw[li]; s.hasCandidates(sw) {
			s.wakeVA(sw) // the released output VC may serve one
		}
	}
}

// hasCandidates reports whether switch sw has an input VC whose packets
// wait for VC allocation; without one, allocation would grant nothing.
func (s *sim) hasCandidates(sw int32) bool {
	for _, w := range s.swIdleIn[sw*s.inWords : (sw+1)*s.inWords] {
		if w != 0 {
			return true
		}
	}
	return false
}
