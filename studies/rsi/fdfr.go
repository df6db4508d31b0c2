package rsi

import (
	"errors"
	"fmt"
	"slices"
)

// FailKind says what fails.
type FailKind int

const (
	// FailNode fails a node: it stops and every cable at it goes down.
	FailNode FailKind = iota
	// FailLink fails one cable (both directions).
	FailLink
)

func (k FailKind) String() string {
	if k == FailLink {
		return "link"
	}
	return "node"
}

// Failure is one failed element: a node (Node) or the cable of channel
// Channel (either direction).
type Failure struct {
	Kind    FailKind
	Node    int32
	Channel int32
}

// FRRule selects how Algorithm 3 decides to forward FR packets.
type FRRule int

const (
	// FRLiteral is Algorithm 3 as printed (seed 000 §V, Table V): after
	// re-validating port A in every entry, forward FR through every port
	// iff some entry now holds A as its only valid port (Status = 1, line
	// 13–14) and no entry of the node keeps an invalid port (lines 17–22).
	FRLiteral FRRule = iota
	// FRHealed forwards FR once, when the node's tables turn fully valid
	// again after having had invalid ports (the text's "only when all
	// entries are recovered and become valid, the FR will be forwarded"),
	// whether or not port A was some entry's only option.
	FRHealed
)

func (r FRRule) String() string {
	if r == FRHealed {
		return "healed"
	}
	return "literal"
}

// ErrWideEntry is returned when an entry holds more than 64 ports (the
// simulator keeps an entry's valid bits in one word).
var ErrWideEntry = errors.New("rsi: entry with more than 64 ports")

// NodeFault is what the fault handling did at one node.
type NodeFault struct {
	Node                    int32
	FDIn, FDOut             int // FD packets received, sent
	FirstFD                 int // round of the first FD or detection (-1 never)
	T1Ports, T2Ports        int // ports invalidated
	T1Emptied, T2Emptied    int // entries left without any valid port
	FRIn, FROut             int // FR packets received, sent
	StillInvalid            int // entries with an invalid port after recovery
	detected, dirty, healed bool
}

// Affected reports whether the failure touched the node's tables or it
// heard of the failure.
func (n NodeFault) Affected() bool {
	return n.FDIn+n.T1Ports+n.T2Ports > 0 || n.detected
}

// PairState counts ordered pairs of distinct live nodes by what the tables
// do for them.
type PairState struct {
	Pairs        int64 // ordered pairs of distinct live nodes
	Disconnected int64 // the failure cut them apart physically
	Lost         int64 // connected, but no valid table path: every route lost
	// LostSilent counts the lost pairs whose source still holds a valid
	// entry for the destination: its packets leave and are dropped where
	// an entry has no valid port left (the FD never reached the source,
	// e.g. because T2 entries fall only with a whole super node).
	LostSilent int64
	Unsafe     int64 // routable, but some valid table choice runs into an entry without a valid port
	Safe       int64 // every valid table choice delivers
	Examples   [][2]int32
}

// Outcome is the result of Simulate.
type Outcome struct {
	Failures  []Failure
	Rule      FRRule
	Nodes     []NodeFault // per switch
	FDPackets int         // FD packets delivered
	FDRounds  int         // rounds (hops) until the last FD was handled
	Before    PairState   // tables and fabric before the failure
	After     PairState   // after FD propagation settled
	FRPackets int
	FRRounds  int
	Recovered PairState // after the elements are back and FR settled
	// Invalid counts entries that keep an invalid port after recovery
	// (0 = the tables are whole again).
	Invalid int
}

// Options of Simulate.
type Options struct {
	Rule       FRRule
	NoRecovery bool // stop after FD propagation
	Examples   int  // lost pairs kept as examples (default 5)
}

// region is the address set of an FD packet: nodes (T1 addresses) and
// super nodes (T2 addresses), both sorted.
type region struct {
	nodes []int32
	sns   []int
}

func (r region) empty() bool { return len(r.nodes) == 0 && len(r.sns) == 0 }

type packet struct {
	to    int32 // receiving node
	port  int32 // channel at the receiver toward the sender (the paper's port A)
	reg   region
	round int
}

