package ibnetdiscover

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// maxLineLen bounds one line; real lines are under 300 bytes.
const maxLineLen = 1 << 20

// Result is what Parse read: the fabric, the warnings, and where in the
// file each node and port was described (to place later findings).
type Result struct {
	Fabric   *fabric.Fabric
	Warnings []Warning // ordered by line
	File     string    // the name given to Parse

	nodeLine []int32 // per node: line of its node line
	portBase []int32 // per node: index of its port 0 in portLine
	portLine []int32 // per port: line describing it, 0 if not listed
}

// NodeLine returns the line of the node's "Switch"/"Ca"/"Rt" line.
func (r *Result) NodeLine(id fabric.NodeID) int {
	if id < 0 || int(id) >= len(r.nodeLine) {
		return 0
	}
	return int(r.nodeLine[id])
}

// PortLine returns the line that describes the port: its port line, or the
// node line for switch port 0; 0 when the dump does not list the port.
func (r *Result) PortLine(p fabric.PortRef) int {
	if p.Node < 0 || int(p.Node) >= len(r.portBase) {
		return 0
	}
	if p.Port == 0 {
		return r.NodeLine(p.Node)
	}
	i, end := int(r.portBase[p.Node])+int(p.Port), len(r.portLine)
	if int(p.Node)+1 < len(r.portBase) {
		end = int(r.portBase[p.Node+1])
	}
	if i >= end {
		return 0
	}
	return int(r.portLine[i])
}

// Line returns the line a fabric.Problem refers to: the port's line, or
// the node line for node-level problems and ports the dump does not list.
func (r *Result) Line(p fabric.Problem) int {
	if p.Port > 0 {
		if l := r.PortLine(fabric.PortRef{Node: p.Node, Port: uint8(p.Port)}); l > 0 {
			return l
		}
	}
	return r.NodeLine(p.Node)
}

// ParseFile parses the dump at path (see Parse), read with ReadDumpFile
// within DefaultMaxBytes: a named pipe is read as it comes (nuesm info
// <(ibnetdiscover)); a directory or a device is refused with an error
// wrapping ErrNotRegular.
func ParseFile(path string) (*Result, error) {
	b, err := ReadDumpFile(path, DefaultMaxBytes)
	if err != nil {
		return nil, err
	}
	return Parse(bytes.NewReader(b), path)
}

// Parse reads an ibnetdiscover topology dump (FORMATS.md §1); name is used
// in messages. It returns the fabric, in file order of the node blocks,
// with every cable connected once both of its descriptions agree, and the
// warnings. LIDs are the dump's (0 where it has none): Parse never assigns
// LIDs; call Result.Fabric.AssignLIDs for that.
//
// The first syntax error stops parsing and is returned as an *Error;
// link and validation problems are collected, and more than one is
// returned as an ErrorList ordered by line. Parse never panics on input.
//
// What is a warning and what is an error: a line that fits no part of the
// grammar is skipped with a Skipped warning when it appears outside a node
// block (before the first block or after the blank line that ends one) or
// when it clearly is stderr output of the diagnostics (it starts with
// "ibwarn:", "ibnetdiscover:", a C source position like
// "src/query_smp.c:195;", …); any other unfitting line inside a node block
// is an error, as is every line that starts like a grammar element (a
// "[" port line, "vendid=", "Switch "…) but does not parse. Width and
// speed mismatches between the two ends of a cable and loopback cables are
// warnings (from fabric.Warnings); every disagreement between the two
// descriptions of a cable is an error (ErrLink, ErrUnknownNode).
func Parse(r io.Reader, name string) (*Result, error) {
	p := newParser(name)
	if err := p.read(r); err != nil {
		return nil, err
	}
	return p.finish()
}

// claim is what one port line says about the far end of its cable
// (fields ordered to keep it at 32 bytes).
type claim struct {
	line         int32 // 0: the port has no line
	peerExt      int32
	peerGUID     uint64 // node GUID
	peerPortGUID uint64
	peerLID      uint16
	peerPort     uint8
	peerKind     fabric.NodeKind
	hasPeerGUID  bool
}

