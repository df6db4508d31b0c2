package lft

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
)

// ReadOptions tunes ReadLFTs. The zero value is strict: every switch of
// the fabric must have exactly one table, unknown switches are an error,
// and LIDs are remapped by port GUID.
type ReadOptions struct {
	// SkipUnknownSwitches ignores tables of switches the fabric does not
	// have (OpenSM's file engine skips them) instead of failing with
	// ErrUnknownSwitch.
	SkipUnknownSwitches bool
	// AllowMissingSwitches leaves the tables of switches the input does
	// not mention all NoPort instead of failing with ErrMissingSwitch
	// (for the output of ibroute on a few switches).
	AllowMissingSwitches bool
	// NoRemap takes LIDs literally. By default an entry whose comment
	// names a port GUID ("portguid 0x…") is moved into that port's LID
	// range when the LID lies outside it, as OpenSM's file engine does,
	// so that a dump taken under another LID assignment still routes to
	// the same ports: a LID outside the port's range becomes base LID +
	// (LID mod 2^LMC). Unknown port GUIDs keep their LID.
	NoRemap bool
	// SkipLIDsBeyond ignores entries for LIDs beyond the fabric's highest
	// LID instead of failing with ErrLIDRange: switches read back from a
	// live fabric keep entries for LIDs that left it until they are
	// rewritten, and no packet can be addressed to such a LID.
	SkipLIDsBeyond bool
}

// ReadOpenSMLFTs reads an OpenSM LFT dump (opensm-lfts.dump, or anything
// OpenSM's file routing engine loads, including ibroute/dump_lfts output)
// into a routing bound to g, with the strict zero ReadOptions. name is used
// in error messages. See ReadLFTs.
func ReadOpenSMLFTs(r io.Reader, name string, g *fabric.Graph) (*Routing, error) {
	return ReadLFTs(r, name, g, ReadOptions{})
}

// ReadOpenSMLFTsFile reads the OpenSM LFT dump at path (see ReadOpenSMLFTs).
func ReadOpenSMLFTsFile(path string, g *fabric.Graph) (*Routing, error) {
	return readPath(path, func(r io.Reader) (*Routing, error) { return ReadOpenSMLFTs(r, path, g) })
}

// readPath opens path, hands it to read and closes it; every file reader
// of the package opens its file here, so an open error reads the same.
func readPath[T any](path string, read func(r io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("lft: %w", err)
	}
	defer f.Close()
	return read(f)
}

// ReadIBRoute reads the output of ibroute for one or more switches
// (concatenated), or of dump_lfts / dump_fts (a sequence of ibroute
// outputs, with or without -n and -a), into a routing bound to g, with the
// strict zero ReadOptions; pass ReadOptions{AllowMissingSwitches: true} to
// ReadLFTs to read the tables of only some switches. See ReadLFTs.
func ReadIBRoute(r io.Reader, name string, g *fabric.Graph) (*Routing, error) {
	rt, err := ReadLFTs(r, name, g, ReadOptions{})
	if rt != nil {
		rt.Engine = "ibroute"
	}
	return rt, err
}

