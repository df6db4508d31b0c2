package lft

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// sl2vlFileHeader opens nuesm's SL2VL file (SL2VLFORMAT.md).
const sl2vlFileHeader = "nuesm-sl2vl 1"

// WriteSL2VL writes r's SL2VL mapping in nuesm's SL2VL file format
// (SL2VLFORMAT.md in this directory):
//
//	file    = { comment } "nuesm-sl2vl 1" NL default { comment | switch | row } "end" NL { comment }
//	default = "default" 16×(" " vl) NL
//	switch  = "switch 0x" switch-guid " " nports NL
//	row     = in " " out " :" 16×(" " vl) NL
//
// It holds what WriteOpenSMSL2VL writes, without the rows equal to the
// default map: the map of CA and router ports (SL2VL.Default), then, per
// switch with rows of its own (fabric order), the rows of its cabled
// output ports (out ascending, then in) that differ from the default. A
// routing whose ports all use one map is three lines. It fails like
// WriteOpenSMSL2VL.
func WriteSL2VL(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	if n := len(r.SL2VL.Switch); n != 0 && n != len(r.Switches) {
		return fmt.Errorf("lft: SL2VL has tables for %d switches, expected none or %d: %w", n, len(r.Switches), ErrUnwritable)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	line := append(make([]byte, 0, 128), sl2vlFileHeader+"\ndefault"...)
	line = appendVLs(line, r.SL2VL.Default)
	bw.Write(line)
	for s, t := range r.SL2VL.Switch {
		if t == nil {
			continue
		}
		n := &g.F.Nodes[g.Switches[s]]
		np := n.NumPorts()
		head := false
		for out := 1; out <= np; out++ {
			if !n.Ports[out].Cabled() {
				continue
			}
			for in := 0; in <= np; in++ {
				var m [NumSLs]uint8
				for sl := range m {
					m[sl] = r.SL2VL.VL(int32(s), uint8(in), uint8(out), uint8(sl))
				}
				if m == r.SL2VL.Default {
					continue
				}
				if !head {
					head = true
					line = appendHexPad(append(line[:0], "switch 0x"...), n.GUID, 16)
					line = strconv.AppendInt(append(line, ' '), int64(np), 10)
					bw.Write(append(line, '\n'))
				}
				line = strconv.AppendInt(line[:0], int64(in), 10)
				line = strconv.AppendInt(append(line, ' '), int64(out), 10)
				bw.Write(appendVLs(append(line, " :"...), m))
			}
		}
	}
	bw.WriteString("end\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write SL2VL file: %w", err)
	}
	return nil
}

// appendVLs appends " v0 … v15" and a newline.
func appendVLs(b []byte, m [NumSLs]uint8) []byte {
	for _, v := range m {
		b = strconv.AppendUint(append(b, ' '), uint64(v), 10)
	}
	return append(b, '\n')
}

// WriteSL2VLFile writes the file of WriteSL2VL to path atomically, mode
// 0644.
func WriteSL2VLFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteSL2VL(w, g, r) }, 0o644)
}

// ReadSL2VLFile reads the SL2VL tables at path: nuesm's SL2VL file
// (ReadSL2VL) or an opensm-sl2vl.dump (ReadOpenSMSL2VL), told apart by the
// first line that is no comment.
func ReadSL2VLFile(path string, g *fabric.Graph) (SL2VL, error) {
	return readPath(path, func(r io.Reader) (SL2VL, error) {
		br := bufio.NewReaderSize(r, 64<<10)
		if isSL2VLFile(br) {
			return ReadSL2VL(br, path, g)
		}
		return ReadOpenSMSL2VL(br, path, g)
	})
}

// isSL2VLFile peeks at the first line that is neither blank nor a
// comment: nuesm's SL2VL file opens with its header there, an OpenSM
// dump with a port block.
func isSL2VLFile(br *bufio.Reader) bool {
	head, _ := br.Peek(64 << 10)
	for len(head) > 0 {
		ln := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			ln, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		t := bytes.TrimSpace(ln)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		return bytes.HasPrefix(t, []byte("nuesm-sl2vl"))
	}
	return false
}

// ReadSL2VL reads nuesm's SL2VL file (see WriteSL2VL) for the switches
// of g and returns the mapping in the canonical form ReadOpenSMSL2VL
// gives: a switch whose rows all equal the default gets no table of its
// own, rows the file does not list take the default, and so do rows of
// output port 0 and of uncabled output ports (WriteSL2VL writes none, as
// no packet leaves there; a cable gone since the file was written is no
// error). A switch GUID g
// lacks is ErrUnknownPort, a port count other than g's or a port beyond
// it ErrPortRange, a switch or a row given twice ErrDuplicate, a file
// without "end" ErrTruncated. Errors are *ParseError values.
func ReadSL2VL(in io.Reader, name string, g *fabric.Graph) (SL2VL, error) {
	p := &sl2vlParser{name: name, g: g, sw: make(map[uint64]int32, g.NumSwitches()),
		tabs: make([]*PortSL2VL, g.NumSwitches()), set: make([][]bool, g.NumSwitches())}
	for s, id := range g.Switches {
		p.sw[g.F.Nodes[id].GUID] = int32(s)
	}
	if err := scanRecords(in, name, &p.line, p.record); err != nil {
		return SL2VL{}, err
	}
	if !p.ended {
		return SL2VL{}, parseErr(name, p.line, ErrTruncated, "input ends without the closing \"end\" line, expected it after the last record")
	}
	m := SL2VL{Default: p.def}
	for s, t := range p.tabs {
		if t != nil {
			m.own(g, int32(s), t.VL, p.set[s])
		}
	}
	return m, nil
}

