package ibnetdiscover

import (
	"bytes"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

const wantWidthSpeed = "expected <width><speed> such as 4xQDR (width 1x 2x 4x 8x 12x ??, speed SDR DDR QDR FDR10 FDR EDR HDR NDR XDR ???)"

// portLine parses a port line of the current node:
//
//	switch: [p][ext N]\t"T-guid"[rp][ext N](rguid) \t\t# "rdesc" lid L 4xQDR[ info]
//	CA/Rt:  [p](guid) \t"T-guid"[rp][ext N] (rguid) \t\t# lid L lmc M "rdesc" lid L 4xQDR[ info]
//
// It fills the port's own fields and records what the line says about the
// far end; the link pass checks that against the far end's own line.
func (p *parser) portLine(t []byte) error {
	p.preamble = false
	if p.blk.start != 0 {
		return p.synf("port line before the node line of the block at line %d, expected a Switch, Ca or Rt line first", p.blk.start)
	}
	if p.cur == fabric.NoNode {
		return p.synf("port line outside a node block, expected it right after a Switch, Ca or Rt line and its port lines")
	}
	p.inBlock = true
	n := p.b.Node(p.cur)
	s := scan{b: t, i: 1}
	pn, c, err := p.portSlot(n, &s, t)
	if err != nil {
		return err
	}
	pt := &n.Ports[pn]
	ext, err := p.ext(&s)
	if err != nil {
		return err
	}
	if n.Kind != fabric.Switch {
		g, err := p.ownPortGUID(&s, pn)
		if err != nil {
			return err
		}
		pt.GUID = g
	}
	if s.ws() == 0 {
		return p.synf("%s after the port number, expected a blank and the peer's node id", quoteMax(s.token()))
	}
	cl, err := p.peerEnd(&s)
	if err != nil {
		return err
	}
	if !s.byte('#') {
		return p.synf("%s after the peer port, expected # and the peer's description", quoteMax(s.rest()))
	}
	s.ws()
	if n.Kind != fabric.Switch {
		if err := p.ownLIDLMC(&s, pt); err != nil {
			return err
		}
	}
	plid, err := p.linkTail(&s, pt, ext)
	if err != nil {
		return err
	}
	cl.line, cl.peerLID = int32(p.line), plid
	*c = cl
	return nil
}

// portSlot reads "[<port>]" and returns the port's claim slot; a port out
// of the node's range or listed twice is an error.
func (p *parser) portSlot(n *fabric.Node, s *scan, t []byte) (uint64, *claim, error) {
	pn, ok := s.dec(255)
	if !ok || !s.byte(']') {
		return 0, nil, p.synf("port number %s, expected [<decimal port>]", quoteMax(t[:min(len(t), 8)]))
	}
	if pn == 0 {
		if n.Kind == fabric.Switch {
			return 0, nil, p.errAt(p.line, fabric.ErrPortRange, "port 0 is the switch's management port and is never cabled, expected 1..%d", n.NumPorts())
		}
		return 0, nil, p.errAt(p.line, fabric.ErrPortRange, "port 0 on a %s, expected 1..%d", n.Kind, n.NumPorts())
	}
	if int(pn) > n.NumPorts() {
		return 0, nil, p.errAt(p.line, fabric.ErrPortRange, "port %d beyond the %d ports of the node line at line %d, expected 1..%d",
			pn, n.NumPorts(), p.nodeLine[p.cur], n.NumPorts())
	}
	c := &p.claims[int(p.portBase[p.cur])+int(pn)]
	if c.line != 0 {
		return 0, nil, p.errAt(p.line, fmt.Errorf("%w: %w", ErrLink, fabric.ErrCabledTwice),
			"port %d listed twice (first at line %d), expected one line per port", pn, c.line)
	}
	return pn, c, nil
}

// ownPortGUID reads the "(<port GUID>)" a CA or router port line carries
// after its port number.
func (p *parser) ownPortGUID(s *scan, pn uint64) (uint64, error) {
	if !s.byte('(') {
		return 0, p.synf("%s after [%d], expected [%d](<hex port GUID>)", quoteMax(s.token()), pn, pn)
	}
	g, ok := s.hex()
	if !ok || !s.byte(')') {
		return 0, p.synf("port GUID %s, expected (<hex port GUID>)", quoteMax(s.token()))
	}
	return g, nil
}

// peerEnd reads the far end up to the '#': "T-guid"[rp][ext N] (rguid),
// into a claim without line and peer LID.
func (p *parser) peerEnd(s *scan) (claim, error) {
	pk, pg, ok := s.nodeID()
	if !ok {
		return claim{}, p.synf("peer node id %s, expected \"S-<hex GUID>\", \"H-<hex GUID>\" or \"R-<hex GUID>\"", quoteMax(s.token()))
	}
	if !s.byte('[') {
		return claim{}, p.synf("%s after the peer node id, expected [<peer port>]", quoteMax(s.token()))
	}
	rp, ok := s.dec(255)
	if !ok || !s.byte(']') {
		return claim{}, p.synf("peer port %s, expected [<decimal port>]", quoteMax(s.token()))
	}
	if rp == 0 {
		return claim{}, p.errAt(p.line, fmt.Errorf("%w: %w", ErrLink, fabric.ErrPortRange), "peer port 0, expected 1..%d", fabric.MaxPorts)
	}
	pext, err := p.ext(s)
	if err != nil {
		return claim{}, err
	}
	s.ws()
	var rguid uint64
	hasRGUID := s.byte('(')
	if hasRGUID {
		g, ok := s.hex()
		if !ok || !s.byte(')') {
			return claim{}, p.synf("peer port GUID %s, expected (<hex port GUID>)", quoteMax(s.token()))
		}
		rguid = g
		s.ws()
	}
	return claim{
		peerPort: uint8(rp), peerKind: pk,
		hasPeerGUID: hasRGUID, peerExt: int32(pext),
		peerGUID: pg, peerPortGUID: rguid,
	}, nil
}

// ownLIDLMC reads "lid <lid> lmc <lmc>" that a CA or router port line
// carries after the '#', and sets them on the port.
func (p *parser) ownLIDLMC(s *scan, pt *fabric.Port) error {
	if !s.lit("lid") || s.ws() == 0 {
		return p.synf("%s after #, expected # lid <lid> lmc <lmc> \"<peer description>\" lid <peer lid> <width><speed>", quoteMax(s.rest()))
	}
	lid, e := p.lid(s, "port lid")
	if e != nil {
		return e
	}
	if s.ws() == 0 || !s.lit("lmc") || s.ws() == 0 {
		return p.synf("%s after the port lid, expected lmc <lmc>", quoteMax(s.rest()))
	}
	lmc, e := p.lmc(s)
	if e != nil {
		return e
	}
	s.ws()
	pt.LID, pt.LMC = lid, lmc
	return nil
}

// linkTail reads `"<peer description>" lid <peer lid> <width><speed>[ info]`,
// sets the port's link fields and returns the peer LID.
func (p *parser) linkTail(s *scan, pt *fabric.Port, ext int) (uint16, error) {
	if !s.byte('"') {
		return 0, p.synf("peer description %s without quotes, expected \"<peer description>\" lid <peer lid> <width><speed>", quoteMax(s.rest()))
	}
	tail, ok := peerTail(s.rest())
	if !ok {
		return 0, p.synf("no peer lid after the peer description, expected \"<peer description>\" lid <peer lid> <width><speed>")
	}
	ts := scan{b: tail}
	ts.ws()
	plid, e := p.lid(&ts, "peer lid")
	if e != nil {
		return 0, e
	}
	if ts.ws() == 0 {
		return 0, p.synf("no width and speed after the peer lid, %s", wantWidthSpeed)
	}
	tok := ts.token()
	w, sp, ok := parseWidthSpeed(tok)
	if !ok {
		return 0, p.synf("width and speed %s, %s", quoteMax(tok), wantWidthSpeed)
	}
	ts.i += len(tok)
	ts.ws()
	pt.Width, pt.Speed, pt.Ext = w, sp, ext
	if info := ts.rest(); len(info) > 0 {
		pt.Info = string(info)
	}
	return plid, nil
}

// ext reads an optional "[ext N]".
func (p *parser) ext(s *scan) (int, error) {
	if !s.lit("[ext") {
		return 0, nil
	}
	s.ws()
	v, ok := s.dec(1<<31 - 1)
	if !ok || !s.byte(']') {
		return 0, p.synf("external port %s, expected [ext <decimal port>]", quoteMax(s.token()))
	}
	return int(v), nil
}

// peerTail finds the `" lid <lid> <width><speed>[ info]` that ends a port
// line and returns what follows `" lid`. The last match wins, so the peer
// description may itself contain `" lid `.
func peerTail(rest []byte) ([]byte, bool) {
	end := len(rest)
	for {
		j := bytes.LastIndex(rest[:end], []byte(`" lid`))
		if j < 0 {
			return nil, false
		}
		if k := j + len(`" lid`); k < len(rest) && isSpace(rest[k]) {
			return rest[k:], true
		}
		end = j
	}
}
