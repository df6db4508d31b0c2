package sar

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// Spreading one destination's inflow. A destination's tree is one
// shortest-path search under fixed weights, so all its sources follow the
// same lightest last hops: a job's s−1 paths towards one terminal meet on
// one channel into its switch, where the bound (Bound) spreads them over
// the switch's channels. spread is a local search over finished tables
// that sees the load a destination's own tree adds: for a job terminal's
// LID d and a switch u, u's entry for d moves to another channel whose
// far end is one hop nearer to d along the tables (so every path keeps
// its length and no loop can form) when that lowers the heaviest channel
// the move touches: the largest load among the channels it adds the
// moved paths to, after the move, is below the largest among those it
// takes them from, before, and that one is loaded above the bound
// (relieving the others cannot lower the effective EFI, seed 001 §3,
// below Bound). Each move lowers the sorted vector of channel loads
// lexicographically, so the effective EFI never rises and the search
// ends, at the latest when the effective EFI meets the bound; a move that would raise some job's effective EFI above the
// largest per-job EFI of the tables is refused. The dependencies the
// move gives d's VL (the turns of u's children onto the new channel, of
// the new channel onward, and of the switches on the new route that carry
// terminals' packets for the first time) go into a dependency graph of
// all destinations, and those it takes away leave it; the graph is kept
// acyclic by Pearce and Kelly's dynamic topological order
// (cdg.TurnGraph), and a move that would close a cycle is refused.
//
// Only a channel above the bound can be relieved, so the search skips
// what cannot cross one without changing a move: a target none of whose
// entries sends onto such a channel (crosses), a switch whose route
// crosses none (try), and the destinations outside jobs while no channel
// is above it (newSpreader).

// spreadSweeps bounds the sweeps over the job destinations; a sweep
// without a move ends the search sooner.
const spreadSweeps = 8

// spreadTarget is one LID of a job terminal.
type spreadTarget struct {
	lid int
	job int32
	vl  uint8
}

// spreader holds the search's state; not safe for concurrent use.
type spreader struct {
	g       *fabric.Graph
	r       *lft.Routing
	dg      *cdg.TurnGraph
	targets []spreadTarget
	src     [][]int64 // per job: its terminals per switch
	total   []int64   // per channel: all jobs' paths
	over    []int32   // the channels whose total is above floor
	overAt  []int32   // per channel: its index in over, -1: not there
	jobLoad [][]int64 // per job, per channel
	cap     int64     // the largest per-job load a move may leave
	floor   int64     // Bound: channels loaded at most this need no relief
	w       *lft.Walker
	terms   []int64 // per switch: its terminals (the verifier's sources)
	// the current destination's tree: next channel (-1: none), hops to
	// its switch, the job's paths (carry) and all terminals' (tc) through
	// each switch
	dsw     int32
	nxt     []int32
	hops    []int32
	carry   []int64
	tc      []int64
	order   []int32
	out     []int64
	in      []int64
	cands   []spreadCand
	scratch []int64
	// per switch: the heaviest total on its route when the current
	// target's walk began; raised: the heaviest total a move of that
	// target left on a channel it added paths to
	hot    []int64
	raised int64
	bucket []int32 // switches per hop count, for order
	moves  int
}

// spreadCand is a channel u's entry may move to and the heaviest load
// the move leaves on the channels it adds paths to.
type spreadCand struct {
	c    int32
	gain int64
}

// spread returns r with job terminals' entries moved as described above,
// verified with vopt, and the number of entries moved; r itself, not
// copied, when nothing moves or the tables do not qualify (SLs or VLs
// not per destination).
func spread(ctx context.Context, g *fabric.Graph, r *lft.Routing, jobs []routing.Job, vopt cdg.Options) (*lft.Routing, int, error) {
	if !r.SL.PerDest() || !r.SL2VL.Uniform() || len(jobs) == 0 {
		return r, 0, nil
	}
	// No routing goes below the bound: the search stops when it gets
	// there.
	s, ok, err := newSpreader(g, r.Clone(), jobs, Bound(g, jobs))
	if err != nil || !ok {
		return r, 0, err
	}
	for sweep := 0; sweep < spreadSweeps && len(s.over) > 0; sweep++ {
		before := s.moves
		for _, t := range s.targets {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
			if s.improve(t); len(s.over) == 0 {
				break
			}
		}
		if s.moves == before {
			break
		}
	}
	if s.moves == 0 {
		return r, 0, nil
	}
	if rep, err := cdg.Verify(g, s.r, vopt); err != nil {
		return nil, 0, fmt.Errorf("sar: spread tables fail verification: %w\n%s", err, rep)
	}
	return s.r, s.moves, nil
}

