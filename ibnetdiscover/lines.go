package ibnetdiscover

import (
	"bytes"

	"github.com/nuesm/nuesm/fabric"
)

// idLine handles vendid=, devid=, sysimgguid= and the GUID lines.
func (p *parser) idLine(key string, val []byte) error {
	p.preamble = false
	p.cur = fabric.NoNode // a new block starts: the previous node's port list is over
	if p.blk.start == 0 {
		p.blk = block{start: p.line}
	}
	p.inBlock = true
	s := scan{b: val}
	switch key {
	case "vendid=", "devid=":
		return p.vendDevLine(key, &s, val)
	case "sysimgguid=":
		return p.sysImageLine(key, &s, val)
	default: // switchguid=, caguid=, rtguid=
		return p.nodeGUIDLine(key, &s, val)
	}
}

// once records that the block's line of kind key stands at this line; a
// node block holds each id line at most once.
func (p *parser) once(key string, seen *int) error {
	if *seen != 0 {
		return p.synf("second %s line in one node block (first at line %d), expected one", key[:len(key)-1], *seen)
	}
	*seen = p.line
	return nil
}

// vendDevLine parses the 32-bit hex value of a vendid= or devid= line.
func (p *parser) vendDevLine(key string, s *scan, val []byte) error {
	b := &p.blk
	seen, dst := &b.vendLine, &b.vendID
	if key == "devid=" {
		seen, dst = &b.devLine, &b.devID
	}
	if err := p.once(key, seen); err != nil {
		return err
	}
	if !s.lit("0x") {
		return p.synf("%s%s, expected 0x<hex>", key, quoteMax(val))
	}
	v, ok := s.hex()
	if !ok || v > 0xffffffff || !s.eof() {
		return p.synf("%s%s, expected 0x<hex> of at most 32 bits", key, quoteMax(val))
	}
	*dst = uint32(v)
	return nil
}

// sysImageLine parses sysimgguid=0x<GUID> and its optional chassis comment.
func (p *parser) sysImageLine(key string, s *scan, val []byte) error {
	b := &p.blk
	if err := p.once(key, &b.sysLine); err != nil {
		return err
	}
	if !s.lit("0x") {
		return p.synf("sysimgguid=%s, expected 0x<hex GUID>", quoteMax(val))
	}
	g, ok := s.hex()
	if !ok {
		return p.synf("sysimgguid=%s, expected 0x<hex GUID>", quoteMax(val))
	}
	b.sysGUID = g
	if s.ws(); !s.eof() {
		if !s.lit("# Chassis ") {
			return p.synf("%s after sysimgguid, expected nothing or # Chassis <n> (<name>)", quoteMax(s.rest()))
		}
		if err := p.once(key, &b.chasLine); err != nil {
			return err
		}
		return p.chassisComment(s.b[s.i-len(" Chassis "):])
	}
	return nil
}

// nodeGUIDLine parses switchguid=, caguid= or rtguid=: the node GUID, a
// switch's optional (port GUID) and its optional # chassis slot.
func (p *parser) nodeGUIDLine(key string, s *scan, val []byte) error {
	b := &p.blk
	if err := p.once(key, &b.guidLine); err != nil {
		return err
	}
	switch key {
	case "switchguid=":
		b.guidKind = fabric.Switch
	case "caguid=":
		b.guidKind = fabric.CA
	default:
		b.guidKind = fabric.Router
	}
	if !s.lit("0x") {
		return p.synf("%s%s, expected 0x<hex GUID>", key, quoteMax(val))
	}
	g, ok := s.hex()
	if !ok {
		return p.synf("%s%s, expected 0x<hex GUID>", key, quoteMax(val))
	}
	b.guid = g
	if b.guidKind == fabric.Switch && s.byte('(') {
		pg, ok := s.hex()
		if !ok || !s.byte(')') {
			return p.synf("switch port GUID in %s, expected (<hex port GUID>)", quoteMax(val))
		}
		b.portGUID, b.hasPort = pg, true
	}
	s.ws()
	if b.guidKind == fabric.Switch && s.byte('#') {
		s.ws()
		b.annot.ChassisSlot = string(s.rest())
		return nil
	}
	if !s.eof() {
		return p.synf("%s after the GUID, expected the end of the line", quoteMax(s.rest()))
	}
	return nil
}

