package lft

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// SLFileVersion is the version of the SL file format WriteSL writes and
// ReadSL accepts.
const SLFileVersion = 1

// WriteSL writes r's SL assignment (r.SL and r.NumVLs) in nuesm's SL file
// format, a line-oriented text format (SLFORMAT.md in this directory
// holds the same grammar):
//
//	file    = { comment } header { comment | record } "end" NL { comment }
//	header  = "nuesm-sl 1" NL "vls " N NL "maxlid " M NL
//	record  = dest | "bysrc" NL | src | pair
//	dest    = "dest " range " " sl NL
//	src     = "src 0x" switch-guid " " range " " sl NL
//	pair    = "pair " slid " " dlid " " sl NL
//	range   = lid [ "-" lid ]
//	comment = blank line | "#" text NL
//
// Numbers are decimal except GUIDs (hex after "0x"); fields are separated
// by blanks. N is the number of VLs (1..15), M the highest LID the table
// covers (SLTable.ByDest has M+1 entries), sl 0..15.
//
//   - dest: the SL of paths to the LIDs of range (ByDest). LIDs no dest
//     line covers have SL 0; WriteSL writes only the runs of non-zero SL,
//     one line per maximal run of equal SLs.
//   - bysrc: the SL also depends on the source switch (SLTable.BySrc is
//     set); every switch's row starts as a copy of the dest SLs.
//   - src: the SL of paths from the terminals of the switch with node GUID
//     switch-guid to range, where it differs from dest; needs a bysrc line
//     before it. WriteSL writes only the differing runs.
//   - pair: the SL of the one path from LID slid to LID dlid (0..65535),
//     overriding the rest (SLTable.Pair).
//   - end: closes the file, so that a truncated file is detected.
//
// dest lines, and the src lines of each switch, must have increasing,
// non-overlapping ranges; a pair must not repeat. WriteSL writes dest,
// bysrc, src (switches in fabric order), pair lines (by slid, dlid) and
// end in that order, so equal tables give equal files. It fails with
// ErrUnwritable when the SL table's size does not match r's tables.
func WriteSL(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	t := &r.SL
	stride := len(t.ByDest)
	if stride != r.Stride || (t.BySrc != nil && len(t.BySrc) != stride*len(r.Switches)) {
		return fmt.Errorf("lft: SL table has %d destination and %d source entries, expected %d and 0 or %d: %w",
			stride, len(t.BySrc), r.Stride, r.Stride*len(r.Switches), ErrUnwritable)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "nuesm-sl %d\nvls %d\nmaxlid %d\n", SLFileVersion, r.NumVLs, stride-1)
	line := make([]byte, 0, 64)
	runs(t.ByDest, nil, func(lo, hi int, sl uint8) {
		line = appendRange(append(line[:0], "dest "...), lo, hi)
		line = strconv.AppendUint(append(line, ' '), uint64(sl), 10)
		bw.Write(append(line, '\n'))
	})
	if t.BySrc != nil {
		bw.WriteString("bysrc\n")
		for s := range r.Switches {
			runs(t.SrcRow(int32(s)), t.ByDest, func(lo, hi int, sl uint8) {
				line = appendHexPad(append(line[:0], "src 0x"...), r.Switches[s], 16)
				line = appendRange(append(line, ' '), lo, hi)
				line = strconv.AppendUint(append(line, ' '), uint64(sl), 10)
				bw.Write(append(line, '\n'))
			})
		}
	}
	keys := make([]uint32, 0, len(t.Pair))
	for k := range t.Pair {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(bw, "pair %d %d %d\n", k>>16, k&0xFFFF, t.Pair[k])
	}
	bw.WriteString("end\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write SL file: %w", err)
	}
	return nil
}

// runs calls emit for every maximal run of equal SLs in row, leaving out
// the entries equal to base (base nil: leaving out SL 0).
func runs(row, base []uint8, emit func(lo, hi int, sl uint8)) {
	skip := func(i int) bool {
		if base == nil {
			return row[i] == 0
		}
		return row[i] == base[i]
	}
	for i := 0; i < len(row); {
		if skip(i) {
			i++
			continue
		}
		j := i + 1
		for j < len(row) && row[j] == row[i] && !skip(j) {
			j++
		}
		emit(i, j-1, row[i])
		i = j
	}
}

func appendRange(b []byte, lo, hi int) []byte {
	b = strconv.AppendInt(b, int64(lo), 10)
	if hi != lo {
		b = strconv.AppendInt(append(b, '-'), int64(hi), 10)
	}
	return b
}

// WriteSLFile writes the SL file of WriteSL to path atomically, mode 0644.
func WriteSLFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteSL(w, g, r) }, 0o644)
}

// ReadSLFile reads the SL file at path (see ReadSL).
func ReadSLFile(path string, g *fabric.Graph) (SLTable, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return SLTable{}, 0, fmt.Errorf("lft: %w", err)
	}
	defer f.Close()
	return ReadSL(f, path, g)
}