// newSpreader walks every destination of r once: its turns into the
// dependency graph, a job terminal's paths into the loads. ok is false
// when there is nothing to do: no channel loaded above floor, a VL
// outside r's, or dependencies that already form a cycle (not verified
// tables). The job terminals' LIDs go first, so that the other
// destinations are walked only when some channel needs relief.
func newSpreader(g *fabric.Graph, r *lft.Routing, jobs []routing.Job, floor int64) (*spreader, bool, error) {
	S, C := g.NumSwitches(), g.NumChannels()
	s := &spreader{g: g, r: r, dg: cdg.NewTurnGraph(g, r.NumVLs), total: make([]int64, C), floor: floor,
		w: lft.NewWalker(g, r), nxt: make([]int32, S), hops: make([]int32, S), carry: make([]int64, S),
		tc: make([]int64, S), terms: make([]int64, S), scratch: make([]int64, C), hot: make([]int64, S)}
	for x := range int32(S) {
		s.terms[x] = int64(len(g.TermsOf(x)))
	}
	job := s.jobLIDs(jobs)
	for _, ofJob := range []bool{true, false} {
		for d := 1; d <= g.MaxLID(); d++ {
			if (job[d] >= 0) != ofJob {
				continue
			}
			if ok, err := s.count(d, job[d]); err != nil || !ok {
				return nil, false, err
			}
		}
		if ofJob {
			for _, l := range s.jobLoad {
				for c, x := range l {
					s.total[c] += x
					s.cap = max(s.cap, x)
				}
			}
			s.overAt = make([]int32, C)
			for c := range int32(C) {
				s.overAt[c] = -1
				s.mark(c)
			}
			if len(s.over) == 0 {
				return nil, false, nil
			}
		}
	}
	if s.dg.Order() != nil {
		return nil, false, nil
	}
	return s, true, nil
}

// jobLIDs fills s.src and s.jobLoad and returns the job of every LID (-1:
// none).
func (s *spreader) jobLIDs(jobs []routing.Job) []int32 {
	g := s.g
	of := routing.JobOf(jobs, len(g.Terms))
	job := make([]int32, g.MaxLID()+1)
	for i := range job {
		job[i] = -1
	}
	for j, jb := range jobs {
		src := make([]int64, g.NumSwitches())
		for _, t := range jb.Terms {
			if t < 0 || int(t) >= len(g.Terms) || of[t] != int32(j) || g.Terms[t].Switch < 0 {
				continue
			}
			src[g.Terms[t].Switch]++
			tm := &g.Terms[t]
			for l := 0; l < 1<<tm.LMC; l++ {
				job[int(tm.LID)+l] = int32(j)
			}
		}
		s.src = append(s.src, src)
		s.jobLoad = append(s.jobLoad, make([]int64, g.NumChannels()))
	}
	return job
}

// count walks the tables towards LID d of job j (-1: none): its turns
// into the dependency graph, a job terminal's paths into the job's loads
// and d into the targets. ok is false when d's VL is outside r's.
func (s *spreader) count(d int, j int32) (bool, error) {
	g, r := s.g, s.r
	dsw, _, _ := lft.Target(g, d)
	if dsw < 0 {
		return true, nil
	}
	vl := r.SL2VL.Default[r.SL.ByDest[d]&0xF]
	per := s.scratch
	if j >= 0 {
		per = s.jobLoad[j]
	}
	if int(vl) >= r.NumVLs {
		return false, nil
	}
	s.load(d, j, per)
	for x := range int32(g.NumSwitches()) {
		if c := s.nxt[x]; c >= 0 && s.tc[x] > 0 && s.nxt[g.Head[c]] >= 0 {
			if err := s.dg.Add(s.dg.Edge(c, s.nxt[g.Head[c]], vl)); err != nil {
				return false, err
			}
		}
	}
	if j >= 0 {
		s.targets = append(s.targets, spreadTarget{lid: d, job: j, vl: vl})
	}
	return true, nil
}

