package lft

import "github.com/nuesm/nuesm/fabric"

// Reason says whether a packet that follows the tables reaches its
// destination and, if not, why. It is the one list of failures that every
// walk of the tables reports: the verifier, the planner, the metrics and
// the simulator's set-up.
type Reason uint8

// Outcomes of a walk.
const (
	Delivered Reason = iota
	Loop             // the walk comes back to a switch it has visited
	NoRoute          // LFT entry NoPort
	BadPort          // port beyond the switch's port count
	Uncabled         // port without a cable (a failed link)
	WrongNode        // port 0 before the destination switch, or a port cabled to a CA or router
	WrongPort        // the destination switch forwards on another port than the destination's
)

var reasonText = [...]string{
	Delivered: "ok",
	Loop:      "forwarding loop",
	NoRoute:   "no route (LFT entry 0xFF)",
	BadPort:   "LFT port beyond the switch's port count",
	Uncabled:  "LFT port not cabled",
	WrongNode: "LFT port ends the path before the destination (port 0, or a CA or router port)",
	WrongPort: "wrong port at the destination switch",
}

// String returns the phrase reports use for the reason.
func (r Reason) String() string {
	if int(r) < len(reasonText) {
		return reasonText[r]
	}
	return "unknown reason"
}

// Target returns the switch that answers LID lid and the port it delivers
// on: the switch itself and port 0 for a switch LID, the switch a CA or
// router port is cabled to and that switch's port for theirs. sw is -1
// when nobody answers lid or the port is cabled to no switch; term is the
// terminal index, -1 for a switch LID.
func Target(g *fabric.Graph, lid int) (sw int32, port uint8, term int32) {
	sw, term = g.Owner(lid)
	if term >= 0 {
		return g.Terms[term].Switch, g.Terms[term].SwitchPort, term
	}
	return sw, 0, term
}

// Hop resolves LFT port p of switch x for a packet whose destination is
// not on x: the channel it leaves on, or -1 and why it cannot go on. A
// loopback cable (both ends on x) is a Loop.
func Hop(g *fabric.Graph, x int32, p uint8) (int32, Reason) {
	if c := g.ChannelAt(x, p); c >= 0 && p != NoPort {
		return c, Delivered
	}
	return -1, lost(g, x, p)
}

// lost says why port p of switch x leads to no other switch.
func lost(g *fabric.Graph, x int32, p uint8) Reason {
	if p == NoPort {
		return NoRoute
	}
	node := &g.F.Nodes[g.Switches[x]]
	switch {
	case p == 0:
		return WrongNode
	case int(p) > node.NumPorts():
		return BadPort
	case !node.Ports[p].Cabled():
		return Uncabled
	case g.F.Nodes[node.Ports[p].Peer.Node].Kind != fabric.Switch:
		return WrongNode
	}
	return Loop
}

// Arrive checks LFT port p of the destination switch against port, the
// port of the destination (0 for the switch's own LID).
func Arrive(p, port uint8) Reason {
	switch p {
	case port:
		return Delivered
	case NoPort:
		return NoRoute
	}
	return WrongPort
}

// Walker follows the tables towards one destination at a time. A packet's
// fate depends on its switch and destination only, so the Walker settles
// each switch once per destination (the walks of all sources form a
// forest of next hops) and a destination costs O(switches). It allocates
// nothing once its lists have grown to a destination's size; each
// goroutine owns one.
type Walker struct {
	g     *fabric.Graph
	r     *Routing
	col   []uint8 // the destination's entry per switch (DestColumn), nil: r's
	d     int
	dsw   int32
	dport uint8
	stamp uint32
	st    []uint32 // per switch: stamp<<stBits | Reason<<2 | state
	at    []int32  // per failed switch: where the walk fails
	hops  []int32  // per delivered switch: hops to the destination switch
	out   []int32  // per delivered switch but the destination's: its channel
	path  []int32  // switches the last Resolve settled, from its source on
	// ok lists the switches settled as delivered for this destination,
	// each after its successor: a switch's walk passes only switches
	// settled before it or later in the same Resolve, which are appended
	// first.
	ok []int32
}

// Per-switch states of the current destination, below the stamp and the
// Reason of a settled switch.
const (
	stVisiting uint32 = 1
	stDone     uint32 = 2
	stBits            = 5
)

