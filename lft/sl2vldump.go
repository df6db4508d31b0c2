package lft

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

const (
	sl2vlHeading   = "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15"
	sl2vlSeparator = "#--------------------------------------------------------"
)

// sl2vlPort is one port block of opensm-sl2vl.dump.
type sl2vlPort struct {
	guid uint64
	sw   int32 // switch index, -1 for CA/router ports
	node fabric.NodeID
	lid  uint16
}

func sl2vlPorts(g *fabric.Graph) []sl2vlPort {
	ps := make([]sl2vlPort, 0, g.NumSwitches()+len(g.Terms))
	for s, id := range g.Switches {
		p := &g.F.Nodes[id].Ports[0]
		ps = append(ps, sl2vlPort{guid: p.GUID, sw: int32(s), node: id, lid: p.LID})
	}
	for _, t := range g.Terms {
		ps = append(ps, sl2vlPort{guid: g.F.Nodes[t.Node].Ports[t.Port].GUID, sw: -1, node: t.Node, lid: t.LID})
	}
	osmOrder(ps, func(p sl2vlPort) uint64 { return p.guid })
	return ps
}

// WriteOpenSMSL2VL writes r's SL2VL mapping in the format of OpenSM's
// opensm-sl2vl.dump (OpenSM 3.3 dump_sl2vl_tbl), one block per port that
// OpenSM keeps in its port table, in OpenSM's order (by byte-reversed port
// GUID):
//
//	<type> 0x<portguid016>, base LID <lid>, "<desc>"
//	#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
//	#--------------------------------------------------------
//	<in>  <out> : <vl of SL 0> … <vl of SL 15>     ("%-3d %-3d :" then " %-2d" × 16)
//	#--------------------------------------------------------
//	(blank line)
//
// A switch is one block (its port 0) with a row for every cabled output
// port and every input port 0..NumPorts (input 0 = the switch's own
// packets), its VLs from r.SL2VL.VL; like OpenSM, uncabled output ports
// and output port 0 have no rows. Every cabled CA and router port is a
// block too, as in OpenSM's dump, with the single row "0 0" holding
// SL2VL.Default (what a CA uses to inject). It fails when r does not fit g
// or SL2VL.Switch is neither nil nor one entry per switch (ErrUnwritable).
func WriteOpenSMSL2VL(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	if n := len(r.SL2VL.Switch); n != 0 && n != len(r.Switches) {
		return fmt.Errorf("lft: SL2VL has tables for %d switches, expected none or %d: %w", n, len(r.Switches), ErrUnwritable)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	line := make([]byte, 0, 128)
	row := func(in, out int, vl func(sl uint8) uint8) {
		line = line[:0]
		line = fmt.Appendf(line, "%-3d %-3d :", in, out)
		for sl := uint8(0); sl < NumSLs; sl++ {
			line = fmt.Appendf(line, " %-2d", vl(sl))
		}
		line = append(line, '\n')
		bw.Write(line)
	}
	for _, p := range sl2vlPorts(g) {
		n := &g.F.Nodes[p.node]
		fmt.Fprintf(bw, "%s 0x%016x, base LID %d, \"%s\"\n%s\n%s\n",
			nodeTypeString(n.Kind), p.guid, p.lid, cleanDesc(n.Desc), sl2vlHeading, sl2vlSeparator)
		if p.sw >= 0 {
			np := n.NumPorts()
			for out := 1; out <= np; out++ {
				if !n.Ports[out].Cabled() {
					continue
				}
				for in := 0; in <= np; in++ {
					row(in, out, func(sl uint8) uint8 { return r.SL2VL.VL(p.sw, uint8(in), uint8(out), sl) })
				}
			}
		} else {
			row(0, 0, func(sl uint8) uint8 { return r.SL2VL.Default[sl] })
		}
		fmt.Fprintf(bw, "%s\n\n", sl2vlSeparator)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write OpenSM SL2VL dump: %w", err)
	}
	return nil
}

// WriteOpenSMSL2VLFile writes the dump of WriteOpenSMSL2VL to path
// atomically, mode 0644.
func WriteOpenSMSL2VLFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteOpenSMSL2VL(w, g, r) }, 0o644)
}

// ReadOpenSMSL2VLFile reads the SL2VL dump at path (see ReadOpenSMSL2VL).
func ReadOpenSMSL2VLFile(path string, g *fabric.Graph) (SL2VL, error) {
	return readPath(path, func(r io.Reader) (SL2VL, error) { return ReadOpenSMSL2VL(r, path, g) })
}