// ReadLFTs reads forwarding tables in the formats OpenSM's file engine
// loads: OpenSM's opensm-lfts.dump and ibroute / dump_lfts output. The
// result is bound to g (New(g, "file")); SLs and SL2VL keep New's
// defaults, as these formats hold none.
//
// Grammar (after leading blanks):
//
//	Unicast lids [<lo>-<hi>] of switch <anything> guid 0x<hex><blank><anything>
//	0x<hex lid> <decimal port>[<blank><comment>]
//	<n> [valid ]lids dumped
//
// <lo> and <hi> are decimal or 0x-hex. A table runs from its header to its
// "lids dumped" line, where n must be the number of entries (ibroute) or
// the top LID <hi> (OpenSM). Skipped: blank lines, lines starting with '#',
// ibroute's column headings ("Lid  Out   Destination", "Port     Info"),
// and the chatter of the tools ("ibwarn: …", dump_lfts' "*** WARNING ***"
// notice). Anything else is an error.
//
// Tables are matched to switches by node GUID. Port 255 means "no route"
// (ibroute -a prints it); any other port beyond the switch's port count
// is ErrPortRange. An entry's comment may name the destination port
// (" portguid 0x<hex>"), which remaps the LID (see ReadOptions.NoRemap).
// LIDs beyond g's highest LID are ErrLIDRange unless their entry is 255; a
// LID given twice in one table, or a switch twice, is ErrDuplicate; input
// that ends inside a table is ErrTruncated; multicast tables are
// ErrSyntax. Errors are *ParseError values ("lft: <file>:<line>: <what>,
// expected <what>").
func ReadLFTs(r io.Reader, name string, g *fabric.Graph, opt ReadOptions) (*Routing, error) {
	p := &lftParser{
		name: name, g: g, opt: opt, x: newPortIndex(g),
		rt:      New(g, "file"),
		swLine:  make([]int, g.NumSwitches()),
		seenTab: make([]int32, g.MaxLID()+1),
		seenLn:  make([]int32, g.MaxLID()+1),
		sw:      -1,
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		p.line++
		if err := p.handle(sc.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, parseErr(name, p.line+1, ErrSyntax, "line longer than 1 MiB, expected a table line")
		}
		return nil, fmt.Errorf("lft: read %s: %w", name, err)
	}
	if p.inTable {
		return nil, parseErr(name, p.line, ErrTruncated,
			"input ends inside the table that starts at line %d, expected a closing \"<n> lids dumped\" line", p.tabLine)
	}
	if len(p.unknown) > 0 {
		return nil, parseErr(name, p.unknownLine, ErrUnknownSwitch,
			"switch %s is not in the fabric, expected only switches of the fabric", listed(p.unknown))
	}
	if !opt.AllowMissingSwitches {
		var missing []string
		for s, ln := range p.swLine {
			if ln == 0 {
				missing = append(missing, fmt.Sprintf("0x%016x (%s)", p.rt.Switches[s], g.SwitchName(int32(s))))
			}
		}
		if len(missing) > 0 {
			return nil, parseErr(name, 0, ErrMissingSwitch,
				"no table for %d of the fabric's %d switches: %s, expected one table per switch",
				len(missing), g.NumSwitches(), listed(missing))
		}
	}
	return p.rt, nil
}

type lftParser struct {
	name string
	g    *fabric.Graph
	opt  ReadOptions
	x    *portIndex
	rt   *Routing
	line int

	swLine      []int    // switch -> line of its table header (0 = none yet)
	unknown     []string // unknown switch GUIDs ("0x… at line N")
	unknownLine int

	// current table
	inTable  bool
	tabLine  int
	tabNo    int32
	sw       int32 // -1: table of an unknown/skipped switch
	lo, hi   int
	entries  int
	nports   int
	seenTab  []int32 // LID -> table number that set it
	seenLn   []int32 // LID -> line that set it
	swGUID   uint64
	headings bool // column headings allowed (no entry yet)
}

func (p *lftParser) errf(sentinel error, format string, args ...any) error {
	return parseErr(p.name, p.line, sentinel, format, args...)
}

func (p *lftParser) handle(raw []byte) error {
	t := bytes.TrimRight(raw, "\r")
	t = bytes.TrimLeft(t, " \t")
	switch {
	case len(t) == 0 || t[0] == '#':
		return nil
	case bytes.HasPrefix(t, []byte("0x")):
		return p.entry(t)
	case bytes.HasPrefix(t, []byte("Unicast lids")):
		return p.header(t)
	case bytes.HasPrefix(t, []byte("Multicast mlids")):
		return p.errf(ErrSyntax, "multicast forwarding table, expected unicast LFTs (\"Unicast lids …\")")
	case bytes.HasPrefix(t, []byte("ibwarn:")), bytes.HasPrefix(t, []byte("*** WARNING ***")):
		return nil
	case p.inTable && p.headings && (bytes.HasPrefix(t, []byte("Lid ")) || bytes.HasPrefix(t, []byte("Port "))):
		return nil
	}
	if n, ok := footer(t); ok {
		return p.footer(n)
	}
	return p.errf(ErrSyntax, "unexpected line %q, expected a \"Unicast lids\" header, an entry \"0x<lid> <port>\" or \"<n> lids dumped\"", clip(t))
}

