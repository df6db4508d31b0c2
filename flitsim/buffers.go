package flitsim

// Input VC buffers. Every input VC (switch input link × VL) keeps its
// packets as a doubly linked list of entries in arrival order; an entry
// counts the flits of its packet that have arrived and that have left.
// Flits arrive in packet order (one packet at a time per VL on a link), and
// at most one packet per VC is being forwarded, so every packet in a
// buffer is complete except the one being forwarded and the one arriving:
// BufferFlits/PacketFlits + 2 entries per VC suffice and are preallocated.

// arriveHead queues the packet whose head flit arrives in input VC v at
// switch sw and returns its entry (events counts the flit). The head is routed here: LFT lookup and
// SL2VL (or the routing policy) give its output VC.
func (s *sim) arriveHead(sw int32, ev *event, v *inVC) int32 {
	l := ev.link
	e := v.free
	en := &s.en[e]
	v.free = en.next
	en.pkt, en.arr, en.sent, en.ready = ev.pkt, 0, 0, -1
	if s.n.pol != nil {
		en.out = s.routePolicy(sw, l, ev.pkt)
		s.outPend[en.out>>s.vs] += s.P
	} else {
		en.out = s.route(sw, l, ev.pkt)
	}
	tail := v.tail
	en.next, en.prev = -1, tail
	if tail >= 0 {
		s.en[tail].next = e
	} else {
		v.head = e
	}
	v.tail = e
	if tail < 0 { // the buffer was empty
		s.inMask[l] |= 1 << ev.vl
		s.syncIn(l)
	}
	v.arriving = e
	if tail < 0 && s.startStall(sw, en) {
		// The route stall begins; VC allocation has nothing new before its end.
	} else if tail < 0 || s.voq || s.n.pool > 1 {
		s.wakeVA(sw) // a new candidate for VC allocation
	}
	return e
}

// startStall begins the route stall of entry en, which has just become
// the only packet of its FIFO input VC at switch sw and so a candidate for
// VC allocation; it reports whether it did. Running VC allocation this
// cycle would only start the stall: any other candidate either waits in
// its own stall (vaWait holds the earliest end) or for an output VC whose
// release wakes allocation. So the switch skips allocation until the
// stall ends, unless it runs anyway (vaWait 0). With VOQ, VC pools or no
// stall it reports false and allocation runs.
func (s *sim) startStall(sw int32, en *entry) bool {
	if s.cfg.RouteStall == 0 || s.voq || s.n.pool > 1 {
		return false
	}
	en.ready = s.now + int64(s.cfg.RouteStall)
	if !s.swVA[sw] {
		s.swVA[sw], s.vaWait[sw] = true, en.ready
	} else {
		s.vaWait[sw] = min(s.vaWait[sw], en.ready)
	}
	return true
}

// route returns the output VC a packet entering switch sw on link l takes.
func (s *sim) route(sw, l, p int32) int32 {
	pk := &s.pk[p]
	lo, port := s.n.outLink(sw, pk.dlid)
	vl := s.n.hopVL(sw, s.n.lkDstPort[l], port, pk.sl, pk.vlOff)
	return lo<<s.vs | int32(vl)
}

// release unlinks entry e from input VC ivc once its tail has left.
func (s *sim) release(ivc, e int32) {
	prev, next := s.en[e].prev, s.en[e].next
	if prev >= 0 {
		s.en[prev].next = next
	} else {
		s.iv[ivc].head = next
	}
	if next >= 0 {
		s.en[next].prev = prev
	} else {
		s.iv[ivc].tail = prev
	}
	s.en[e].next = s.iv[ivc].free
	s.iv[ivc].free = e
	if s.iv[ivc].head < 0 { // the buffer is empty
		s.inMask[ivc>>s.vs] &^= 1 << uint32(ivc&(1<<s.vs-1))
	}
}

// sink consumes a flit arriving at a node: the credit goes back at once
// (nodes drain their receive buffers immediately).
func (s *sim) sink(ev *event) {
	s.wh.push(s.now+int64(s.n.lkLat[ev.link]), event{link: ev.link, vl: ev.vl, kind: evCredit})
	s.inNet--
	s.st.delivered++
	s.lastMove = s.now
	if s.st.measuring {
		pk := &s.pk[ev.pkt]
		s.st.accepted++
		s.st.classes[pk.class].accepted++
		s.st.srcAccepted[pk.src]++
	}
	if ev.kind&evTail != 0 {
		s.deliver(ev.pkt)
	}
}

// syncIn updates input link li's bits in its switch's input masks:
// swActIn (a packet in progress) and swIdleIn (a packet waiting for VC
// allocation), which let allocation visit only the inputs with work.
func (s *sim) syncIn(li int32) {
	loc := s.n.inLocal[li]
	w, bit := s.n.lkDstSw[li]*s.inWords+loc>>6, uint64(1)<<(loc&63)
	if s.actMask[li] != 0 {
		s.swActIn[w] |= bit
	} else {
		s.swActIn[w] &^= bit
	}
	if s.inMask[li]&^s.actMask[li] != 0 {
		s.swIdleIn[w] |= bit
	} else {
		s.swIdleIn[w] &^= bit
	}
}