// fdfr is the simulator state.
type fdfr struct {
	t       *Tables
	opt     Options
	entries [][]Entry  // per node: T1 entries then T2 entries
	valid   [][]uint64 // valid bits per entry
	// at[c] lists (entry index at Tail[c], bit of c in it).
	at       [][][2]int32
	deadNode []bool
	deadCh   []bool // per channel (both directions of a failed cable)
	out      *Outcome
}

// Simulate fails the given elements at round 0, lets the adjacent nodes
// detect it and FD packets spread by Algorithm 2 (seed 000 §V, Table IV)
// until no packet is left, then (unless opt.NoRecovery) brings the
// elements back and spreads FR packets by Algorithm 3 (Table V) with the
// chosen rule. Each packet takes one round per hop; within a round packets
// are handled in the order they were sent, so the outcome is
// deterministic.
//
// Readings adopted (the paper leaves them open):
//   - A node that detects a dead port A invalidates A in every entry
//     holding it; the "region influenced by the failure" (line 6) is the
//     set of addresses whose entries lost their last valid port. FD(region)
//     is sent through every live port when that set is not empty.
//   - A node receiving FD(region) on port A invalidates A in the entries
//     whose whole address space lies in the region ("if C contains the
//     Region", line 10): a T1 entry when its node is in it, a T2 entry
//     when its super node is, or all of that super node's nodes are — so
//     T2 entries of other super nodes fall only when a whole super node
//     is lost (the paper's Fig. 6 discussion). Entries that become empty
//     make up the region it forwards (line 16–17).
//   - A recovered node restarts with its original, fully valid tables;
//     a node whose port comes back (or that receives FR on it) re-validates
//     that port in every entry holding it (Algorithm 3, line 11).
//
// O((V + packets)·entries per node).
func Simulate(t *Tables, failures []Failure, opt Options) (*Outcome, error) {
	if opt.Examples == 0 {
		opt.Examples = 5
	}
	s, err := newFDFR(t, opt)
	if err != nil {
		return nil, err
	}
	g := t.G
	for _, f := range failures {
		switch f.Kind {
		case FailNode:
			if f.Node < 0 || int(f.Node) >= g.NumSwitches() {
				return nil, fmt.Errorf("rsi: failed node %d outside 0..%d", f.Node, g.NumSwitches()-1)
			}
		case FailLink:
			if f.Channel < 0 || int(f.Channel) >= g.NumChannels() {
				return nil, fmt.Errorf("rsi: failed channel %d outside 0..%d", f.Channel, g.NumChannels()-1)
			}
		default:
			return nil, fmt.Errorf("rsi: unknown failure kind %d", f.Kind)
		}
	}
	s.out.Failures = slices.Clone(failures)
	s.out.Before = s.pairs()
	s.fail(failures)
	s.out.After = s.pairs()
	if !opt.NoRecovery {
		s.recover(failures)
		s.out.Recovered = s.pairs()
		for x := range s.valid {
			n := s.invalidEntries(int32(x))
			s.out.Nodes[x].StillInvalid = n
			s.out.Invalid += n
		}
	}
	return s.out, nil
}

func newFDFR(t *Tables, opt Options) (*fdfr, error) {
	g := t.G
	n := g.NumSwitches()
	s := &fdfr{
		t: t, opt: opt,
		entries: make([][]Entry, n), valid: make([][]uint64, n),
		at:       make([][][2]int32, g.NumChannels()),
		deadNode: make([]bool, n), deadCh: make([]bool, g.NumChannels()),
		out: &Outcome{Rule: opt.Rule, Nodes: make([]NodeFault, n)},
	}
	for x := int32(0); int(x) < n; x++ {
		s.entries[x] = append(slices.Clone(t.t1[x]), t.t2[x]...)
		s.valid[x] = make([]uint64, len(s.entries[x]))
		for i, e := range s.entries[x] {
			if len(e) > 64 {
				return nil, fmt.Errorf("%w: node %s", ErrWideEntry, g.SwitchName(x))
			}
			for b, c := range e {
				s.at[c] = append(s.at[c], [2]int32{int32(i), int32(b)})
			}
		}
		s.reset(x)
		s.out.Nodes[x] = NodeFault{Node: x, FirstFD: -1}
	}
	return s, nil
}