// footer recognises "<n> lids dumped" and "<n> valid lids dumped".
func footer(t []byte) (int, bool) {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return 0, false
	}
	rest := bytes.TrimRight(t[i:], " \t")
	if !bytes.Equal(rest, []byte(" lids dumped")) && !bytes.Equal(rest, []byte(" valid lids dumped")) {
		return 0, false
	}
	n, _ := strconv.Atoi(string(t[:i]))
	return n, true
}

func (p *lftParser) header(t []byte) error {
	if p.inTable {
		return p.errf(ErrTruncated, "new table while the table of line %d is still open, expected \"<n> lids dumped\" first", p.tabLine)
	}
	const want = "expected \"Unicast lids [<lo>-<hi>] of switch … guid 0x<hex> …\""
	rest := t[len("Unicast lids"):]
	if !bytes.HasPrefix(rest, []byte(" [")) {
		return p.errf(ErrSyntax, "bad table header %q, %s", clip(t), want)
	}
	rest = rest[2:]
	end := bytes.IndexByte(rest, ']')
	dash := bytes.IndexByte(rest, '-')
	if end < 0 || dash < 0 || dash > end {
		return p.errf(ErrSyntax, "bad LID range in table header %q, %s", clip(t), want)
	}
	lo, ok1 := parseNum(rest[:dash])
	hi, ok2 := parseNum(rest[dash+1 : end])
	if !ok1 || !ok2 || lo > hi {
		return p.errf(ErrSyntax, "bad LID range [%s] in table header, expected [<lo>-<hi>] with lo <= hi", rest[:end])
	}
	gi := bytes.Index(t, []byte(" guid 0x"))
	if gi < 0 {
		return p.errf(ErrSyntax, "table header without switch GUID: %q, %s", clip(t), want)
	}
	h := t[gi+len(" guid 0x"):]
	guid, n := parseHex(h, 16)
	if n == 0 || n >= len(h) || (h[n] != ' ' && h[n] != '\t') {
		return p.errf(ErrSyntax, "bad switch GUID %q in table header, expected 0x<1-16 hex digits> followed by a blank", clip(h))
	}
	p.inTable, p.tabLine, p.lo, p.hi, p.entries, p.headings = true, p.line, lo, hi, 0, true
	p.tabNo++
	p.swGUID = guid
	s, ok := p.x.swByID[guid]
	if !ok {
		p.sw = -1
		if !p.opt.SkipUnknownSwitches {
			if len(p.unknown) == 0 {
				p.unknownLine = p.line
			}
			p.unknown = append(p.unknown, fmt.Sprintf("0x%016x (line %d)", guid, p.line))
		}
		return nil
	}
	if first := p.swLine[s]; first != 0 {
		return p.errf(ErrDuplicate, "second table for switch 0x%016x (%s), expected one (the first is at line %d)",
			guid, p.g.SwitchName(s), first)
	}
	p.swLine[s] = p.line
	p.sw = s
	p.nports = p.g.F.Nodes[p.g.Switches[s]].NumPorts()
	return nil
}

