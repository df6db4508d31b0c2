package fabric

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors; every validation error wraps one of them.
var (
	ErrDuplicateGUID = errors.New("duplicate GUID")
	ErrDuplicateLID  = errors.New("duplicate LID")
	ErrLIDRange      = errors.New("LID outside the unicast range 0x0001-0xBFFF")
	ErrLMC           = errors.New("bad LMC")
	ErrPortRange     = errors.New("port number out of range")
	ErrCabledTwice   = errors.New("port cabled twice")
	ErrAsymmetric    = errors.New("asymmetric link")
	ErrGUID          = errors.New("bad GUID")
	ErrKind          = errors.New("bad node kind")
)

// Problem is one finding of Validate or Warnings, located at a node and
// port (Port is -1 for node-level findings).
type Problem struct {
	Node NodeID
	Port int
	Err  error
}

func (p Problem) Error() string { return p.Err.Error() }
func (p Problem) Unwrap() error { return p.Err }

// ValidationError lists every problem Validate found.
type ValidationError struct {
	Problems []Problem
}

// maxListed caps how many problems Error prints.
const maxListed = 10

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fabric: %d problem(s)", len(e.Problems))
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "; … %d more", len(e.Problems)-maxListed)
			break
		}
		b.WriteString("; ")
		b.WriteString(p.Err.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is find the sentinels of every problem.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// Validate checks the fabric's consistency: node kinds, port counts and
// GUIDs, unique node and port GUIDs, symmetric cabling (each cable
// described the same way from both ends, no port cabled twice, port 0 never
// cabled, ports within the node's port count), LIDs within the unicast
// range, aligned to their LMC and not shared. LID 0 means "unassigned" and
// is accepted (AssignLIDs fills it in). It returns nil or a
// *ValidationError listing every problem.
func (f *Fabric) Validate() error {
	v := &validator{f: f}
	v.nodes()
	v.cables()
	v.lids()
	if len(v.probs) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.probs}
}

type validator struct {
	f     *Fabric
	probs []Problem
}

func (v *validator) add(n NodeID, port int, sentinel error, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	v.probs = append(v.probs, Problem{Node: n, Port: port, Err: fmt.Errorf("%s: %w", msg, sentinel)})
}

func (v *validator) nodes() {
	f := v.f
	nodeGUID := make(map[uint64]NodeID, len(f.Nodes))
	for i := range f.Nodes {
		n, id := &f.Nodes[i], NodeID(i)
		if n.Kind != Switch && n.Kind != CA && n.Kind != Router {
			v.add(id, -1, ErrKind, "node %d (GUID 0x%016x): kind %d", i, n.GUID, n.Kind)
		}
		if n.NumPorts() < 1 || n.NumPorts() > MaxPorts {
			v.add(id, -1, ErrPortRange, "%s: %d ports, expected 1..%d", NodeIDString(n.Kind, n.GUID), n.NumPorts(), MaxPorts)
		}
		if n.GUID == 0 {
			v.add(id, -1, ErrGUID, "node %d %q: node GUID 0", i, n.Desc)
			continue
		}
		if old, dup := nodeGUID[n.GUID]; dup {
			v.add(id, -1, ErrDuplicateGUID, "node GUID 0x%016x used by %s and %s",
				n.GUID, NodeIDString(f.Nodes[old].Kind, n.GUID), NodeIDString(n.Kind, n.GUID))
			continue
		}
		nodeGUID[n.GUID] = id
	}
	// A port GUID may equal its own node's GUID (switch port 0, ConnectX-4
	// and later CAs) but no other node's GUID and no other port's GUID.
	// Switch port 0 and every CA/router port are checked, cabled or not.
	portGUID := make(map[uint64]PortRef, len(f.Nodes))
	for _, r := range f.guidPorts() {
		g := f.Port(r).GUID
		if g == 0 {
			continue
		}
		if owner, ok := nodeGUID[g]; ok && owner != r.Node {
			v.add(r.Node, int(r.Port), ErrDuplicateGUID, "%s: port GUID 0x%016x is the node GUID of %s",
				f.PortName(r), g, NodeIDString(f.Nodes[owner].Kind, g))
			continue
		}
		if old, dup := portGUID[g]; dup {
			v.add(r.Node, int(r.Port), ErrDuplicateGUID, "port GUID 0x%016x used by %s and %s",
				g, f.PortName(old), f.PortName(r))
			continue
		}
		portGUID[g] = r
	}
}

func (v *validator) cables() {
	f := v.f
	for i := range f.Nodes {
		n, id := &f.Nodes[i], NodeID(i)
		if len(n.Ports) == 0 {
			continue // reported by nodes()
		}
		if peer := n.Ports[0].Peer; peer.Node >= 0 {
			v.add(id, 0, ErrPortRange, "%s: port 0 is cabled (to %s)", f.PortName(PortRef{id, 0}), f.refName(peer))
		}
		for p := 1; p < len(n.Ports); p++ {
			me := PortRef{id, uint8(p)}
			peer := n.Ports[p].Peer
			if peer.Node < 0 {
				continue
			}
			if peer == me {
				v.add(id, p, ErrCabledTwice, "%s: cabled to itself", f.PortName(me))
				continue
			}
			if int(peer.Node) >= len(f.Nodes) {
				v.add(id, p, ErrAsymmetric, "%s: cabled to unknown node %d", f.PortName(me), peer.Node)
				continue
			}
			pn := &f.Nodes[peer.Node]
			if peer.Port == 0 || int(peer.Port) > pn.NumPorts() {
				v.add(id, p, ErrPortRange, "%s: cabled to port %d of %q, which has ports 1..%d",
					f.PortName(me), peer.Port, f.Name(peer.Node), pn.NumPorts())
				continue
			}
			back := pn.Ports[peer.Port].Peer
			if back != me {
				if back.Node < 0 {
					v.add(id, p, ErrAsymmetric, "%s: cabled to %s, but that port lists no cable",
						f.PortName(me), f.PortName(peer))
				} else {
					v.add(id, p, ErrCabledTwice, "%s: cabled to %s, but that port is cabled to %s",
						f.PortName(me), f.PortName(peer), f.refName(back))
				}
			}
		}
	}
}

