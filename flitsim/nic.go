package flitsim

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Sources (CA ports): message generation, per-VL source queues, injection
// onto the node's link, and delivery at the destination.

// pktQueue is a growable ring of packet ids (a source queue of one VL).
type pktQueue struct {
	buf     []int32
	head, n int32
}

func (q *pktQueue) push(p int32) {
	if int(q.n) == len(q.buf) {
		nb := make([]int32, max(8, 2*len(q.buf)))
		for i := int32(0); i < q.n; i++ {
			nb[i] = q.buf[(q.head+i)%int32(len(q.buf))]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%int32(len(q.buf))] = p
	q.n++
}

func (q *pktQueue) front() int32 { return q.buf[q.head] }

func (q *pktQueue) pop() {
	q.head = (q.head + 1) % int32(len(q.buf))
	q.n--
}

// initSources sets up the per-node queues, random streams and the first
// arrivals (or the first Shift phase).
func (s *sim) initSources() {
	N := int32(s.n.NumNodes())
	t := &s.w.tr
	s.nicQ = make([]pktQueue, N*s.V)
	s.nicSent = make([]int32, N*s.V)
	s.nicVC = make([]uint8, N*s.V)
	s.nicMask = make([]uint32, N)
	s.nicMark = make([]int64, N)
	for i := range s.nicMark {
		s.nicMark[i] = -1
	}
	s.seq = make([]int64, N)
	s.queued = make([]int32, N)
	s.sentMsgs = make([]int32, N)
	s.rngs = make([]*rand.Rand, N)
	for i := range s.rngs {
		s.rngs[i] = rand.New(rand.NewPCG(s.opt.Seed, 0x9e3779b97f4a7c15*uint64(i+1)))
	}
	s.finite = t.Pattern == Shift || t.Messages > 0
	s.measureEnd = s.opt.Warmup + s.opt.Measure
	if t.Pattern == Shift {
		s.totalMsgs = int64(N) * int64(N-1)
		return // the first phase starts once the statistics exist
	}
	s.ia = make([]interArrival, N)
	s.nextT = make([]float64, N)
	for i := int32(0); i < N; i++ {
		if !s.w.active[i] {
			continue
		}
		rate := t.Load * s.cfg.LinkBandwidth / (float64(s.P) * s.w.meanPackets(i))
		s.ia[i] = newInterArrival(t.Arrival, rate, t.WeibullShape)
		s.nextT[i] = s.ia[i].first(s.rngs[i])
		s.heap.push(int64(math.Ceil(s.nextT[i])), i)
		s.totalMsgs += int64(t.Messages)
	}
}

// generate creates the messages arriving this cycle.
func (s *sim) generate() {
	limit := int32(s.w.tr.Messages)
	for s.heap.len() > 0 {
		t, src := s.heap.top()
		if t > s.now {
			return
		}
		dst, class := s.w.dest(src, s.rngs[src])
		if np := int32(s.w.classes[class].MessagePackets); s.opt.SourceQueue > 0 && !s.finite && s.queued[src]+np > int32(s.opt.SourceQueue) {
			s.refuse(class, np)
		} else {
			s.newMessage(src, dst, class, 0)
		}
		s.sentMsgs[src]++
		if limit > 0 && s.sentMsgs[src] >= limit {
			s.heap.pop()
			continue
		}
		s.nextT[src] += s.ia[src].gap(s.rngs[src])
		s.heap.replaceTop(max(int64(math.Ceil(s.nextT[src])), s.now))
	}
}

// refuse counts a message of np packets a full source queue refuses (in
// the window, its flits count as offered) and, with
// RunOptions.StopUnstable after the warm-up, ends the run.
func (s *sim) refuse(class uint8, np int32) {
	st := &s.st
	st.refused++
	if st.measuring {
		f := int64(np) * int64(s.P)
		st.refusedFlits += f
		st.offered += f
		st.classes[class].offered += f
	}
	if s.opt.StopUnstable && st.started && !st.earlyStop {
		st.earlyStop = true
		if st.measuring {
			st.stop(s.now)
		}
		s.done = true
	}
}

// newMessage queues a message's packets at source src.
func (s *sim) newMessage(src, dst int32, class uint8, phase int32) {
	n, r := s.n, s.n.r
	c := &s.w.classes[class]
	np := int32(c.MessagePackets)
	var mi int32
	if k := len(s.msFree); k > 0 {
		mi, s.msFree = s.msFree[k-1], s.msFree[:k-1]
	} else {
		mi = int32(len(s.msgs))
		s.msgs = append(s.msgs, message{})
	}
	measured := s.st.measuring
	s.msgs[mi] = message{src: src, dst: dst, left: np, unsent: np, phase: phase, created: s.now, class: class, measured: measured}
	sl := r.SL.Of(n.nodeSw[src], int(n.nodeLID[src]), int(n.nodeLID[dst]))
	off := uint8(c.VLOffset)
	injVL := (r.SL2VL.InjectVL(sl) + off) * uint8(n.pool)
	if n.pol != nil && n.pol.vc != nil {
		injVL = off * uint8(n.pool) // the VC policy assigns the switch hops
	}
	q := &s.nicQ[src*s.V+int32(injVL)]
	for k := int32(0); k < np; k++ {
		var p int32
		if m := len(s.pkFree); m > 0 {
			p, s.pkFree = s.pkFree[m-1], s.pkFree[:m-1]
		} else {
			p = int32(len(s.pk))
			s.pk = append(s.pk, packet{})
		}
		s.pk[p] = packet{src: src, dst: dst, msg: mi, seq: s.seq[src], created: s.now, injected: -1,
			dlid: n.nodeLID[dst], sl: sl, class: class, vlOff: off, injVL: injVL, measured: measured}
		s.seq[src]++
		q.push(p)
	}
	s.queued[src] += np
	s.st.created += int64(np) * int64(s.P)
	s.nicMask[src] |= 1 << injVL
	s.wakeNIC(src)
	if measured {
		s.outstand += int64(np)
		f := int64(np) * int64(s.P)
		s.st.offered += f
		s.st.classes[class].offered += f
	}
}

// wakeNIC schedules node i's injection for this cycle.
func (s *sim) wakeNIC(i int32) {
	if s.nicMark[i] != s.now {
		s.nicMark[i] = s.now
		s.nicActive = append(s.nicActive, i)
	}
}

// nicPoolVC returns the VC of queue qi's pool (Config.VCsPerVL) its head
// packet goes on over injection link l: the one it started on, or for a
// new packet the pool's VC with the most credits (recorded in nicVC).
func (s *sim) nicPoolVC(l, qi int32) int32 {
	if s.nicSent[qi] > 0 {
		return int32(s.nicVC[qi])
	}
	base := qi % s.V
	best := base
	for j := int32(1); j < int32(s.n.pool); j++ {
		if s.ov[l<<s.vs|(base+j)].credits > s.ov[l<<s.vs|best].credits {
			best = base + j
		}
	}
	s.nicVC[qi] = uint8(best)
	return best
}

// injectAll lets every active source send at most one flit.
func (s *sim) injectAll() {
	next := s.now + 1
	for _, i := range s.nicActive {
		if s.inject(i) && s.nicMark[i] != next {
			s.nicMark[i] = next
			s.nicNext = append(s.nicNext, i)
		}
	}
	s.nicActive, s.nicNext = s.nicNext, s.nicActive[:0]
}

// inject sends one flit from node i if a VL has one ready (a credit, and
// for a new packet under virtual cut-through room for all of it); it
// reports whether the node must run again next cycle.
func (s *sim) inject(i int32) bool {
	l := s.n.nChan + i
	if s.freeAt[l] > s.now<<10 {
		return true
	}
	ready := s.nicReady(i, l)
	if ready == 0 {
		return false // a credit wakes the node
	}
	pick := ready
	if s.vct && s.outLock[l] >= 0 {
		pick &= 1 << s.outLock[l] // whole packets, as at switch outputs
		if pick == 0 {
			return false
		}
	}
	c, ok := s.arb.pick(&s.arbSt[l], pick)
	if !ok {
		return false
	}
	qi := i*s.V + int32(c.vl)
	q := &s.nicQ[qi]
	p := q.front()
	sent := s.nicSent[qi] + 1
	var kind uint8
	if sent == 1 {
		kind = evHead
		s.pk[p].injected = s.now
	}
	tail := sent == s.P
	if tail {
		kind |= evTail
	}
	vc := c.vl // the queue's VL, or the VC of its pool the packet goes on
	if s.n.pool > 1 {
		vc = s.nicVC[qi]
	}
	s.ov[l<<s.vs|int32(vc)].credits--
	s.freeAt[l] = max(s.freeAt[l], s.now<<10) + s.gap
	s.wh.push(s.now+int64(s.n.lkDelay[l]), event{link: l, pkt: p, vl: vc, kind: kind})
	s.arb.commit(&s.arbSt[l], c, tail, ready)
	if s.vct {
		s.outLock[l] = int8(c.vl)
		if tail {
			s.outLock[l] = -1
		}
	}
	s.flitHops++
	s.inNet++
	s.lastMove = s.now
	if s.st.measuring {
		s.st.linkFlits[l]++
	}
	if !tail {
		s.nicSent[qi] = sent
		return true
	}
	s.nicSent[qi] = 0
	q.pop()
	s.queued[i]--
	if q.n == 0 {
		s.nicMask[i] &^= 1 << c.vl
	}
	m := &s.msgs[s.pk[p].msg]
	if m.unsent--; m.unsent == 0 && s.shift != nil {
		s.shift.sent(s, s.pk[p].msg)
	}
	return s.nicMask[i] != 0
}

// nicReady returns the VLs of node i (injection link l) whose next flit
// may go: a credit, and for a new packet under virtual cut-through room
// for all of it.
func (s *sim) nicReady(i, l int32) uint32 {
	ready := uint32(0)
	for m := s.nicMask[i]; m != 0; m &= m - 1 {
		vl := int32(bits.TrailingZeros32(m))
		vc := vl
		if s.n.pool > 1 {
			vc = s.nicPoolVC(l, i*s.V+vl)
		}
		cr := s.ov[l<<s.vs|vc].credits
		if cr <= 0 || (s.vct && s.nicSent[i*s.V+vl] == 0 && cr < s.P) {
			continue
		}
		ready |= 1 << vl
	}
	return ready
}

// deliver records packet p, whose tail has just arrived.
func (s *sim) deliver(p int32) {
	pk := &s.pk[p]
	if pk.measured {
		s.st.packet(pk.class, s.now-pk.created, s.now-pk.injected)
		s.outstand--
		s.hopSum += int64(pk.ps.Hops)
		s.hopPkts++
	}
	if s.opt.OnDeliver != nil {
		s.opt.OnDeliver(Delivery{Src: pk.src, Dst: pk.dst, Class: pk.class, Seq: pk.seq,
			Created: pk.created, Injected: pk.injected, Delivered: s.now, Measured: pk.measured})
	}
	mi := pk.msg
	m := &s.msgs[mi]
	if m.left--; m.left == 0 {
		if m.measured {
			s.st.message(m.class, s.now-m.created)
		}
		s.doneMsgs++
		s.st.lastDelivery = s.now
		if s.shift != nil {
			s.shift.received(s, mi)
		}
		s.msFree = append(s.msFree, mi)
	}
	s.pkFree = append(s.pkFree, p)
}
