package ibnetdiscover

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Combined sentinels of the link checks.
var (
	errOneSided  = fmt.Errorf("%w: %w", ErrLink, fabric.ErrAsymmetric)
	errTwoPeers  = fmt.Errorf("%w: %w", ErrLink, fabric.ErrCabledTwice)
	errPeerRange = fmt.Errorf("%w: %w", ErrLink, fabric.ErrPortRange)
	errPeerGUID  = fmt.Errorf("%w: %w", ErrLink, fabric.ErrGUID)
	errPeerKind  = fmt.Errorf("%w: %w", ErrLink, fabric.ErrKind)
)

// link checks every port line against the line of the port it names and
// connects the cables whose two descriptions agree.
func (p *parser) link() ErrorList {
	var errs ErrorList
	nodes := p.b.Len()
	for i := 0; i < nodes; i++ {
		id := fabric.NodeID(i)
		n := p.b.Node(id)
		base := int(p.portBase[i])
		for port := 1; port < len(n.Ports); port++ {
			c := &p.claims[base+port]
			if c.line == 0 {
				continue
			}
			if e := p.checkClaim(id, port, c); e != nil {
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// checkClaim checks the claim of port `port` of node id; when the cable is
// confirmed from the far end it connects it (once, from the lower end).
func (p *parser) checkClaim(id fabric.NodeID, port int, c *claim) *Error {
	n := p.b.Node(id)
	line := int(c.line)
	peerName := lazyID{c.peerKind, c.peerGUID}
	peerID, ok := p.b.Lookup(c.peerGUID)
	if !ok {
		if p.unknownPeers == nil {
			p.unknownPeers = map[uint64]struct{}{}
		}
		p.unknownPeers[c.peerGUID] = struct{}{}
		if p.firstUnknown == "" || line < p.firstUnknownLine {
			p.firstUnknown = fmt.Sprintf("line %d, port %d to %s[%d]", line, port, peerName, c.peerPort)
			p.firstUnknownLine = line
		}
		return p.errAt(line, ErrUnknownNode, "port %d is cabled to %s[%d], which has no node block, expected a node block for %s",
			port, peerName, c.peerPort, peerName)
	}
	pn := p.b.Node(peerID)
	if pn.Kind != c.peerKind {
		return p.errAt(line, errPeerKind, "port %d is cabled to %s, but line %d describes GUID 0x%x as a %s, expected the id prefix %c-",
			port, peerName, p.nodeLine[peerID], c.peerGUID, pn.Kind, pn.Kind.Prefix())
	}
	if int(c.peerPort) > pn.NumPorts() {
		return p.errAt(line, errPeerRange, "port %d is cabled to port %d of %s, which has %d ports (line %d), expected 1..%d",
			port, c.peerPort, peerName, pn.NumPorts(), p.nodeLine[peerID], pn.NumPorts())
	}
	me := fabric.PortRef{Node: id, Port: uint8(port)}
	peer := fabric.PortRef{Node: peerID, Port: c.peerPort}
	if peer == me {
		return p.errAt(line, errTwoPeers, "port %d is cabled to itself, expected another port", port)
	}
	back := &p.claims[int(p.portBase[peerID])+int(c.peerPort)]
	myName := lazyID{n.Kind, n.GUID}
	if back.line == 0 {
		p.oneSided = append(p.oneSided, oneSided{line: line, port: port, far: peer, farName: peerName})
		return p.errAt(line, errOneSided,
			"port %d is cabled to %s[%d], but that node (line %d) lists no cable on port %d, expected the cable listed from both ends",
			port, peerName, c.peerPort, p.nodeLine[peerID], c.peerPort)
	}
	if back.peerGUID != n.GUID || back.peerKind != n.Kind || int(back.peerPort) != port {
		if back.peerGUID == n.GUID {
			return p.errAt(line, errTwoPeers,
				"port %d is cabled to %s[%d], but line %d says %s[%d] is cabled to port %d of %s, expected port %d",
				port, peerName, c.peerPort, back.line, peerName, c.peerPort, back.peerPort, myName, port)
		}
		return p.errAt(line, errTwoPeers,
			"port %d is cabled to %s[%d], but line %d says %s[%d] is cabled to %c-%016x[%d], expected %s[%d]",
			port, peerName, c.peerPort, back.line, peerName, c.peerPort,
			back.peerKind.Prefix(), back.peerGUID, back.peerPort, myName, port)
	}
	// The cable is confirmed; check what this line says about the far end.
	pp := &pn.Ports[c.peerPort]
	wantLID, wantGUID, from := pp.LID, pp.GUID, int(back.line)
	if pn.Kind == fabric.Switch {
		wantLID, wantGUID, from = pn.Ports[0].LID, pn.Ports[0].GUID, int(p.nodeLine[peerID])
	}
	if c.peerLID != wantLID {
		return p.errAt(line, ErrLink, "peer lid %d on port %d, expected %d (the LID of %s as line %d gives it)",
			c.peerLID, port, wantLID, peerName, from)
	}
	if c.hasPeerGUID && c.peerPortGUID != wantGUID {
		return p.errAt(line, errPeerGUID, "peer port GUID %x on port %d, expected %x (the GUID of %s[%d] as line %d gives it)",
			c.peerPortGUID, port, wantGUID, peerName, c.peerPort, from)
	}
	if c.peerExt != 0 {
		switch {
		case pp.Ext == 0:
			pp.Ext = int(c.peerExt)
		case pp.Ext != int(c.peerExt):
			return p.errAt(line, ErrLink, "peer [ext %d] on port %d, expected [ext %d] (as line %d gives it)",
				c.peerExt, port, pp.Ext, back.line)
		}
	}
	if id < peerID || (id == peerID && port < int(c.peerPort)) {
		if err := p.b.Connect(me, peer); err != nil {
			return p.errAt(line, fmt.Errorf("%w: %w", ErrLink, err), "%s", err.Error())
		}
	}
	return nil
}

// lazyID prints a node id ("S-0002c9…") only when a message needs it.
type lazyID struct {
	kind fabric.NodeKind
	guid uint64
}

func (l lazyID) String() string { return fabric.NodeIDString(l.kind, l.guid) }