func (p *lftParser) entry(t []byte) error {
	if !p.inTable {
		return p.errf(ErrSyntax, "entry %q outside a table, expected a \"Unicast lids\" header before it", clip(t))
	}
	p.headings = false
	lid, n := parseHex(t[2:], 5)
	i := 2 + n
	if n == 0 || lid > 0xFFFF || (i < len(t) && t[i] != ' ' && t[i] != '\t') {
		return p.errf(ErrSyntax, "bad LID %q, expected 0x<hex LID 0..0xffff>", clip(firstField(t)))
	}
	if i >= len(t) {
		return p.errf(ErrSyntax, "entry for LID 0x%04x has no port, expected \"0x<lid> <port>\"", lid)
	}
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	if i == len(t) {
		return p.errf(ErrSyntax, "entry for LID 0x%04x has no port, expected \"0x<lid> <port>\"", lid)
	}
	j := i
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j == i || j-i > 3 || (j < len(t) && t[j] != ' ' && t[j] != '\t') {
		return p.errf(ErrSyntax, "bad port %q for LID 0x%04x, expected a decimal port number", clip(firstField(t[i:])), lid)
	}
	port, _ := strconv.Atoi(string(t[i:j]))
	p.entries++
	if int(lid) < p.lo || int(lid) > p.hi {
		return p.errf(ErrLIDRange, "LID 0x%04x outside the table's range, expected %d..%d", lid, p.lo, p.hi)
	}
	if p.sw < 0 {
		return nil
	}
	if port > p.nports && port != int(NoPort) {
		return p.errf(ErrPortRange, "LID 0x%04x routed to port %d of switch 0x%016x (%s), expected 0..%d (or 255 for no route)",
			lid, port, p.swGUID, p.g.SwitchName(p.sw), p.nports)
	}
	dst := int(lid)
	if gi := bytes.Index(t[j:], []byte(" portguid 0x")); gi >= 0 && !p.opt.NoRemap {
		h := t[j+gi+len(" portguid 0x"):]
		guid, n := parseHex(h, 16)
		if n == 0 || (n < len(h) && isHex(h[n])) {
			return p.errf(ErrSyntax, "bad port GUID %q for LID 0x%04x, expected 0x<1-16 hex digits>", clip(firstField(h)), lid)
		}
		dst = p.x.remap(dst, guid)
	}
	if dst >= p.rt.Stride {
		if port == int(NoPort) || p.opt.SkipLIDsBeyond {
			return nil
		}
		return p.errf(ErrLIDRange, "LID 0x%04x%s beyond the fabric's highest LID, expected at most 0x%04x",
			dst, remapNote(dst, int(lid)), p.rt.Stride-1)
	}
	if p.seenTab[dst] == p.tabNo {
		return p.errf(ErrDuplicate, "LID 0x%04x%s given twice for switch 0x%016x, expected once (first at line %d)",
			dst, remapNote(dst, int(lid)), p.swGUID, p.seenLn[dst])
	}
	p.seenTab[dst], p.seenLn[dst] = p.tabNo, int32(p.line)
	p.rt.SetPort(p.sw, dst, uint8(port))
	return nil
}

func (p *lftParser) footer(n int) error {
	if !p.inTable {
		return p.errf(ErrSyntax, "\"%d lids dumped\" outside a table, expected a \"Unicast lids\" header before it", n)
	}
	if n != p.entries && n != p.hi {
		return p.errf(ErrSyntax, "table closes with \"%d lids dumped\", expected %d (its entries) or %d (its top LID); lines lost?",
			n, p.entries, p.hi)
	}
	p.inTable = false
	return nil
}

func remapNote(dst, lid int) string {
	if dst == lid {
		return ""
	}
	return fmt.Sprintf(" (remapped by port GUID from 0x%04x)", lid)
}

// parseNum parses a decimal or 0x-hex number below 2^31.
func parseNum(b []byte) (int, bool) {
	if bytes.HasPrefix(b, []byte("0x")) {
		v, n := parseHex(b[2:], 7)
		return int(v), n > 0 && n == len(b)-2
	}
	v, err := strconv.ParseUint(string(b), 10, 31)
	return int(v), err == nil
}

// parseHex parses up to max leading hex digits of b; n is the number of
// digits used (0 if none). More than max digits leave n = 0.
func parseHex(b []byte, max int) (v uint64, n int) {
	for n < len(b) && isHex(b[n]) {
		if n == max {
			return 0, 0
		}
		v = v<<4 | uint64(hexVal(b[n]))
		n++
	}
	return v, n
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// firstField returns b up to the first blank.
func firstField(b []byte) []byte {
	if i := bytes.IndexAny(b, " \t"); i >= 0 {
		return b[:i]
	}
	return b
}

// clip shortens text quoted in error messages.
func clip(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