// chassisComment parses " Chassis N[ (name)][ slot S]" (after the '#').
func (p *parser) chassisComment(t []byte) error {
	s := scan{b: t}
	s.ws()
	if !s.lit("Chassis") || s.ws() == 0 {
		return p.synf("chassis comment %s, expected # Chassis <n> (<name>)", quoteMax(t))
	}
	num, ok := s.dec(1<<31 - 1)
	if !ok {
		return p.synf("chassis number %s, expected a decimal number", quoteMax(s.token()))
	}
	if !s.eof() && s.ws() == 0 {
		return p.synf("%s after the chassis number, expected a blank", quoteMax(s.rest()))
	}
	a := &p.blk.annot
	a.ChassisNum = int(num)
	r := trimSpace(s.rest())
	if i := bytes.LastIndex(r, []byte("slot ")); i >= 0 && (i == 0 || isSpace(r[i-1])) {
		ss := scan{b: r, i: i + len("slot ")}
		if n, ok := ss.dec(1<<31 - 1); ok && ss.eof() {
			a.XsigoSlot = int(n)
			r = trimSpace(r[:i])
		}
	}
	if len(r) > 0 {
		if len(r) < 2 || r[0] != '(' || r[len(r)-1] != ')' {
			return p.synf("chassis name %s, expected (<name>)", quoteMax(r))
		}
		a.ChassisName = string(r[1 : len(r)-1])
	}
	return nil
}

// nodeHeader parses `Switch\t36 "S-<guid>"\t\t# "<desc>" enhanced port 0 lid 1 lmc 0`
// and `Ca\t2 "H-<guid>"\t\t# "<desc>"` and adds the node.
func (p *parser) nodeHeader(kind fabric.NodeKind, kwLen int, t []byte) error {
	p.preamble = false
	h, err := p.parseNodeHeader(kind, kwLen, t)
	if err != nil {
		return err
	}
	if err := p.checkBlockGUID(kind, h.guid); err != nil {
		return err
	}
	return p.addNode(kind, h)
}

// nodeHead is what a node header line says.
type nodeHead struct {
	nports   uint64
	guid     uint64
	desc     []byte
	enhanced bool // switch: enhanced port 0
	scp      bool // CA: (scp) trailer
	lid      uint16
	lmc      uint8
}

// parseNodeHeader reads the port count, node id, description and trailer
// of a node header line without changing the fabric.
func (p *parser) parseNodeHeader(kind fabric.NodeKind, kwLen int, t []byte) (nodeHead, error) {
	var h nodeHead
	s := scan{b: t, i: kwLen}
	s.ws()
	nports, ok := s.dec(fabric.MaxPorts)
	if !ok || nports == 0 {
		return h, p.synf("port count %s, expected a number of ports 1..%d", quoteMax(s.token()), fabric.MaxPorts)
	}
	h.nports = nports
	if s.ws() == 0 {
		return h, p.synf("%s after the port count, expected a blank and the node id", quoteMax(s.rest()))
	}
	idKind, guid, ok := s.nodeID()
	if !ok {
		return h, p.synf("node id %s, expected \"%c-<hex GUID>\"", quoteMax(s.token()), kind.Prefix())
	}
	if idKind != kind {
		return h, p.synf("node id prefix %c- on a %s line, expected %c-", idKind.Prefix(), kind, kind.Prefix())
	}
	h.guid = guid
	s.ws()
	if !s.byte('#') {
		return h, p.synf("%s after the node id, expected # \"<node description>\"", quoteMax(s.rest()))
	}
	s.ws()
	if !s.byte('"') {
		return h, p.synf("node description %s without quotes, expected # \"<node description>\"", quoteMax(s.rest()))
	}
	rest := s.rest()
	q := bytes.LastIndexByte(rest, '"')
	if q < 0 {
		return h, p.synf("node description without closing quote, expected # \"<node description>\"")
	}
	desc, trailer := rest[:q], trimSpace(rest[q+1:])
	h.desc = desc
	if kind == fabric.Switch {
		if len(trailer) > 0 {
			var err error
			if h.enhanced, h.lid, h.lmc, err = p.switchTrailer(trailer); err != nil {
				return h, err
			}
		}
	} else if len(trailer) > 0 {
		if string(trailer) != "(scp)" {
			return h, p.synf("%s after the node description, expected nothing or (scp)", quoteMax(trailer))
		}
		h.scp = true
	}
	return h, nil
}