// ReadSL reads an SL file (see WriteSL for the grammar) for fabric g and
// returns the SL table and the number of VLs. The table covers LIDs
// 0..maxlid, which must be at least g's highest LID; BySrc has a row per
// switch of g, and src lines must name switches of g. Reading what WriteSL
// wrote gives an equal table. Errors are *ParseError values wrapping
// ErrSyntax, ErrLIDRange, ErrUnknownSwitch or ErrDuplicate.
func ReadSL(r io.Reader, name string, g *fabric.Graph) (SLTable, int, error) {
	p := slParser{name: name, g: g, srcLast: map[int32]int{}, destLast: -1}
	if err := scanRecords(r, name, &p.line, func(t []byte) error { return p.record(bytes.Fields(t)) }); err != nil {
		return SLTable{}, 0, err
	}
	if p.hdr < 3 {
		return SLTable{}, 0, parseErr(name, p.line, ErrTruncated, "input ends in the header, expected %q", slHeader[p.hdr])
	}
	if !p.ended {
		return SLTable{}, 0, parseErr(name, p.line, ErrTruncated, "input ends without the closing \"end\" line, expected it after the last record")
	}
	t := p.t
	if p.bysrc {
		t.EnableBySrc(g.NumSwitches())
		for _, o := range p.src {
			row := t.SrcRow(o.sw)
			for l := o.lo; l <= o.hi; l++ {
				row[l] = o.sl
			}
		}
	}
	return t, p.vls, nil
}

// scanRecords calls record with every line of r that is neither blank
// nor a comment ('#'), trimmed, counting lines in *line; a line longer
// than 1 MiB is an error.
func scanRecords(r io.Reader, name string, line *int, record func(t []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		*line++
		t := bytes.TrimSpace(sc.Bytes())
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if err := record(t); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return parseErr(name, *line+1, ErrSyntax, "line longer than 1 MiB, expected a record")
		}
		return fmt.Errorf("lft: read %s: %w", name, err)
	}
	return nil
}

var slHeader = [3]string{"nuesm-sl 1", "vls <n>", "maxlid <m>"}

type srcRun struct {
	sw     int32
	lo, hi int
	sl     uint8
}

type slParser struct {
	name     string
	g        *fabric.Graph
	line     int
	hdr      int // header lines read
	vls      int
	t        SLTable
	bysrc    bool
	ended    bool
	destLast int
	srcLast  map[int32]int
	src      []srcRun
	pairLine map[uint32]int
	swByGUID map[uint64]int32
}

func (p *slParser) errf(sentinel error, format string, args ...any) error {
	return parseErr(p.name, p.line, sentinel, format, args...)
}

// record reads one line after the header.
func (p *slParser) record(f [][]byte) error {
	kw := string(f[0])
	if p.hdr < 3 {
		return p.header(kw, f)
	}
	if p.ended {
		return p.errf(ErrSyntax, "record %q after \"end\", expected nothing but comments", clip(f[0]))
	}
	switch kw {
	case "end":
		if len(f) != 1 {
			return p.errf(ErrSyntax, "end line with arguments, expected \"end\" alone")
		}
		p.ended = true
	case "dest":
		return p.destRecord(f)
	case "bysrc":
		if len(f) != 1 {
			return p.errf(ErrSyntax, "bysrc line with arguments, expected \"bysrc\" alone")
		}
		if p.bysrc {
			return p.errf(ErrDuplicate, "second bysrc line, expected one")
		}
		p.bysrc = true
	case "src":
		return p.srcRecord(f)
	case "pair":
		return p.pairRecord(f)
	default:
		return p.errf(ErrSyntax, "unknown record %q, expected dest, bysrc, src, pair or end", clip(f[0]))
	}
	return nil
}

// destRecord reads "dest <lid>[-<lid>] <sl>" into the by-destination row.
func (p *slParser) destRecord(f [][]byte) error {
	if len(f) != 3 {
		return p.errf(ErrSyntax, "dest line with %d fields, expected \"dest <lid>[-<lid>] <sl>\"", len(f))
	}
	lo, hi, err := p.lidRange(f[1], p.destLast, "dest")
	if err != nil {
		return err
	}
	sl, err := p.sl(f[2])
	if err != nil {
		return err
	}
	for l := lo; l <= hi; l++ {
		p.t.ByDest[l] = sl
	}
	p.destLast = hi
	return nil
}

// srcRecord reads "src 0x<switch guid> <lid>[-<lid>] <sl>"; the runs are
// applied once the file is read and the switch rows exist.
func (p *slParser) srcRecord(f [][]byte) error {
	if len(f) != 4 {
		return p.errf(ErrSyntax, "src line with %d fields, expected \"src 0x<switch guid> <lid>[-<lid>] <sl>\"", len(f))
	}
	if !p.bysrc {
		return p.errf(ErrSyntax, "src line before any bysrc line, expected \"bysrc\" first")
	}
	s, err := p.switchGUID(f[1])
	if err != nil {
		return err
	}
	last, ok := p.srcLast[s]
	if !ok {
		last = -1
	}
	lo, hi, err := p.lidRange(f[2], last, "src line of this switch")
	if err != nil {
		return err
	}
	sl, err := p.sl(f[3])
	if err != nil {
		return err
	}
	p.srcLast[s] = hi
	p.src = append(p.src, srcRun{s, lo, hi, sl})
	return nil
}