// block collects the id lines of a node block until its node line.
type block struct {
	start    int // line of the first id line; 0 = none pending
	vendLine int
	devLine  int
	sysLine  int
	guidLine int
	chasLine int
	vendID   uint32
	devID    uint32
	sysGUID  uint64
	guidKind fabric.NodeKind
	guid     uint64
	portGUID uint64
	hasPort  bool
	annot    fabric.Annot
}

type parser struct {
	file     string
	line     int
	b        *fabric.Builder
	claims   []claim
	portBase []int32
	nodeLine []int32
	cur      fabric.NodeID // node whose port lines may follow
	inBlock  bool          // between a block's first line and the next blank line
	preamble bool          // no structural line seen yet
	group    string
	chassis  []fabric.Chassis
	header   []string
	blk      block
	warns    []Warning

	lastText     int                 // last line that is not blank
	prevText     int                 // the one before it
	unterminated bool                // the last line has no newline
	unknownPeers map[uint64]struct{} // GUIDs cabled to without a node block

	firstUnknown     string // the first cable to unknownPeers, for messages
	firstUnknownLine int
	oneSided         []oneSided // cables whose far end lists none
	tailCut          bool       // they all lead past the last listed port of the last block
}

func newParser(name string) *parser {
	return &parser{file: name, b: fabric.NewBuilder(), cur: fabric.NoNode, preamble: true}
}

// errAt builds an *Error at a line; sentinel may combine several with %w.
func (p *parser) errAt(line int, sentinel error, format string, args ...any) *Error {
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// synf builds a syntax error at the current line.
func (p *parser) synf(format string, args ...any) *Error {
	return p.errAt(p.line, ErrSyntax, format, args...)
}

func (p *parser) warn(kind WarningKind, line, other int, msg string) {
	p.warns = append(p.warns, Warning{Kind: kind, File: p.file, Line: line, Other: other, Msg: msg})
}

// read runs the line loop.
func (p *parser) read(r io.Reader) error {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 4096 {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	if err := p.sniff(br); err != nil {
		return err
	}
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
				if len(long) > maxLineLen {
					return p.errAt(p.line+1, ErrSyntax, "line longer than %d bytes, expected a line of an ibnetdiscover dump", maxLineLen)
				}
			}
			line = long
		}
		if len(line) > 0 {
			p.line++
			p.unterminated = line[len(line)-1] != '\n'
			if err := p.binaryAt(line); err != nil {
				return err
			}
			if e := p.handle(line); e != nil {
				return p.cutShort(e)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// err names the file already (an *os.PathError, as a rule)
			if p.line == 0 {
				return fmt.Errorf("ibnetdiscover: %w", err)
			}
			return fmt.Errorf("ibnetdiscover: %s:%d: %w", p.file, p.line, err)
		}
	}
}

// handle dispatches one raw line (with its newline).
func (p *parser) handle(raw []byte) error {
	t := trimSpace(raw)
	if len(t) == 0 {
		return p.blank()
	}
	p.prevText, p.lastText = p.lastText, p.line
	switch t[0] {
	case '#':
		return p.comment(t)
	case '[':
		return p.portLine(t)
	}
	if key, val, ok := idKey(t); ok {
		return p.idLine(key, val)
	}
	if kind, n, ok := nodeKeyword(t); ok {
		return p.nodeHeader(kind, n, t)
	}
	switch {
	case bytes.HasPrefix(t, []byte("Chassis")) && len(t) > 8 && isSpace(t[7]):
		return p.chassisHeading(t)
	case string(t) == "Non-Chassis Nodes":
		return p.setGroup(string(t))
	case bytes.HasPrefix(t, []byte("Hostname:")):
		return p.hostname(t)
	}
	return p.unknown(t)
}