// ReadOpenSMSL2VL reads an opensm-sl2vl.dump (OpenSM's or ours) for the
// ports of g. It returns the mapping in canonical form: Default is the map
// of the CA/router ports (all of which must agree, as SL2VL has one map
// for them), or, without CA blocks, the most common switch row; a switch
// whose rows all equal Default gets no table of its own (Switch[s] nil;
// Switch is nil when no switch has one); rows the dump does not list, and
// rows of output port 0 or of uncabled output ports (no packet leaves
// there), take Default. So the result equals the written mapping when
// that mapping is canonical.
//
// Ports are matched by port GUID; an unknown GUID is ErrUnknownPort, a
// port number beyond the switch's port count ErrPortRange, a row given
// twice ErrDuplicate, a block without its closing separator line
// ErrTruncated. Ports the dump does not list are not an error.
func ReadOpenSMSL2VL(r io.Reader, name string, g *fabric.Graph) (SL2VL, error) {
	p := newSL2VLReader(name, g)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		p.line++
		if err := p.readLine(bytes.TrimSpace(sc.Bytes())); err != nil {
			return SL2VL{}, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return SL2VL{}, parseErr(name, p.line+1, ErrSyntax, "line longer than 1 MiB, expected a dump line")
		}
		return SL2VL{}, fmt.Errorf("lft: read %s: %w", name, err)
	}
	if err := p.endBlock(); err != nil {
		return SL2VL{}, err
	}
	return p.result()
}

// sl2vlReader is the state of ReadOpenSMSL2VL between lines.
type sl2vlReader struct {
	name string
	g    *fabric.Graph
	sw   map[uint64]int32 // switch port-0 GUID -> switch
	term map[uint64]bool  // cabled CA and router port GUIDs
	tabs []*sl2vlTab      // per switch, its rows; nil: no block

	line, blockLine       int
	open, closed, caBlock bool      // in a block; past its closing line; a CA/router block
	cur                   *sl2vlTab // the switch block's table
	seps, rows            int       // separator lines and rows of the block
	caMap                 *[NumSLs]uint8
	caLine                int
	order                 [][NumSLs]uint8 // distinct switch rows in order seen
	count                 map[[NumSLs]uint8]int
}

// sl2vlTab holds the rows of one switch, by in*(np+1)+out.
type sl2vlTab struct {
	np   int
	vl   []uint8
	set  []bool
	line []int32
}

func newSL2VLReader(name string, g *fabric.Graph) *sl2vlReader {
	p := &sl2vlReader{name: name, g: g, sw: make(map[uint64]int32, g.NumSwitches()),
		term: make(map[uint64]bool, len(g.Terms)), tabs: make([]*sl2vlTab, g.NumSwitches()),
		count: map[[NumSLs]uint8]int{}}
	for s, id := range g.Switches {
		p.sw[g.F.Nodes[id].Ports[0].GUID] = int32(s)
	}
	for _, t := range g.Terms {
		p.term[g.F.Nodes[t.Node].Ports[t.Port].GUID] = true
	}
	return p
}

func (p *sl2vlReader) errf(sentinel error, format string, args ...any) error {
	return parseErr(p.name, p.line, sentinel, format, args...)
}

// endBlock refuses a block left without its closing separator line.
func (p *sl2vlReader) endBlock() error {
	if p.open && !p.closed {
		return parseErr(p.name, p.line, ErrTruncated, "block of line %d has no closing %q line, expected one after its rows", p.blockLine, sl2vlSeparator)
	}
	return nil
}

// readLine takes one trimmed line: blank, separator, comment, block
// header or row.
func (p *sl2vlReader) readLine(t []byte) error {
	switch {
	case len(t) == 0:
		return nil
	case bytes.HasPrefix(t, []byte("#-")):
		if !p.open {
			return p.errf(ErrSyntax, "separator outside a port block, expected a block header first")
		}
		p.seps++
		if p.seps == 2 {
			p.closed = true
		}
		return nil
	case t[0] == '#':
		return nil
	}
	if k, guid, ok := sl2vlHeader(t); ok {
		return p.header(k, guid)
	}
	if !p.open || p.closed {
		return p.errf(ErrSyntax, "unexpected line %q, expected a port block header (\"<type> 0x<guid>, base LID <n>, \\\"<desc>\\\"\")", clip(t))
	}
	return p.row(t)
}

