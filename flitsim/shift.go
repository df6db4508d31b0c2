package flitsim

// shiftState drives the all-to-all shift exchange: node i sends its
// phase-s message to (i+s) mod N, s = 1..N-1. A node starts phase s+1 when
// its phase-s message has left it (the tail of its last packet) and, with
// Traffic.ShiftSync, when the phase-s message from (i-s) mod N has
// arrived (a pairwise exchange, MPI_Sendrecv style).
type shiftState struct {
	n        int32
	sync     bool
	phase    []int32 // current phase per node; n when finished
	sentDone []bool
	recv     []uint64 // sync: bit i*n+s = node i received its phase-s message
}

func newShift(n int32, sync bool) *shiftState {
	sh := &shiftState{n: n, sync: sync, phase: make([]int32, n), sentDone: make([]bool, n)}
	if sync {
		sh.recv = make([]uint64, (int64(n)*int64(n)+63)/64)
	}
	return sh
}

// start begins phase 1 on every node.
func (sh *shiftState) start(s *sim) {
	for i := int32(0); i < sh.n; i++ {
		sh.begin(s, i, 1)
	}
}

func (sh *shiftState) begin(s *sim, i, ph int32) {
	sh.phase[i] = ph
	if ph >= sh.n {
		return
	}
	sh.sentDone[i] = false
	s.newMessage(i, (i+ph)%sh.n, 0, ph)
}

// sent records that message mi has fully left its source.
func (sh *shiftState) sent(s *sim, mi int32) {
	i := s.msgs[mi].src
	sh.sentDone[i] = true
	sh.advance(s, i)
}

// received records that message mi has been delivered.
func (sh *shiftState) received(s *sim, mi int32) {
	if !sh.sync {
		return
	}
	m := &s.msgs[mi]
	bit := int64(m.dst)*int64(sh.n) + int64(m.phase)
	sh.recv[bit>>6] |= 1 << (bit & 63)
	sh.advance(s, m.dst)
}

func (sh *shiftState) advance(s *sim, i int32) {
	ph := sh.phase[i]
	if ph >= sh.n || !sh.sentDone[i] {
		return
	}
	if sh.sync {
		bit := int64(i)*int64(sh.n) + int64(ph)
		if sh.recv[bit>>6]&(1<<(bit&63)) == 0 {
			return
		}
	}
	sh.begin(s, i, ph+1)
}