// load walks the tables towards LID d: the next channel, hops and
// terminals sending through every switch and, for a terminal of job j
// (j ≥ 0), the job's paths through every switch, added to per per
// channel. A switch that does not reach d (cut off by the fabric) gets
// neither channel nor hops, so no entry moves onto it.
func (s *spreader) load(d int, j int32, per []int64) {
	g := s.g
	s.dsw = s.w.Dest(d)
	for x := range int32(g.NumSwitches()) {
		s.nxt[x], s.hops[x] = -1, -1
		if why, _ := s.w.Resolve(x); why != lft.Delivered {
			continue
		}
		s.hops[x] = s.w.Hops(x)
		if x != s.dsw {
			s.nxt[x] = s.w.Next(x)
		}
	}
	copy(s.tc, s.terms)
	s.tc[s.dsw] = 0 // sends over no channel
	s.w.Accumulate(s.tc, s.scratch)
	if j >= 0 {
		copy(s.carry, s.src[j])
		s.carry[s.dsw]-- // the destination itself sends nothing to itself
		s.w.Accumulate(s.carry, per)
	}
}

// mark keeps channel c in over exactly when its total is above floor.
func (s *spreader) mark(c int32) {
	at := s.overAt[c]
	switch is := s.total[c] > s.floor; {
	case is && at < 0:
		s.overAt[c] = int32(len(s.over))
		s.over = append(s.over, c)
	case !is && at >= 0:
		last := s.over[len(s.over)-1]
		s.over[at], s.overAt[last] = last, at
		s.over = s.over[:len(s.over)-1]
		s.overAt[c] = -1
	}
}

// crosses reports whether LID d's entries send anything onto a channel
// loaded above floor: when none does, no move of d's entries can lower
// one, and d's tree need not be walked.
func (s *spreader) crosses(d int) bool {
	for _, c := range s.over {
		if s.r.Port(s.g.Tail[c], d) == s.g.OutPort[c] {
			return true
		}
	}
	return false
}

// improve tries to move the entries of target t's switches, farthest
// from its switch first, each once.
func (s *spreader) improve(t spreadTarget) {
	if !s.crosses(t.lid) {
		return
	}
	s.load(t.lid, t.job, s.scratch)
	s.sortOrder()
	// Every switch's route ends on one nearer to d, tried later: a move
	// changes no route still to be tried, only loads, and those it raises
	// stay at most raised.
	s.hot[s.dsw], s.raised = 0, 0
	for i := len(s.order) - 1; i >= 0; i-- {
		u := s.order[i]
		c := s.nxt[u]
		s.hot[u] = max(s.total[c], s.hot[s.g.Head[c]])
	}
	for _, u := range s.order {
		s.try(t, u)
	}
}

// sortOrder lists the switches that forward the job's paths towards d,
// farthest from d first, by number among equals (a counting sort).
func (s *spreader) sortOrder() {
	s.bucket = s.bucket[:0]
	n := 0
	for x := range int32(s.g.NumSwitches()) {
		if s.nxt[x] >= 0 && s.carry[x] > 0 {
			for int(s.hops[x]) >= len(s.bucket) {
				s.bucket = append(s.bucket, 0)
			}
			s.bucket[s.hops[x]]++
			n++
		}
	}
	// bucket[h] becomes where the switches h hops away start.
	at := int32(0)
	for h := len(s.bucket) - 1; h >= 0; h-- {
		at, s.bucket[h] = at+s.bucket[h], at
	}
	s.order = slices.Grow(s.order[:0], n)[:n]
	for x := range int32(s.g.NumSwitches()) {
		if s.nxt[x] >= 0 && s.carry[x] > 0 {
			s.order[s.bucket[s.hops[x]]] = x
			s.bucket[s.hops[x]]++
		}
	}
}

