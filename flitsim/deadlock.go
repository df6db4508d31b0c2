package flitsim

import (
	"fmt"
	"strings"
)

// Resource is one input buffer (a link's VL at the switch it enters).
type Resource struct {
	Link  int32  `json:"link"` // link id; a fabric channel id for channels
	VL    uint8  `json:"vl"`
	Flits int32  `json:"flits"` // flits in the buffer at detection
	Name  string `json:"name"`  // `VL1 "sw-a"[3] -> "sw-b"[1]`
}

// DeadlockError reports a deadlock: a set of input buffers whose packets
// can never move again. Resources is a cycle of that set in wait-for
// order: the packets at the head of each buffer wait for room in (or the
// release of) the next buffer, the last waiting for the first; every
// consecutive pair is therefore a channel dependency of the routing.
// Resources is empty when the network stalled (no flit moved for a whole
// window) without such a cycle.
type DeadlockError struct {
	Cycle     int64      `json:"cycle"`   // simulation cycle of detection
	Window    int64      `json:"window"`  // cycles without progress that mark a buffer blocked
	Blocked   int        `json:"blocked"` // buffers blocked for the window
	Knot      int        `json:"knot"`    // buffers that can never move again
	Resources []Resource `json:"resources"`
}

// Error lists the first buffers of the cycle.
func (e *DeadlockError) Error() string {
	var b strings.Builder
	if len(e.Resources) == 0 {
		fmt.Fprintf(&b, "flitsim: network stalled at cycle %d: no flit moved for %d cycles, %d buffers blocked", e.Cycle, e.Window, e.Blocked)
		return b.String()
	}
	fmt.Fprintf(&b, "flitsim: deadlock at cycle %d: %d buffers blocked; wait-for cycle of %d: ", e.Cycle, e.Knot, len(e.Resources))
	const show = 10
	for i, r := range e.Resources {
		if i == show {
			fmt.Fprintf(&b, " => … (%d more)", len(e.Resources)-show)
			break
		}
		if i > 0 {
			b.WriteString(" => ")
		}
		b.WriteString(r.Name)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrDeadlock) true.
func (e *DeadlockError) Is(target error) bool { return target == ErrDeadlock }

// Channels returns the cycle's links and VLs, in order.
func (e *DeadlockError) Channels() ([]int32, []uint8) {
	ls, vls := make([]int32, len(e.Resources)), make([]uint8, len(e.Resources))
	for i, r := range e.Resources {
		ls[i], vls[i] = r.Link, r.VL
	}
	return ls, vls
}

// findDeadlock looks for buffers that can never move again. A switch
// input VC is blocked when it holds flits and has sent none for the
// deadlock window. It waits for the input VCs its packets need next (the
// one of its packet in progress, else those of its candidate packets); a
// blocked VC that waits for some VC that is not blocked may still move, so
// such VCs are pruned repeatedly. What remains (a knot in the OR model of
// waiting) can never move, and every VC in it waits only for VCs in it, so
// walking from any of them closes a cycle. Cost O(VCs + entries).
func (s *sim) findDeadlock() *DeadlockError {
	win := s.opt.DeadlockWindow
	vmask := int32(1)<<s.vs - 1
	NV := int32(len(s.iv))
	// Edges x -> d for blocked x; ext[x] counts x's targets outside the set.
	in := make([]bool, NV)
	var xs []int32
	for l := int32(0); l < s.n.nLinks; l++ {
		for vl := int32(0); vl < s.V; vl++ {
			if x := l<<s.vs | vl; s.blockedVC(x) {
				in[x] = true
				xs = append(xs, x)
			}
		}
	}
	if len(xs) == 0 {
		return s.stalled(0)
	}
	ext := make([]int32, NV)
	from, to := s.waitEdges(xs, ext)
	start, knot := pruneToKnot(xs, in, ext, from, to)
	if start < 0 {
		return s.stalled(len(xs))
	}
	// Walk inside the knot until a VC repeats.
	next := make([]int32, NV)
	for i := len(from) - 1; i >= 0; i-- {
		next[from[i]] = to[i] // the first target of each VC wins
	}
	pos := make(map[int32]int, 16)
	var path []int32
	x := start
	for {
		if i, ok := pos[x]; ok {
			path = path[i:]
			break
		}
		pos[x] = len(path)
		path = append(path, x)
		x = next[x]
	}
	e := &DeadlockError{Cycle: s.now, Window: win, Blocked: len(xs), Knot: knot}
	for _, x := range path {
		l, vl := x>>s.vs, uint8(x&vmask)
		e.Resources = append(e.Resources, Resource{Link: l, VL: vl, Flits: s.iv[x].flits, Name: fmt.Sprintf("VL%d %s", vl, s.n.LinkName(l))})
	}
	return e
}

// blockedVC reports whether input VC x is a switch input VC holding
// flits that has sent none for the deadlock window.
func (s *sim) blockedVC(x int32) bool {
	vmask := int32(1)<<s.vs - 1
	n := s.n
	return x>>s.vs < n.nLinks && n.lkDstSw[x>>s.vs] >= 0 && int32(x&vmask) < s.V &&
		s.iv[x].flits > 0 && s.now-s.iv[x].stuck >= s.opt.DeadlockWindow
}

// waitEdges lists the VCs each blocked VC of xs waits for (from[i] waits
// for to[i]) and counts in ext the waits that cannot block: for its own
// flits from upstream, or for a VC that is not blocked.
func (s *sim) waitEdges(xs []int32, ext []int32) (from, to []int32) {
	for _, x := range xs {
		if e := s.iv[x].active; e >= 0 {
			if s.en[e].arr <= s.en[e].sent {
				ext[x]++ // waits for its own flits from upstream
				continue
			}
			from, to = append(from, x), append(to, s.en[e].out)
			continue
		}
		// The candidates of VC allocation: the oldest packet per output
		// port (VOQ) or the oldest packet (FIFO).
		s.scan++
		for e := s.iv[x].head; e >= 0; e = s.en[e].next {
			d := s.en[e].out
			if s.seen[d>>s.vs] != s.scan {
				s.seen[d>>s.vs] = s.scan
				for j := int32(0); j < int32(s.n.pool); j++ { // any VC of the pool will do
					from, to = append(from, x), append(to, d+j)
				}
			}
			if !s.voq {
				break
			}
		}
	}
	for i, d := range to {
		if !s.blockedVC(d) {
			ext[from[i]]++
		}
	}
	return from, to
}

// pruneToKnot removes from the set in every VC that may still move (one
// with a wait outside the set, then its waiters, repeatedly) and returns
// the first VC of xs left (-1 none) and how many are left.
func pruneToKnot(xs []int32, in []bool, ext, from, to []int32) (start int32, knot int) {
	NV := int32(len(in))
	// Reverse adjacency for the pruning.
	predOff := make([]int32, NV+1)
	for _, d := range to {
		predOff[d+1]++
	}
	for v := int32(0); v < NV; v++ {
		predOff[v+1] += predOff[v]
	}
	pred := make([]int32, len(to))
	fill := append([]int32(nil), predOff[:NV]...)
	for i, d := range to {
		pred[fill[d]] = from[i]
		fill[d]++
	}
	queue := make([]int32, 0, len(xs))
	for _, x := range xs {
		if ext[x] > 0 {
			in[x] = false
			queue = append(queue, x)
		}
	}
	for len(queue) > 0 {
		y := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, p := range pred[predOff[y]:predOff[y+1]] {
			if in[p] {
				in[p] = false
				queue = append(queue, p)
			}
		}
	}
	start = -1
	for _, x := range xs {
		if in[x] {
			knot++
			if start < 0 {
				start = x
			}
		}
	}
	return start, knot
}

// stalled reports a stall when no flit has moved for a whole window.
func (s *sim) stalled(blocked int) *DeadlockError {
	if s.inNet == 0 || s.now-s.lastMove < s.opt.DeadlockWindow {
		return nil
	}
	return &DeadlockError{Cycle: s.now, Window: s.opt.DeadlockWindow, Blocked: blocked}
}
