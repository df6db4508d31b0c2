package flitsim

import (
	"context"
	"math/rand/v2"
)

// packet is one packet in flight or waiting at its source.
type packet struct {
	src, dst int32
	msg      int32
	seq      int64
	created  int64
	injected int64
	dlid     uint16
	sl       uint8
	class    uint8
	vlOff    uint8
	injVL    uint8
	measured bool
	ps       PacketState // per-hop routing state (Network.WithRouting)
}

// message groups the packets created together from one source.
type message struct {
	src, dst int32
	left     int32 // packets not yet delivered
	unsent   int32 // packets whose tail has not left the source
	phase    int32 // Shift phase, from 1
	created  int64
	class    uint8
	measured bool
}

// outVC is the upstream side of one link's VL.
type outVC struct {
	credits int32 // free flit slots downstream, as far as this end knows
	owner   int32 // input VC whose packet holds the VL, -1 free
	vaPtr   int32 // VC allocation round-robin: input VC key favoured next
}

// inVC is one input VL buffer of a switch.
type inVC struct {
	flits    int32 // flits present
	head     int32 // oldest entry, -1 none
	tail     int32 // newest entry
	active   int32 // entry whose packet holds an output VC, -1 none
	arriving int32 // entry still receiving flits, -1 none
	free     int32 // free entry list
	stuck    int64 // last cycle the buffer sent a flit or became non-empty
}

// entry is one packet in an input VL buffer.
type entry struct {
	pkt        int32
	arr, sent  int32 // flits arrived, flits forwarded
	out        int32 // output VC (link<<vs | VL) of the next hop
	next, prev int32
	ready      int64 // cycle its route stall ends (Config.RouteStall), -1 not begun
}

// sim is the state of one run. Indices: an output VC or input VC is
// link<<vs | vl (the input VC of a link sits at its destination switch);
// an entry is ivc*E + k.
type sim struct {
	n   *Network
	cfg Config
	w   *workload
	opt RunOptions
	arb *arbiter
	ctx context.Context
	vs  uint8
	V   int32
	P   int32
	E   int32
	gap int64
	vct bool
	voq bool
	its int
	// fastSA: switch allocation is one iSLIP iteration under wormhole
	// with round-robin VL arbitration (islip1).
	fastSA bool
	// fastVA: VC allocation is one iteration over FIFO input VCs without
	// VC pools (vaFIFO1).
	fastVA bool
	now    int64
	done   bool

	pk     []packet
	pkFree []int32
	msgs   []message
	msFree []int32

	// Output side: per output VC and per link.
	ov     []outVC
	freeAt []int64 // per link: fixed point (1/1024 cycle) time it may send again
	arbSt  []arbState

	// Input VCs of switch inputs, their packet entries, per input link the
	// VLs holding packets.
	iv       []inVC
	en       []entry
	inMask   []uint32
	actMask  []uint32 // per input link: VLs with a packet holding an output VC
	inWords  int32    // words of a switch's input masks
	swActIn  []uint64 // per switch (inWords words): inputs with actMask != 0
	swIdleIn []uint64 // per switch: inputs with inMask &^ actMask != 0

	// Allocation state and scratch.
	saPtr   []uint8  // per input link: VL favoured by switch allocation
	vaInPtr []uint16 // per input VC: candidate position favoured by VC allocation
	inUsed  []int64  // per input link: cycle it last sent (several iterations)
	inLock  []int8   // per input link: VL of the packet in progress (VCT), -1 none
	outLock []int8   // per output link: VL of the packet in progress (VCT), -1 none
	tick    uint32
	ovTick  []uint32
	ovBest  []int32
	ivTick  []uint32
	ivBest  []int32
	lkTick  []uint32
	lkMask  []uint32
	seen    []uint32 // per link: VOQ scan stamp
	scan    uint32
	reqs    []vaReq
	ovList  []int32
	ivList  []int32
	lkList  []int32
	grants  []saGrant
	saReqs  []saReq

	swMark     []int64
	swVA       []bool  // VC allocation may grant something new at the switch
	vaWait     []int64 // per switch: VC allocation finds only route stalls before this cycle
	stallWait  bool    // the switch has a candidate in its route stall
	stallMin   int64   // the earliest end of those stalls
	active     []int32
	nextActive []int32

	// Sources.
	nicQ       []pktQueue // per node*V+vl
	nicSent    []int32    // per node*V+vl: flits of the head packet sent
	nicVC      []uint8    // per node*V+vl: the pool VC of the head packet (Config.VCsPerVL)
	nicMask    []uint32   // per node: VLs with queued packets
	nicMark    []int64
	nicActive  []int32
	nicNext    []int32
	rngs       []*rand.Rand
	ia         []interArrival
	nextT      []float64
	sentMsgs   []int32
	seq        []int64
	queued     []int32 // per node: packets waiting at the source
	heap       arrivals
	shift      *shiftState
	finite     bool
	totalMsgs  int64
	doneMsgs   int64
	outstand   int64 // measured packets not delivered
	inNet      int64 // flits sent by sources and not yet delivered
	lastMove   int64
	flitHops   int64
	wh         wheel
	st         stats
	deadlock   *DeadlockError
	nextCheck  int64
	measureEnd int64

	// Per-hop routing (nil outPend without a policy).
	router     Router
	hop        Hop
	swRng      []*rand.Rand // per switch
	outPend    []int32      // per link: flits routed to it, not yet sent
	misrouted  int64
	vcOverflow int64
	hopSum     int64
	hopPkts    int64
}