// try moves target t's entry at switch u to the candidate channel that
// leaves the lightest heaviest load, of those that lower the heaviest
// channel the move touches and keep d's VL acyclic.
func (s *spreader) try(t spreadTarget, u int32) {
	g := s.g
	k, co := s.carry[u], s.nxt[u]
	s.cands = s.cands[:0]
	// top is the heaviest channel on u's route: no move lowers a channel
	// under top when top is at most the floor, and a candidate is out
	// once it adds paths to a channel up to top. hot and raised bound it
	// without a walk.
	top := max(s.hot[u], s.raised)
	if top <= s.floor {
		return
	}
	if s.hot[u] <= s.floor {
		top = 0
		for x := u; x != s.dsw; x = g.Head[s.nxt[x]] {
			top = max(top, s.total[s.nxt[x]])
		}
		if top <= s.floor {
			return
		}
	}
	jl := s.jobLoad[t.job]
	for c := g.Off[u]; c < g.Off[u+1]; c++ {
		if c == co || s.hops[g.Head[c]] != s.hops[u]-1 {
			continue
		}
		lost, gain, job := s.total[co], s.total[c]+k, jl[c]+k
		for a, b := g.Head[co], g.Head[c]; a != b && gain < top && job <= s.cap; a, b = g.Head[s.nxt[a]], g.Head[s.nxt[b]] {
			ca, cb := s.nxt[a], s.nxt[b]
			lost, gain, job = max(lost, s.total[ca]), max(gain, s.total[cb]+k), max(job, jl[cb]+k)
		}
		if gain < lost && lost > s.floor && job <= s.cap {
			s.cands = append(s.cands, spreadCand{c: c, gain: gain})
		}
	}
	slices.SortStableFunc(s.cands, func(a, b spreadCand) int { return cmp.Compare(a.gain, b.gain) })
	for _, cand := range s.cands {
		if s.turns(t.vl, u, cand.c) {
			s.apply(t, u, cand.c)
			return
		}
	}
}

// turns swaps the dependencies of u's entry on channel nxt[u] for those
// on channel cn in the dependency graph, reporting false (and changing
// nothing) when that closes a cycle. A switch x's entry adds the turn
// from its channel onto the next one when terminals send through x (tc):
// u's and its children's turns change, and so do those of the switches
// on the old route that lose all their sources and on the new route that
// gain their first.
func (s *spreader) turns(vl uint8, u, cn int32) bool {
	g, co, k := s.g, s.nxt[u], s.tc[u]
	s.out, s.in = s.out[:0], s.in[:0]
	for e := g.Off[u]; e < g.Off[u+1]; e++ {
		if cin := g.Rev[e]; s.nxt[g.Tail[cin]] == cin && s.tc[g.Tail[cin]] > 0 {
			s.out = append(s.out, s.dg.Edge(cin, co, vl))
			s.in = append(s.in, s.dg.Edge(cin, cn, vl))
		}
	}
	s.out = s.onward(s.out, co, vl)
	s.in = s.onward(s.in, cn, vl)
	for a, b := g.Head[co], g.Head[cn]; a != b; a, b = g.Head[s.nxt[a]], g.Head[s.nxt[b]] {
		if s.tc[a] == k {
			s.out = s.onward(s.out, s.nxt[a], vl)
		}
		if s.tc[b] == 0 {
			s.in = s.onward(s.in, s.nxt[b], vl)
		}
	}
	return s.dg.Replace(s.out, s.in)
}

// onward appends the turn from channel c onto the next channel of its
// far end, if that is not the destination's switch.
func (s *spreader) onward(list []int64, c int32, vl uint8) []int64 {
	if n := s.nxt[s.g.Head[c]]; n >= 0 {
		list = append(list, s.dg.Edge(c, n, vl))
	}
	return list
}

// apply moves u's entry for t onto channel cn: its paths leave the old
// channels up to where the two routes meet and join the new ones (both
// routes have the same length, so their switches pair up by distance).
func (s *spreader) apply(t spreadTarget, u, cn int32) {
	g, k, jl := s.g, s.carry[u], s.jobLoad[t.job]
	shift := func(c int32, by int64) {
		s.total[c] += by
		jl[c] += by
		s.mark(c)
		if by > 0 {
			s.raised = max(s.raised, s.total[c])
		}
	}
	co := s.nxt[u]
	shift(co, -k)
	shift(cn, k)
	for a, b := g.Head[co], g.Head[cn]; a != b; a, b = g.Head[s.nxt[a]], g.Head[s.nxt[b]] {
		s.carry[a] -= k
		s.carry[b] += k
		s.tc[a] -= s.tc[u]
		s.tc[b] += s.tc[u]
		shift(s.nxt[a], -k)
		shift(s.nxt[b], k)
	}
	s.nxt[u] = cn
	s.r.SetPort(u, t.lid, g.OutPort[cn])
	s.moves++
}