// own gives switch s the table vl (rows in port-pair order, set: the
// rows its input listed) in canonical form: rows not listed, and rows of
// output port 0 or of uncabled output ports (no packet leaves there),
// take the default; a table equal to the default everywhere is none.
func (m *SL2VL) own(g *fabric.Graph, s int32, vl []uint8, set []bool) {
	n := &g.F.Nodes[g.Switches[s]]
	np := n.NumPorts()
	own := false
	for k, listed := range set {
		row := vl[k*NumSLs : (k+1)*NumSLs]
		if out := k % (np + 1); !listed || out == 0 || !n.Ports[out].Cabled() {
			copy(row, m.Default[:])
		} else if !bytes.Equal(row, m.Default[:]) {
			own = true
		}
	}
	if !own {
		return
	}
	if m.Switch == nil {
		m.Switch = make([]*PortSL2VL, g.NumSwitches())
	}
	m.Switch[s] = &PortSL2VL{NPorts: np, VL: vl}
}

type sl2vlParser struct {
	name  string
	g     *fabric.Graph
	sw    map[uint64]int32
	line  int
	state int // 0: header next, 1: default next, 2: records
	ended bool
	def   [NumSLs]uint8
	cur   int32 // switch of the rows, -1 before the first switch line
	tabs  []*PortSL2VL
	set   [][]bool
	first []int32 // line of each row of the current switch
}

func (p *sl2vlParser) errf(sentinel error, format string, args ...any) error {
	return parseErr(p.name, p.line, sentinel, format, args...)
}

func (p *sl2vlParser) record(t []byte) error {
	f := bytes.Fields(t)
	switch {
	case p.ended:
		return p.errf(ErrSyntax, "%q after \"end\", expected only comments", clip(t))
	case p.state == 0:
		if string(t) != sl2vlFileHeader {
			return p.errf(ErrSyntax, "header %q, expected %q", clip(t), sl2vlFileHeader)
		}
		p.state, p.cur = 1, -1
		return nil
	case p.state == 1:
		if string(f[0]) != "default" || len(f) != 1+NumSLs {
			return p.errf(ErrSyntax, "%q, expected \"default\" and 16 VLs", clip(t))
		}
		for i := range p.def {
			v, err := strconv.Atoi(string(f[1+i]))
			if err != nil || v < 0 || v > 15 {
				return p.errf(ErrSyntax, "bad VL %q for SL %d, expected 0..15", f[1+i], i)
			}
			p.def[i] = uint8(v)
		}
		p.state = 2
		return nil
	case string(t) == "end":
		p.ended = true
		return nil
	case string(f[0]) == "switch":
		return p.switchLine(f)
	}
	return p.row(t)
}

func (p *sl2vlParser) switchLine(f [][]byte) error {
	if len(f) != 3 || !bytes.HasPrefix(f[1], []byte("0x")) {
		return p.errf(ErrSyntax, "%q, expected \"switch 0x<guid> <ports>\"", clip(bytes.Join(f, []byte(" "))))
	}
	guid, n := parseHex(f[1][2:], 16)
	np, err := strconv.Atoi(string(f[2]))
	if n == 0 || n != len(f[1])-2 || err != nil {
		return p.errf(ErrSyntax, "%q, expected \"switch 0x<1-16 hex digits> <decimal ports>\"", clip(bytes.Join(f, []byte(" "))))
	}
	s, ok := p.sw[guid]
	if !ok {
		return p.errf(ErrUnknownPort, "switch 0x%016x is not in the fabric, expected a switch of the fabric", guid)
	}
	if p.tabs[s] != nil {
		return p.errf(ErrDuplicate, "second block for switch 0x%016x, expected one", guid)
	}
	if have := p.g.F.Nodes[p.g.Switches[s]].NumPorts(); np != have {
		return p.errf(ErrPortRange, "switch 0x%016x with %d ports, expected %d (the fabric's)", guid, np, have)
	}
	k := (np + 1) * (np + 1)
	p.tabs[s] = &PortSL2VL{NPorts: np, VL: make([]uint8, k*NumSLs)}
	p.set[s] = make([]bool, k)
	p.first = make([]int32, k)
	p.cur = s
	return nil
}

func (p *sl2vlParser) row(t []byte) error {
	if p.cur < 0 {
		return p.errf(ErrSyntax, "%q, expected \"switch 0x<guid> <ports>\" before the first row", clip(t))
	}
	in, out, m, err := sl2vlRow(t)
	if err != nil {
		return p.errf(ErrSyntax, "%v", err)
	}
	tab := p.tabs[p.cur]
	if in > tab.NPorts || out > tab.NPorts {
		return p.errf(ErrPortRange, "row %d %d on a switch with %d ports, expected ports 0..%d", in, out, tab.NPorts, tab.NPorts)
	}
	k := in*(tab.NPorts+1) + out
	if p.set[p.cur][k] {
		return p.errf(ErrDuplicate, "row %d %d given twice, expected once (first at line %d)", in, out, p.first[k])
	}
	p.set[p.cur][k], p.first[k] = true, int32(p.line)
	copy(tab.VL[k*NumSLs:], m[:])
	return nil
}