func newSim(ctx context.Context, n *Network, w *workload, opt RunOptions) *sim {
	cfg := n.cfg
	s := &sim{
		n: n, cfg: cfg, w: w, opt: opt, arb: newArbiter(cfg), ctx: ctx,
		vs: n.vshift, V: int32(n.vls), P: int32(cfg.PacketFlits), E: int32(cfg.BufferFlits/cfg.PacketFlits) + 2,
		gap: cfg.gap(), vct: cfg.Switching == VirtualCutThrough, voq: cfg.Queueing == VOQ,
		its: cfg.Iterations,
	}
	s.fastSA = cfg.Allocator == ISLIP && s.its == 1 && !s.vct && !s.arb.table
	s.fastVA = s.its == 1 && !s.voq && n.pool == 1
	L := int(n.nLinks)
	NV := L << s.vs
	s.ov = make([]outVC, NV)
	for i := range s.ov {
		s.ov[i].owner = -1
		s.ov[i].credits = int32(cfg.BufferFlits)
	}
	s.freeAt = make([]int64, L)
	s.arbSt = make([]arbState, L)
	s.iv, s.en, s.inMask, s.actMask = make([]inVC, NV), make([]entry, NV*int(s.E)), make([]uint32, L), make([]uint32, L)
	for ivc := 0; ivc < NV; ivc++ {
		s.iv[ivc].head, s.iv[ivc].tail, s.iv[ivc].active, s.iv[ivc].arriving = -1, -1, -1, -1
		base := int32(ivc) * s.E
		s.iv[ivc].free = base
		for k := int32(0); k < s.E; k++ {
			s.en[base+k].next = base + k + 1
		}
		s.en[base+s.E-1].next = -1
	}
	s.saPtr, s.inUsed = make([]uint8, L), make([]int64, L)
	s.vaInPtr = make([]uint16, NV)
	s.ovTick, s.ovBest, s.ivTick, s.ivBest = make([]uint32, NV), make([]int32, NV), make([]uint32, NV), make([]int32, NV)
	s.lkTick, s.lkMask, s.seen = make([]uint32, L), make([]uint32, L), make([]uint32, L)
	s.inLock, s.outLock = make([]int8, L), make([]int8, L)
	for i := range s.inUsed {
		s.inUsed[i], s.inLock[i], s.outLock[i] = -1, -1, -1
	}
	S := n.g.NumSwitches()
	s.swMark = make([]int64, S)
	s.swVA, s.vaWait = make([]bool, S), make([]int64, S)
	s.inWords = int32(n.maxIn+63) >> 6
	s.swActIn, s.swIdleIn = make([]uint64, S*int(s.inWords)), make([]uint64, S*int(s.inWords))
	for i := range s.swMark {
		s.swMark[i] = -1
	}
	maxDelay := cfg.maxLatency() + cfg.PipelineDelay
	s.wh = newWheel(maxDelay)
	s.initSources()
	s.st.init(s)
	if w.tr.Pattern == Shift {
		s.shift = newShift(int32(n.NumNodes()), w.tr.ShiftSync)
		s.shift.start(s)
	}
	s.nextCheck = opt.DeadlockWindow
	if n.pol != nil {
		s.outPend = make([]int32, L)
		s.swRng = make([]*rand.Rand, S)
		for i := range s.swRng {
			s.swRng[i] = rand.New(rand.NewPCG(opt.Seed^0x5851f42d4c957f2d, 0xda942042e4dd58b5*uint64(i+1)))
		}
		s.router = n.pol.p.NewRouter()
		s.hop.s = s
	}
	return s
}