// reset makes every entry of x fully valid.
func (s *fdfr) reset(x int32) {
	for i, e := range s.entries[x] {
		s.valid[x][i] = full(len(e))
	}
}

func full(n int) uint64 {
	if n == 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// live reports whether channel c can carry a packet.
func (s *fdfr) live(c int32) bool {
	g := s.t.G
	return !s.deadCh[c] && !s.deadNode[g.Tail[c]] && !s.deadNode[g.Head[c]]
}

// address returns the region of entry i of node x.
func (s *fdfr) address(x int32, i int) (node int32, sn int) {
	members := s.t.Members[s.t.Group[x]]
	if i < len(members) {
		return members[i], -1
	}
	return -1, i - len(members)
}

// covered reports whether entry i of x lies inside reg.
func (s *fdfr) covered(x int32, i int, reg region) bool {
	node, sn := s.address(x, i)
	if node >= 0 {
		_, in := slices.BinarySearch(reg.nodes, node)
		_, inSN := slices.BinarySearch(reg.sns, s.t.Group[node])
		return in || inSN
	}
	if _, in := slices.BinarySearch(reg.sns, sn); in {
		return true
	}
	for _, m := range s.t.Members[sn] {
		if _, in := slices.BinarySearch(reg.nodes, m); !in {
			return false
		}
	}
	return true
}

// invalidate clears port c in the entries of Tail[c] that match (all of
// them when reg is nil) and returns the addresses whose entries emptied.
func (s *fdfr) invalidate(c int32, reg *region) region {
	x := s.t.G.Tail[c]
	nf := &s.out.Nodes[x]
	var lost region
	for _, ib := range s.at[c] {
		i, bit := int(ib[0]), uint64(1)<<uint(ib[1])
		if s.valid[x][i]&bit == 0 || (reg != nil && !s.covered(x, i, *reg)) {
			continue
		}
		s.valid[x][i] &^= bit
		nf.dirty = true
		node, sn := s.address(x, i)
		if node >= 0 {
			nf.T1Ports++
		} else {
			nf.T2Ports++
		}
		if s.valid[x][i] != 0 {
			continue
		}
		if node >= 0 {
			nf.T1Emptied++
			lost.nodes = append(lost.nodes, node)
		} else {
			nf.T2Emptied++
			lost.sns = append(lost.sns, sn)
		}
	}
	slices.Sort(lost.nodes)
	slices.Sort(lost.sns)
	return lost
}

// broadcast queues a packet with reg to every live neighbour of x.
func (s *fdfr) broadcast(q []packet, x int32, reg region, round int) []packet {
	g := s.t.G
	for c := g.Off[x]; c < g.Off[x+1]; c++ {
		if s.live(c) {
			q = append(q, packet{to: g.Head[c], port: g.Rev[c], reg: reg, round: round})
		}
	}
	return q
}

// fail runs Algorithm 2 to quiescence.
func (s *fdfr) fail(failures []Failure) {
	g := s.t.G
	var dead []int32 // channels whose tail detects the failure
	for _, f := range failures {
		if f.Kind == FailNode {
			s.deadNode[f.Node] = true
			for c := g.Off[f.Node]; c < g.Off[f.Node+1]; c++ {
				dead = append(dead, g.Rev[c])
			}
			continue
		}
		for _, c := range [2]int32{f.Channel, g.Rev[f.Channel]} {
			s.deadCh[c] = true
			dead = append(dead, c)
		}
	}
	slices.Sort(dead)
	dead = slices.Compact(dead)
	var q []packet
	// Detection: round 0, in channel order, grouped per detecting node.
	for i := 0; i < len(dead); {
		x := g.Tail[dead[i]]
		var lost region
		for ; i < len(dead) && g.Tail[dead[i]] == x; i++ {
			if s.deadNode[x] {
				continue
			}
			l := s.invalidate(dead[i], nil)
			lost.nodes = append(lost.nodes, l.nodes...)
			lost.sns = append(lost.sns, l.sns...)
		}
		if s.deadNode[x] {
			continue
		}
		nf := &s.out.Nodes[x]
		nf.detected, nf.FirstFD = true, 0
		slices.Sort(lost.nodes)
		slices.Sort(lost.sns)
		if !lost.empty() {
			before := len(q)
			q = s.broadcast(q, x, lost, 1)
			nf.FDOut += len(q) - before
		}
	}
	for len(q) > 0 {
		p := q[0]
		q = q[1:]
		if s.deadNode[p.to] {
			continue
		}
		s.out.FDPackets++
		s.out.FDRounds = max(s.out.FDRounds, p.round)
		nf := &s.out.Nodes[p.to]
		nf.FDIn++
		if nf.FirstFD < 0 {
			nf.FirstFD = p.round
		}
		if lost := s.invalidate(p.port, &p.reg); !lost.empty() {
			before := len(q)
			q = s.broadcast(q, p.to, lost, p.round+1)
			nf.FDOut += len(q) - before
		}
	}
}

// invalidEntries counts the entries of x with an invalid port.
func (s *fdfr) invalidEntries(x int32) int {
	n := 0
	for i, e := range s.entries[x] {
		if s.valid[x][i] != full(len(e)) {
			n++
		}
	}
	return n
}

// revalidate sets port c valid in every entry of Tail[c] holding it and
// reports whether some entry that had lost every port now holds c as its
// only valid port (the paper's "C contains Port A only", read as a change:
// re-reading an already valid single-port entry must not re-trigger FR, or
// two neighbours would bounce FR packets forever).
func (s *fdfr) revalidate(c int32) bool {
	x := s.t.G.Tail[c]
	only := false
	for _, ib := range s.at[c] {
		i, bit := int(ib[0]), uint64(1)<<uint(ib[1])
		if s.valid[x][i]&bit != 0 {
			continue
		}
		s.valid[x][i] |= bit
		if s.valid[x][i] == bit {
			only = true
		}
	}
	return only
}

// forwardFR decides, after port events at x, whether x sends FR.
func (s *fdfr) forwardFR(x int32, only bool) bool {
	nf := &s.out.Nodes[x]
	whole := s.invalidEntries(x) == 0
	if s.opt.Rule == FRHealed {
		if whole && nf.dirty && !nf.healed {
			nf.healed = true
			return true
		}
		return false
	}
	return only && whole
}

// recover brings the failed elements back and runs Algorithm 3.
func (s *fdfr) recover(failures []Failure) {
	g := s.t.G
	var up []int32 // channels whose tail sees its port come back
	for _, f := range failures {
		if f.Kind == FailNode {
			s.deadNode[f.Node] = false
			s.reset(f.Node)
			for c := g.Off[f.Node]; c < g.Off[f.Node+1]; c++ {
				up = append(up, c, g.Rev[c])
			}
			continue
		}
		for _, c := range [2]int32{f.Channel, g.Rev[f.Channel]} {
			s.deadCh[c] = false
			up = append(up, c)
		}
	}
	slices.Sort(up)
	up = slices.Compact(up)
	var q []packet
	for i := 0; i < len(up); {
		x := g.Tail[up[i]]
		only := false
		for ; i < len(up) && g.Tail[up[i]] == x; i++ {
			if s.live(up[i]) && s.revalidate(up[i]) {
				only = true
			}
		}
		if s.forwardFR(x, only) {
			before := len(q)
			q = s.broadcast(q, x, region{}, 1)
			s.out.Nodes[x].FROut += len(q) - before
		}
	}
	for len(q) > 0 {
		p := q[0]
		q = q[1:]
		s.out.FRPackets++
		s.out.FRRounds = max(s.out.FRRounds, p.round)
		nf := &s.out.Nodes[p.to]
		nf.FRIn++
		if s.forwardFR(p.to, s.revalidate(p.port)) {
			before := len(q)
			q = s.broadcast(q, p.to, region{}, p.round+1)
			nf.FROut += len(q) - before
		}
	}
}