// pairRecord reads "pair <slid> <dlid> <sl>"; a pair given twice is an error.
func (p *slParser) pairRecord(f [][]byte) error {
	if len(f) != 4 {
		return p.errf(ErrSyntax, "pair line with %d fields, expected \"pair <slid> <dlid> <sl>\"", len(f))
	}
	slid, ok1 := decimal(f[1], 0xFFFF)
	dlid, ok2 := decimal(f[2], 0xFFFF)
	if !ok1 || !ok2 {
		return p.errf(ErrSyntax, "bad LIDs %q %q, expected decimal LIDs 0..65535", f[1], f[2])
	}
	sl, err := p.sl(f[3])
	if err != nil {
		return err
	}
	k := uint32(slid)<<16 | uint32(dlid)
	if p.t.Pair == nil {
		p.t.Pair = map[uint32]uint8{}
		p.pairLine = map[uint32]int{}
	}
	if first, dup := p.pairLine[k]; dup {
		return p.errf(ErrDuplicate, "pair %d %d given twice, expected once (first at line %d)", slid, dlid, first)
	}
	p.t.Pair[k], p.pairLine[k] = sl, p.line
	return nil
}

func (p *slParser) header(kw string, f [][]byte) error {
	want := slHeader[p.hdr]
	ok := len(f) == 2
	var v int
	switch p.hdr {
	case 0:
		ok = ok && kw == "nuesm-sl"
		if ok {
			var vok bool
			v, vok = decimal(f[1], 1<<20)
			if vok && v != SLFileVersion {
				return p.errf(ErrSyntax, "SL file version %d, expected %d", v, SLFileVersion)
			}
			ok = vok
		}
	case 1:
		ok = ok && kw == "vls"
		if ok {
			v, ok = decimal(f[1], MaxVLs)
			if ok && v < 1 {
				ok = false
			}
			p.vls = v
		}
		if !ok {
			want = fmt.Sprintf("vls <1..%d>", MaxVLs)
		}
	case 2:
		ok = ok && kw == "maxlid"
		if ok {
			v, ok = decimal(f[1], 0xFFFF)
		}
		if ok && v < p.g.MaxLID() {
			return p.errf(ErrLIDRange, "maxlid %d, expected at least the fabric's highest LID %d", v, p.g.MaxLID())
		}
		p.t.ByDest = make([]uint8, v+1)
	}
	if !ok {
		return p.errf(ErrSyntax, "bad header line %q, expected %q", clip(bytes.Join(f, []byte(" "))), want)
	}
	p.hdr++
	return nil
}

// lidRange parses "<lo>[-<hi>]" within the table and after last.
func (p *slParser) lidRange(b []byte, last int, what string) (int, int, error) {
	max := len(p.t.ByDest) - 1
	lo, hi := b, b
	if i := bytes.IndexByte(b, '-'); i >= 0 {
		lo, hi = b[:i], b[i+1:]
	}
	l, ok1 := decimal(lo, 0xFFFF)
	h, ok2 := decimal(hi, 0xFFFF)
	if !ok1 || !ok2 || l > h {
		return 0, 0, p.errf(ErrSyntax, "bad LID range %q, expected <lid> or <lo>-<hi> with lo <= hi", b)
	}
	if h > max {
		return 0, 0, p.errf(ErrLIDRange, "LID %d beyond maxlid, expected at most %d", h, max)
	}
	if l <= last {
		return 0, 0, p.errf(ErrSyntax, "LID range %q starts at or before the end (%d) of the previous %s, expected increasing ranges", b, last, what)
	}
	return l, h, nil
}

func (p *slParser) sl(b []byte) (uint8, error) {
	v, ok := decimal(b, NumSLs-1)
	if !ok {
		return 0, p.errf(ErrSyntax, "bad SL %q, expected 0..%d", b, NumSLs-1)
	}
	return uint8(v), nil
}

func (p *slParser) switchGUID(b []byte) (int32, error) {
	if !bytes.HasPrefix(b, []byte("0x")) {
		return 0, p.errf(ErrSyntax, "bad switch GUID %q, expected 0x<hex>", b)
	}
	guid, n := parseHex(b[2:], 16)
	if n == 0 || n != len(b)-2 {
		return 0, p.errf(ErrSyntax, "bad switch GUID %q, expected 0x<1-16 hex digits>", b)
	}
	if p.swByGUID == nil {
		p.swByGUID = make(map[uint64]int32, p.g.NumSwitches())
		for s, id := range p.g.Switches {
			p.swByGUID[p.g.F.Nodes[id].GUID] = int32(s)
		}
	}
	s, ok := p.swByGUID[guid]
	if !ok {
		return 0, p.errf(ErrUnknownSwitch, "switch 0x%016x is not in the fabric, expected a switch node GUID of the fabric", guid)
	}
	return s, nil
}

// decimal parses a plain decimal number 0..max.
func decimal(b []byte, max int) (int, bool) {
	if len(b) == 0 || len(b) > 7 {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, v <= max
}