// header opens the block of the port with guid, of a node of kind k.
func (p *sl2vlReader) header(k fabric.NodeKind, guid uint64) error {
	if err := p.endBlock(); err != nil {
		return err
	}
	p.open, p.closed, p.seps, p.rows, p.blockLine, p.cur, p.caBlock = true, false, 0, 0, p.line, nil, false
	if k != fabric.Switch {
		if !p.term[guid] {
			return p.errf(ErrUnknownPort, "%s port GUID 0x%016x is not a cabled CA or router port of the fabric, expected one",
				nodeTypeString(k), guid)
		}
		p.caBlock = true
		return nil
	}
	s, ok := p.sw[guid]
	if !ok {
		return p.errf(ErrUnknownPort, "switch port GUID 0x%016x is not in the fabric, expected a switch of the fabric", guid)
	}
	if p.tabs[s] != nil {
		return p.errf(ErrDuplicate, "second block for switch 0x%016x, expected one", guid)
	}
	np := p.g.F.Nodes[p.g.Switches[s]].NumPorts()
	n := (np + 1) * (np + 1)
	p.cur = &sl2vlTab{np: np, vl: make([]uint8, n*NumSLs), set: make([]bool, n), line: make([]int32, n)}
	p.tabs[s] = p.cur
	return nil
}

// row takes one "<in> <out> : <16 VLs>" row of the open block.
func (p *sl2vlReader) row(t []byte) error {
	in, out, m, err := sl2vlRow(t)
	if err != nil {
		return p.errf(ErrSyntax, "%v", err)
	}
	p.rows++
	if p.caBlock {
		if in != 0 || out != 0 || p.rows > 1 {
			return p.errf(ErrSyntax, "row %d %d in a CA/router block, expected the single row 0 0", in, out)
		}
		if p.caMap == nil {
			p.caMap, p.caLine = &m, p.line
		} else if *p.caMap != m {
			return p.errf(ErrSyntax, "CA/router map %v differs from %v (line %d), expected one map for all CA and router ports", m, *p.caMap, p.caLine)
		}
		return nil
	}
	cur := p.cur
	if in > cur.np || out > cur.np {
		return p.errf(ErrPortRange, "row %d %d on a switch with %d ports, expected ports 0..%d", in, out, cur.np, cur.np)
	}
	k := in*(cur.np+1) + out
	if cur.set[k] {
		return p.errf(ErrDuplicate, "row %d %d given twice, expected once (first at line %d)", in, out, cur.line[k])
	}
	cur.set[k], cur.line[k] = true, int32(p.line)
	copy(cur.vl[k*NumSLs:], m[:])
	if p.count[m] == 0 {
		p.order = append(p.order, m)
	}
	p.count[m]++
	return nil
}

// result is the canonical mapping of the rows read (see ReadOpenSMSL2VL).
func (p *sl2vlReader) result() (SL2VL, error) {
	var m SL2VL
	switch {
	case p.caMap != nil:
		m.Default = *p.caMap
	case len(p.order) > 0:
		best := p.order[0]
		for _, o := range p.order[1:] {
			if p.count[o] > p.count[best] {
				best = o
			}
		}
		m.Default = best
	default:
		return SL2VL{}, parseErr(p.name, 0, ErrSyntax, "no SL2VL rows, expected at least one port block")
	}
	for s, t := range p.tabs {
		if t != nil {
			m.own(p.g, int32(s), t.vl, t.set)
		}
	}
	return m, nil
}

// sl2vlHeader parses `<type> 0x<guid>, base LID <n>, "<desc>"`.
func sl2vlHeader(t []byte) (fabric.NodeKind, uint64, bool) {
	var k fabric.NodeKind
	for _, c := range []fabric.NodeKind{fabric.Switch, fabric.CA, fabric.Router} {
		if p := nodeTypeString(c) + " 0x"; bytes.HasPrefix(t, []byte(p)) {
			k, t = c, t[len(p):]
			break
		}
	}
	if k == 0 {
		return 0, 0, false
	}
	guid, n := parseHex(t, 16)
	if n == 0 || !bytes.HasPrefix(t[n:], []byte(", base LID ")) {
		return 0, 0, false
	}
	return k, guid, true
}

// sl2vlRow parses `<in> <out> : <16 VLs>`.
func sl2vlRow(t []byte) (in, out int, m [NumSLs]uint8, err error) {
	f := bytes.Fields(t)
	if len(f) != 3+NumSLs || string(f[2]) != ":" {
		return 0, 0, m, fmt.Errorf("bad row %q, expected \"<in> <out> : <16 VLs>\"", clip(t))
	}
	in, e1 := strconv.Atoi(string(f[0]))
	out, e2 := strconv.Atoi(string(f[1]))
	if e1 != nil || e2 != nil || in < 0 || out < 0 || in > fabric.MaxPorts || out > fabric.MaxPorts {
		return 0, 0, m, fmt.Errorf("bad ports %q %q, expected decimal port numbers 0..%d", f[0], f[1], fabric.MaxPorts)
	}
	for i := 0; i < NumSLs; i++ {
		v, err := strconv.Atoi(string(f[3+i]))
		if err != nil || v < 0 || v > 15 {
			return 0, 0, m, fmt.Errorf("bad VL %q for SL %d, expected 0..15", f[3+i], i)
		}
		m[i] = uint8(v)
	}
	return in, out, m, nil
}