// checkBlockGUID holds the header to the block's GUID line, if any: same
// node kind, same GUID.
func (p *parser) checkBlockGUID(kind fabric.NodeKind, guid uint64) error {
	b := &p.blk
	if b.guidLine != 0 {
		if b.guidKind != kind {
			return p.synf("%s line after a %s GUID line (line %d), expected %sguid=", kind, b.guidKind, b.guidLine, guidKey(kind))
		}
		if b.guid != guid {
			return p.synf("node id %c-%016x differs from %sguid=0x%x at line %d, expected the same GUID",
				kind.Prefix(), guid, guidKey(kind), b.guid, b.guidLine)
		}
	}
	return nil
}

// addNode adds the node of a parsed header with its block's id lines and
// opens its port list.
func (p *parser) addNode(kind fabric.NodeKind, h nodeHead) error {
	b := &p.blk
	if old, dup := p.b.Lookup(h.guid); dup {
		return p.errAt(p.line, fabric.ErrDuplicateGUID, "node GUID 0x%016x already used by the node at line %d, expected unique node GUIDs",
			h.guid, p.nodeLine[old])
	}
	id, err := p.b.AddNode(kind, h.guid, int(h.nports), string(h.desc))
	if err != nil {
		return p.errAt(p.line, err, "%s", err.Error())
	}
	n := p.b.Node(id)
	n.VendorID, n.DeviceID, n.SysImageGUID = b.vendID, b.devID, b.sysGUID
	n.Annot = b.annot
	n.Annot.Group = p.group
	n.Annot.SCP = h.scp
	if kind == fabric.Switch {
		n.Enhanced = h.enhanced
		n.Ports[0].LID, n.Ports[0].LMC = h.lid, h.lmc
		if b.hasPort {
			n.Ports[0].GUID = b.portGUID
		}
	}
	p.portBase = append(p.portBase, int32(len(p.claims)))
	p.claims = append(p.claims, make([]claim, h.nports+1)...)
	p.nodeLine = append(p.nodeLine, int32(p.line))
	p.blk = block{}
	p.cur = id
	p.inBlock = true
	return nil
}

func guidKey(k fabric.NodeKind) string {
	switch k {
	case fabric.Switch:
		return "switch"
	case fabric.CA:
		return "ca"
	}
	return "rt"
}

// switchTrailer parses "(base|enhanced) port 0 lid <lid> lmc <lmc>".
func (p *parser) switchTrailer(t []byte) (enhanced bool, lid uint16, lmc uint8, err error) {
	const want = "expected (base|enhanced) port 0 lid <lid> lmc <lmc>"
	s := scan{b: t}
	switch {
	case s.lit("enhanced"):
		enhanced = true
	case s.lit("base"):
	default:
		return false, 0, 0, p.synf("%s after the switch description, %s", quoteMax(t), want)
	}
	if s.ws() == 0 || !s.lit("port") || s.ws() == 0 || !s.lit("0") || s.ws() == 0 || !s.lit("lid") || s.ws() == 0 {
		return false, 0, 0, p.synf("switch port 0 details %s, %s", quoteMax(t), want)
	}
	l, e := p.lid(&s, "switch lid")
	if e != nil {
		return false, 0, 0, e
	}
	if s.ws() == 0 || !s.lit("lmc") || s.ws() == 0 {
		return false, 0, 0, p.synf("switch port 0 details %s, %s", quoteMax(t), want)
	}
	m, e := p.lmc(&s)
	if e != nil {
		return false, 0, 0, e
	}
	if !s.eof() {
		return false, 0, 0, p.synf("%s after the switch LMC, expected the end of the line", quoteMax(s.rest()))
	}
	return enhanced, l, m, nil
}

// lid reads a LID: 0 (unassigned) or a unicast LID up to 0xBFFF.
func (p *parser) lid(s *scan, what string) (uint16, *Error) {
	tok := s.token()
	v, ok := s.dec(0xffff)
	if !ok {
		return 0, p.synf("%s %s, expected a decimal LID", what, quoteMax(tok))
	}
	if v > fabric.MaxUnicastLID {
		return 0, p.errAt(p.line, fabric.ErrLIDRange, "%s %d is not a unicast LID, expected 0..%d", what, v, fabric.MaxUnicastLID)
	}
	return uint16(v), nil
}

// lmc reads an LMC 0..7.
func (p *parser) lmc(s *scan) (uint8, *Error) {
	tok := s.token()
	v, ok := s.dec(0xffff)
	if !ok {
		return 0, p.synf("lmc %s, expected a decimal LMC 0..7", quoteMax(tok))
	}
	if v > 7 {
		return 0, p.errAt(p.line, fabric.ErrLMC, "lmc %d, expected 0..7", v)
	}
	return uint8(v), nil
}