// blank ends the current block.
func (p *parser) blank() error {
	if p.blk.start != 0 {
		return p.errAt(p.blk.start, ErrSyntax,
			"node block has no node line, expected a Switch, Ca or Rt line before the blank line at line %d", p.line)
	}
	p.inBlock = false
	return nil
}

// groupHeadings are the comment lines of a grouped dump (-g) that start a
// section; the section name is what follows "# ".
var groupHeadings = [...]string{"# Spine Nodes", "# Line Nodes", "# Chassis Switches", "# Chassis CAs"}

func (p *parser) comment(t []byte) error {
	for _, g := range groupHeadings {
		if string(t) == g {
			return p.setGroup(g[2:])
		}
	}
	if p.blk.start != 0 && bytes.HasPrefix(t, []byte("# Chassis ")) && len(t) > 10 && isDigit(t[10]) {
		// the chassis comment on a line of its own (sysimgguid was 0)
		if p.blk.chasLine != 0 {
			return p.synf("second chassis comment in one node block (first at line %d), expected one", p.blk.chasLine)
		}
		p.blk.chasLine = p.line
		return p.chassisComment(t[1:])
	}
	if p.preamble {
		p.header = append(p.header, string(t[1:]))
	}
	return nil
}

// structural ends the preamble and the current node's port list.
func (p *parser) structural(what string) error {
	p.preamble = false
	if p.blk.start != 0 {
		return p.errAt(p.blk.start, ErrSyntax,
			"node block has no node line, expected a Switch, Ca or Rt line before the %s at line %d", what, p.line)
	}
	p.cur = fabric.NoNode
	p.inBlock = false
	return nil
}

func (p *parser) setGroup(g string) error {
	if err := p.structural("grouping heading"); err != nil {
		return err
	}
	p.group = g
	return nil
}

// chassisHeading parses "Chassis N" with an optional " (guid 0x…)".
func (p *parser) chassisHeading(t []byte) error {
	if err := p.structural("Chassis heading"); err != nil {
		return err
	}
	s := scan{b: t, i: len("Chassis")}
	s.ws()
	num, ok := s.dec(1<<31 - 1)
	if !ok {
		return p.synf("chassis number %s, expected a decimal number", quoteMax(s.token()))
	}
	c := fabric.Chassis{Num: int(num)}
	if s.ws() > 0 {
		if !s.lit("(guid 0x") {
			return p.synf("%s after the chassis number, expected (guid 0x<hex>)", quoteMax(s.rest()))
		}
		g, ok := s.hex()
		if !ok || !s.byte(')') || !s.eof() {
			return p.synf("chassis GUID %s, expected (guid 0x<hex>)", quoteMax(s.rest()))
		}
		c.GUID = g
	}
	if !s.eof() {
		return p.synf("%s after the chassis number, expected (guid 0x<hex>)", quoteMax(s.rest()))
	}
	p.chassis = append(p.chassis, c)
	return nil
}

func (p *parser) hostname(t []byte) error {
	if err := p.structural("Hostname line"); err != nil {
		return err
	}
	if len(p.chassis) == 0 {
		return p.synf("Hostname line before any Chassis heading, expected it right after one")
	}
	p.chassis[len(p.chassis)-1].Hostname = string(trimSpace(t[len("Hostname:"):]))
	return nil
}

// unknown handles a line that fits no part of the grammar.
func (p *parser) unknown(t []byte) error {
	if looksLikeNodeLine(t) {
		s := scan{b: t}
		return p.synf("unknown node kind %s, expected Switch, Ca, Hca or Rt", quoteMax(s.token()))
	}
	if !looksLikeDiagnostic(t) && p.inBlock {
		return p.synf("unrecognised line %s in a node block, expected a port line \"[<port>]…\" or a blank line", quoteMax(t))
	}
	p.warn(Skipped, p.line, 0, "skipped line that is not ibnetdiscover output: "+quoteMax(t))
	return nil
}

// idKeys are the "key=" lines that start a node block.
var idKeys = [...]string{"vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid="}

