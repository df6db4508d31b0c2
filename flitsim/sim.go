package flitsim

import "context"

// Run simulates traffic on the network and returns the measurements. A
// deadlock ends the run with a partial Result and a *DeadlockError (which
// wraps ErrDeadlock); cancelling ctx ends it with ctx's error. Run may be
// called concurrently on one Network.
func (n *Network) Run(ctx context.Context, t Traffic, opt RunOptions) (*Result, error) {
	t = t.withDefaults()
	if err := t.validate(n); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, err
	}
	w, err := compile(n, t, opt.Seed)
	if err != nil {
		return nil, err
	}
	s := newSim(ctx, n, w, opt)
	runErr := s.run()
	res := s.result()
	if s.deadlock != nil {
		return res, s.deadlock
	}
	return res, runErr
}

// run is the main loop: one iteration per simulated cycle, skipping idle
// stretches when nothing is scheduled.
func (s *sim) run() error {
	for !s.done {
		if err := s.step(); err != nil {
			return err
		}
	}
	return nil
}

// step simulates one cycle (after skipping idle ones); tests call it to
// check invariants between cycles.
func (s *sim) step() error {
	if s.now&1023 == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if len(s.active) == 0 && len(s.nicActive) == 0 && s.wh.empty(s.now) {
		s.skipIdle()
		if s.done {
			return nil
		}
	}
	s.st.window(s)
	s.st.advance(s.now)
	s.generate()
	s.events()
	s.injectAll()
	s.switchAll()
	if s.opt.DeadlockWindow > 0 && s.now >= s.nextCheck {
		s.nextCheck = s.now + s.opt.DeadlockWindow
		if s.inNet > 0 {
			s.deadlock = s.findDeadlock()
			if s.deadlock != nil {
				s.done = true
				return nil
			}
		}
	}
	s.checkDone()
	s.now++
	return nil
}

// skipIdle advances the clock to the next cycle where something happens:
// a message arrival, a deadlock check, or the end of the run.
func (s *sim) skipIdle() {
	next := s.endCycle()
	if s.heap.len() > 0 {
		t, _ := s.heap.top()
		next = min(next, t)
	}
	if s.opt.DeadlockWindow > 0 && s.inNet > 0 {
		next = min(next, s.nextCheck)
	}
	if next > s.now {
		s.now = next
	}
}

// endCycle returns the last cycle the run may reach.
func (s *sim) endCycle() int64 {
	if s.finite {
		return s.opt.MaxCycles
	}
	return s.measureEnd + s.opt.Drain
}

// checkDone decides whether the run is over after the current cycle.
func (s *sim) checkDone() {
	if s.st.earlyStop {
		s.done = true
		return
	}
	if s.finite {
		s.done = s.doneMsgs == s.totalMsgs || s.now+1 >= s.opt.MaxCycles
		return
	}
	if s.now+1 >= s.measureEnd {
		s.done = s.outstand == 0 || s.now+1 >= s.measureEnd+s.opt.Drain
	}
}

// switchAll runs allocation and traversal on the switches that may move a
// flit this cycle; the others sleep until an event wakes them.
func (s *sim) switchAll() {
	if s.fastSA {
		s.islipAll()
		return
	}
	next := s.now + 1
	for _, sw := range s.active {
		if s.switchCycle(sw) && s.swMark[sw] != next {
			s.swMark[sw] = next
			s.nextActive = append(s.nextActive, sw)
		}
	}
	s.active, s.nextActive = s.nextActive, s.active[:0]
}

// wakeSwitch schedules switch sw for this cycle.
func (s *sim) wakeSwitch(sw int32) {
	if s.swMark[sw] != s.now {
		s.swMark[sw] = s.now
		s.active = append(s.active, sw)
	}
}

// events delivers the flits and credits arriving this cycle. A flit
// entering a switch joins its input VC (arriveHead queues a new packet).
func (s *sim) events() {
	now := s.now
	evs := s.wh.bucket(now)
	ov, srcSw, dstSw, iv, en := s.ov, s.n.lkSrcSw, s.n.lkDstSw, s.iv, s.en
	vs := s.vs & 31
	for i := range evs {
		ev := &evs[i]
		if ev.kind&evCredit != 0 {
			o := &ov[ev.link<<vs|int32(ev.vl)]
			o.credits++
			if sw := srcSw[ev.link]; sw >= 0 {
				if s.vct && o.credits == s.P {
					s.wakeVA(sw) // room for a whole packet again
				}
				s.wakeSwitch(sw)
			} else {
				s.wakeNIC(s.n.lkNode[ev.link])
			}
			continue
		}
		sw := dstSw[ev.link]
		if sw < 0 {
			s.sink(ev)
			continue
		}
		v := &iv[ev.link<<vs|int32(ev.vl)]
		e := v.arriving
		if ev.kind&evHead != 0 {
			e = s.arriveHead(sw, ev, v)
		}
		en[e].arr++
		if v.flits == 0 {
			v.stuck = now
		}
		v.flits++
		s.st.occGrow(ev.vl, v.flits)
		if ev.kind&evTail != 0 {
			v.arriving = -1
		}
		s.wakeSwitch(sw)
	}
	s.wh.clear(now)
}