// refName is PortName for a reference that may point outside the fabric.
func (f *Fabric) refName(r PortRef) string {
	if r.Node < 0 || int(r.Node) >= len(f.Nodes) {
		return fmt.Sprintf("node %d[%d]", r.Node, r.Port)
	}
	return f.PortName(r)
}

// lidRange is the LIDs [lo, hi] one endpoint answers.
type lidRange struct {
	lo, hi int
	r      PortRef
}

func (v *validator) lids() {
	f := v.f
	var rs []lidRange
	for _, r := range f.Endpoints() {
		p := f.Port(r)
		if p.LMC > 7 {
			v.add(r.Node, int(r.Port), ErrLMC, "%s: LMC %d, expected 0..7", f.PortName(r), p.LMC)
			continue
		}
		if p.LID == 0 {
			continue
		}
		n := 1 << p.LMC
		lo, hi := int(p.LID), int(p.LID)+n-1
		if lo > MaxUnicastLID || hi > MaxUnicastLID {
			v.add(r.Node, int(r.Port), ErrLIDRange, "%s: LID 0x%04x (LMC %d) beyond 0x%04x", f.PortName(r), p.LID, p.LMC, MaxUnicastLID)
			continue
		}
		if lo&(n-1) != 0 {
			v.add(r.Node, int(r.Port), ErrLMC, "%s: base LID %d not aligned to LMC %d (a multiple of %d)", f.PortName(r), p.LID, p.LMC, n)
			continue
		}
		rs = append(rs, lidRange{lo, hi, r})
	}
	// Sort by base LID, then node and port, so that the port a duplicate is
	// reported at does not depend on the sort algorithm.
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].lo != rs[j].lo {
			return rs[i].lo < rs[j].lo
		}
		return less(rs[i].r, rs[j].r)
	})
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		if cur.lo <= prev.hi {
			v.add(cur.r.Node, int(cur.r.Port), ErrDuplicateLID, "LID %d used by %s and %s", cur.lo, f.PortName(prev.r), f.PortName(cur.r))
			if cur.hi < prev.hi {
				rs[i] = prev // keep the wider range for the next comparison
			}
		}
	}
}

// Endpoints lists the LID-bearing ports: port 0 of every switch and every
// cabled CA or router port, in node order. A node without ports (invalid,
// see Validate) contributes nothing.
func (f *Fabric) Endpoints() []PortRef { return f.ports(true) }

// guidPorts lists the ports whose GUIDs must be unique: port 0 of every
// switch (its other ports report no GUID of their own) and every CA or
// router port, cabled or not, in node order.
func (f *Fabric) guidPorts() []PortRef { return f.ports(false) }

// ports lists port 0 of every switch and the CA and router ports (only the
// cabled ones when cabled), in node order; nodes without ports add none.
func (f *Fabric) ports(cabled bool) []PortRef {
	var out []PortRef
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if len(n.Ports) == 0 {
			continue
		}
		if n.Kind == Switch {
			out = append(out, PortRef{NodeID(i), 0})
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			if !cabled || n.Ports[p].Cabled() {
				out = append(out, PortRef{NodeID(i), uint8(p)})
			}
		}
	}
	return out
}

// Warnings reports what is legal but suspicious: the two ends of a cable
// reporting different widths or speeds, and loopback cables (both ends on
// one node, which routing ignores). Cables to ports that do not exist are
// skipped (Validate reports them).
func (f *Fabric) Warnings() []Problem {
	var ws []Problem
	for _, l := range f.Links() {
		if int(l.B.Node) >= len(f.Nodes) || int(l.B.Port) >= len(f.Nodes[l.B.Node].Ports) {
			continue
		}
		a, b := f.Port(l.A), f.Port(l.B)
		if l.A.Node == l.B.Node {
			ws = append(ws, Problem{l.A.Node, int(l.A.Port), fmt.Errorf("loopback cable %s - %s on one node (ignored by routing)", f.PortName(l.A), f.PortName(l.B))})
		}
		if a.Width != b.Width {
			ws = append(ws, Problem{l.A.Node, int(l.A.Port), fmt.Errorf("width mismatch on cable %s (%s) - %s (%s)", f.PortName(l.A), a.Width, f.PortName(l.B), b.Width)})
		}
		if a.Speed != b.Speed {
			ws = append(ws, Problem{l.A.Node, int(l.A.Port), fmt.Errorf("speed mismatch on cable %s (%s) - %s (%s)", f.PortName(l.A), a.Speed, f.PortName(l.B), b.Speed)})
		}
	}
	return ws
}