func idKey(t []byte) (key string, val []byte, ok bool) {
	for _, k := range idKeys {
		if bytes.HasPrefix(t, []byte(k)) {
			return k, t[len(k):], true
		}
	}
	return "", nil, false
}

// nodeKeyword recognises "Switch", "Ca", "Hca" and "Rt" followed by a blank.
func nodeKeyword(t []byte) (fabric.NodeKind, int, bool) {
	for _, kw := range [...]struct {
		s string
		k fabric.NodeKind
	}{{"Switch", fabric.Switch}, {"Ca", fabric.CA}, {"Hca", fabric.CA}, {"Rt", fabric.Router}} {
		if len(t) > len(kw.s) && isSpace(t[len(kw.s)]) && string(t[:len(kw.s)]) == kw.s {
			return kw.k, len(kw.s), true
		}
	}
	return 0, 0, false
}

// finish checks the end of input, connects the cables and validates.
func (p *parser) finish() (*Result, error) {
	if p.blk.start != 0 {
		return nil, p.errAt(p.lastText, errTruncatedSyntax,
			"truncated at line %d: the file ends inside the node block of line %d, expected its Switch, Ca or Rt line", p.lastText, p.blk.start)
	}
	if p.b.Len() == 0 {
		what := "no node blocks"
		if p.line == 0 {
			what = "empty input, no node blocks"
		}
		return nil, p.errAt(max(p.line, 1), errNoDump, "not an ibnetdiscover dump: %s, expected at least one Switch, Ca or Rt block", what)
	}
	errs := p.link()
	p.tailCut = p.cutLastBlock()
	f := p.b.Fabric()
	f.Chassis = p.chassis
	f.Header = p.header
	res := &Result{Fabric: f, File: p.file, nodeLine: p.nodeLine, portBase: p.portBase}
	res.portLine = make([]int32, len(p.claims))
	for i := range p.claims {
		res.portLine[i] = p.claims[i].line
	}
	p.claims = nil
	if err := f.Validate(); err != nil {
		var ve *fabric.ValidationError
		if errors.As(err, &ve) {
			for _, prob := range ve.Problems {
				errs = append(errs, p.errAt(res.Line(prob), prob, "%s", withExpected(prob.Err)))
			}
		} else {
			errs = append(errs, p.errAt(1, err, "%s", err.Error()))
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		if e := p.truncatedLinks(errs); e != nil {
			return nil, e
		}
		if len(errs) == 1 {
			return nil, errs[0]
		}
		return nil, errs
	}
	for _, w := range f.Warnings() {
		other := 0
		if w.Port > 0 && int(w.Node) < len(f.Nodes) && w.Port < len(f.Nodes[w.Node].Ports) {
			if peer := f.Nodes[w.Node].Ports[w.Port].Peer; peer.Valid() {
				other = res.PortLine(peer)
			}
		}
		p.warn(LinkWarning, res.Line(w), other, w.Err.Error())
	}
	sortWarnings(p.warns)
	res.Warnings = p.warns
	return res, nil
}

// expectations completes fabric.Validate's messages to the
// "<what>, expected <what>" form.
var expectations = []struct {
	sentinel error
	want     string
}{
	{fabric.ErrDuplicateLID, "each LID on one port only"},
	{fabric.ErrDuplicateGUID, "unique node and port GUIDs"},
	{fabric.ErrLIDRange, "LIDs within 0x0001-0xBFFF"},
	{fabric.ErrLMC, "a base LID that is a multiple of 2^LMC"},
	{fabric.ErrAsymmetric, "every cable described from both ends"},
	{fabric.ErrCabledTwice, "one cable per port"},
	{fabric.ErrPortRange, "ports within the node's port count"},
}

func withExpected(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "expected") {
		return msg
	}
	for _, e := range expectations {
		if errors.Is(err, e.sentinel) {
			return msg + ", expected " + e.want
		}
	}
	return msg
}

func sortErrors(errs []*Error) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
}

func sortWarnings(ws []Warning) {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Line < ws[j].Line })
}
