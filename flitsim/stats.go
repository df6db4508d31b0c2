package flitsim

import "slices"

// stats collects the measurements of one run. Counters are integers so
// that results do not depend on summation order.
type stats struct {
	measuring        bool
	started, stopped bool
	start, end       int64

	offered, accepted   int64 // flits generated / delivered in the window
	classes             []classStats
	lat, netLat, msgLat []int32
	linkFlits           []int64
	srcAccepted         []int64 // per source node: its flits delivered in the window

	// Per VL: flits in switch input buffers now, their time integral up
	// to occLast, the integral at the window's start and end, the fullest
	// buffer in the window.
	occ, occInt, occLast, occStart, occEnd []int64
	occMax                                 []int32

	// Flits created and delivered since cycle 0 (every packet), and the
	// backlog (created, not delivered) when the window opened and closed:
	// accepted = offered + backlogStart − backlogEnd.
	created, delivered       int64
	backlogStart, backlogEnd int64
	refused                  int64 // messages a full source queue refused
	refusedFlits             int64 // their flits, in the window
	earlyStop                bool  // the run stopped at the first refusal (RunOptions.StopUnstable)

	lastDelivery int64
}

type classStats struct {
	offered, accepted   int64
	lat, netLat, msgLat []int32
}

func (st *stats) init(s *sim) {
	st.classes = make([]classStats, len(s.w.classes))
	st.linkFlits = make([]int64, s.n.nLinks)
	st.srcAccepted = make([]int64, s.n.NumNodes())
	V := s.V
	st.occ, st.occInt, st.occLast, st.occStart, st.occEnd = make([]int64, V), make([]int64, V), make([]int64, V), make([]int64, V), make([]int64, V)
	st.occMax = make([]int32, V)
	if s.finite {
		st.started, st.measuring = true, true
	}
}

// window opens and closes the measurement window at the start of a cycle.
// The clock may have jumped over idle cycles; the window's bounds are the
// configured ones all the same.
func (st *stats) window(s *sim) {
	if s.finite {
		return
	}
	if !st.started && s.now >= s.opt.Warmup {
		st.started, st.measuring, st.start = true, true, s.opt.Warmup
		st.backlogStart = st.created - st.delivered
		for vl := range st.occStart {
			st.occStart[vl] = st.occAt(vl, st.start)
		}
		st.fullest(s)
	}
	if st.measuring && s.now >= s.measureEnd {
		st.stop(s.measureEnd)
	}
}

// fullest starts the window's maximum occupancy per VL with the buffers'
// fill as the window opens (a buffer that stays full counts).
func (st *stats) fullest(s *sim) {
	vmask := int32(1)<<s.vs - 1
	for x := range s.iv {
		if vl := int32(x) & vmask; vl < s.V && s.iv[x].flits > st.occMax[vl] {
			st.occMax[vl] = s.iv[x].flits
		}
	}
}

// stop closes the window at cycle end.
func (st *stats) stop(end int64) {
	st.measuring, st.stopped, st.end = false, true, end
	st.backlogEnd = st.created - st.delivered
	for vl := range st.occInt {
		st.occAdd(end, uint8(vl), 0, 0)
		st.occEnd[vl] = st.occInt[vl]
	}
}

// occAt returns the occupancy integral of vl up to cycle t >= the last
// change.
func (st *stats) occAt(vl int, t int64) int64 {
	return st.occInt[vl] + st.occ[vl]*(t-st.occLast[vl])
}

// advance integrates the occupancy up to cycle now, before the cycle's
// changes: the flits moving within a cycle then only change st.occ
// (occGrow), as they all happen at the same time.
func (st *stats) advance(now int64) {
	for vl, o := range st.occ {
		st.occInt[vl] += o * (now - st.occLast[vl])
		st.occLast[vl] = now
	}
}

// occGrow records a flit entering a buffer of vl that now holds flits.
func (st *stats) occGrow(vl uint8, flits int32) {
	st.occ[vl]++
	if flits > st.occMax[vl] && st.measuring {
		st.occMax[vl] = flits
	}
}

// occAdd changes the flits buffered on vl by delta at cycle now; flits is
// the new fill of the buffer that grew (for the maximum).
func (st *stats) occAdd(now int64, vl uint8, delta int64, flits int32) {
	st.occInt[vl] += st.occ[vl] * (now - st.occLast[vl])
	st.occLast[vl] = now
	st.occ[vl] += delta
	if flits > st.occMax[vl] && st.measuring {
		st.occMax[vl] = flits
	}
}

func (st *stats) packet(class uint8, lat, net int64) {
	c := &st.classes[class]
	l, n := clamp32(lat), clamp32(net)
	st.lat = append(st.lat, l)
	st.netLat = append(st.netLat, n)
	c.lat = append(c.lat, l)
	c.netLat = append(c.netLat, n)
}

func (st *stats) message(class uint8, lat int64) {
	l := clamp32(lat)
	st.msgLat = append(st.msgLat, l)
	st.classes[class].msgLat = append(st.classes[class].msgLat, l)
}

func clamp32(x int64) int32 {
	if x > 1<<31-1 {
		return 1<<31 - 1
	}
	return int32(x)
}

// LatencyStats summarises latencies in cycles.
type LatencyStats struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P99   int64   `json:"p99"`
	Max   int64   `json:"max"`
}

// summarize computes the statistics of xs (it may reorder xs);
// percentiles are nearest-rank. Latencies span a small range, so a
// counting pass usually replaces the sort.
func summarize(xs []int32) LatencyStats {
	if len(xs) == 0 {
		return LatencyStats{}
	}
	lo, hi := xs[0], xs[0]
	var sum int64
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
		sum += int64(x)
	}
	rank := func(p float64) int {
		k := int(p*float64(len(xs))+0.999999999) - 1
		return min(max(k, 0), len(xs)-1)
	}
	r50, r99 := rank(0.5), rank(0.99)
	st := LatencyStats{Count: int64(len(xs)), Mean: float64(sum) / float64(len(xs)), Max: int64(hi)}
	if span := int64(hi) - int64(lo); span > 4*int64(len(xs))+1024 {
		slices.Sort(xs)
		st.P50, st.P99 = int64(xs[r50]), int64(xs[r99])
		return st
	}
	counts := make([]int32, int(hi-lo)+1)
	for _, x := range xs {
		counts[x-lo]++
	}
	seen := 0
	for v, c := range counts {
		next := seen + int(c)
		if seen <= r50 && r50 < next {
			st.P50 = int64(lo) + int64(v)
		}
		if seen <= r99 && r99 < next {
			st.P99 = int64(lo) + int64(v)
			break
		}
		seen = next
	}
	return st
}