// NewWalker returns a Walker of routing r (nil when only DestColumn is
// used) on graph g.
func NewWalker(g *fabric.Graph, r *Routing) *Walker {
	S := g.NumSwitches()
	return &Walker{g: g, r: r, st: make([]uint32, S), at: make([]int32, S), hops: make([]int32, S), out: make([]int32, S)}
}

// Dest starts the walks towards LID d along r's tables and returns the
// switch that answers d, as Target does (-1: every walk fails).
func (w *Walker) Dest(d int) int32 {
	dsw, dport, _ := Target(w.g, d)
	w.start(nil, d, dsw, dport)
	return dsw
}

// DestColumn starts walks that read switch x's entry from col[x] towards
// port dport of switch dsw: one destination's tables at one moment.
func (w *Walker) DestColumn(col []uint8, dsw int32, dport uint8) {
	w.start(col, -1, dsw, dport)
}

func (w *Walker) start(col []uint8, d int, dsw int32, dport uint8) {
	w.col, w.d, w.dsw, w.dport = col, d, dsw, dport
	w.stamp++
	w.ok = w.ok[:0]
	if w.stamp >= 1<<(32-stBits) {
		clear(w.st)
		w.stamp = 1
	}
}

func (w *Walker) port(x int32) uint8 {
	if w.col != nil {
		return w.col[x]
	}
	return w.r.Port(x, w.d)
}

// Resolve follows the tables from switch u and returns Delivered, or why
// the packet is lost and the switch where that happens (where a loop
// closes, for a Loop). It settles every switch on the way.
func (w *Walker) Resolve(u int32) (Reason, int32) {
	w.path = w.path[:0]
	if s := w.st[u]; s>>stBits == w.stamp && s&3 == stDone {
		return Reason(s>>2) & 7, w.at[u]
	}
	g := w.g
	x, why, at, h := u, Delivered, int32(-1), int32(-1)
	for {
		if s := w.st[x]; s>>stBits == w.stamp {
			if s&3 == stVisiting {
				why, at = Loop, x
			} else {
				why, at, h = Reason(s>>2)&7, w.at[x], w.hops[x]
			}
			break
		}
		w.st[x] = w.stamp<<stBits | stVisiting
		w.path = append(w.path, x)
		p := w.port(x)
		if x == w.dsw {
			if why = Arrive(p, w.dport); why != Delivered {
				at = x
			}
			break
		}
		c, r := Hop(g, x, p)
		if r != Delivered {
			why, at = r, x
			break
		}
		w.out[x] = c
		x = g.Head[c]
	}
	done := w.stamp<<stBits | uint32(why)<<2 | stDone
	if why != Delivered {
		for _, y := range w.path {
			w.st[y], w.at[y] = done, at
		}
		return why, at
	}
	for i := len(w.path) - 1; i >= 0; i-- {
		y := w.path[i]
		h++
		w.st[y], w.hops[y] = done, h
		w.ok = append(w.ok, y)
	}
	return Delivered, -1
}

// Settled returns the switches the last Resolve settled, in walk order
// (its source first); empty when the source was settled before. It is
// valid until the next Resolve.
func (w *Walker) Settled() []int32 { return w.path }

// Delivered reports whether switch x is settled as delivered for the
// current destination.
func (w *Walker) Delivered(x int32) bool {
	return w.st[x] == w.stamp<<stBits|uint32(Delivered)<<2|stDone
}

// Hops returns the switch-to-switch hops from switch x, settled as
// delivered, to the destination switch.
func (w *Walker) Hops(x int32) int32 { return w.hops[x] }

// Next returns the channel switch x, settled as delivered and not the
// destination switch, forwards on.
func (w *Walker) Next(x int32) int32 { return w.out[x] }

// Accumulate pushes load[x], the packets that start at switch x, along the
// walks towards the destination, each switch after every switch whose walk
// passes it: every channel c they cross adds them to perChannel[c], and
// every switch's load grows by what passes through it. Switches not
// settled as delivered keep their load and push nothing. O(settled
// switches), no sort: every switch comes after its successor in ok, so
// ok's reverse is such an order.
func (w *Walker) Accumulate(load, perChannel []int64) {
	for i := len(w.ok) - 1; i >= 0; i-- {
		x := w.ok[i]
		if l := load[x]; l != 0 && x != w.dsw {
			c := w.out[x]
			perChannel[c] += l
			load[w.g.Head[c]] += l
		}
	}
}

// Graph returns the graph the Walker walks.
func (w *Walker) Graph() *fabric.Graph { return w.g }
