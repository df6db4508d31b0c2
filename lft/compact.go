package lft

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// compactMagic opens the decompressed content of a compact LFT file
// (LFTFORMAT.md); compactEnd closes it.
const (
	compactMagic = "nuesm-lft 1\n"
	compactEnd   = "end\n"
	// maxUnicastLID is the highest unicast LID InfiniBand has (0xBFFF).
	maxUnicastLID = 0xBFFF
	// compactLevel trades size for write time: the tables are written at
	// every publish and read at every reroute.
	compactLevel = gzip.BestSpeed
)

// gzipMagic opens every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// WriteCompactLFTs writes r's forwarding tables in nuesm's compact LFT
// format (LFTFORMAT.md): a gzip stream holding the switch GUIDs, the port
// GUID answering each LID and the out ports LID by LID. It holds what
// WriteOpenSMLFTs writes for OpenSM but the descriptions (the fabric has
// them), so ReadCompactLFTs gives the routing ReadLFTs gives from that
// dump: LID 0 and NoPort entries are not routes. It fails like
// WriteOpenSMLFTs (ErrUnwritable before writing anything). Equal tables
// on equal fabrics give equal bytes.
func WriteCompactLFTs(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	if err := checkPorts(g, r); err != nil {
		return err
	}
	maxLID := r.MaxLID()
	if maxLID > maxUnicastLID {
		return fmt.Errorf("lft: tables cover LIDs up to %d, expected at most %d: %w", maxLID, maxUnicastLID, ErrUnwritable)
	}
	zw, err := gzip.NewWriterLevel(w, compactLevel)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(zw, 256<<10)
	S := len(r.Switches)
	head := make([]byte, 0, len(compactMagic)+8+8*S)
	head = append(head, compactMagic...)
	head = binary.LittleEndian.AppendUint32(head, uint32(maxLID))
	head = binary.LittleEndian.AppendUint32(head, uint32(S))
	for _, guid := range r.Switches {
		head = binary.LittleEndian.AppendUint64(head, guid)
	}
	bw.Write(head)
	x := newPortIndex(g)
	var b [8]byte
	for lid := 0; lid <= maxLID; lid++ {
		var guid uint64
		if p, ok := x.owner(lid); ok {
			guid = p.guid
		}
		binary.LittleEndian.PutUint64(b[:], guid)
		bw.Write(b[:])
	}
	// LID-major order: a LID's entries on all switches side by side
	// compress better than one switch's row, as neighbouring switches
	// often route a destination alike. Blocks of LIDs keep the
	// transposition in cache.
	const block = 64
	buf := make([]byte, block*S)
	for lo := 0; lo <= maxLID; lo += block {
		hi := min(lo+block, maxLID+1)
		for s := 0; s < S; s++ {
			for j, p := range r.lft[s*r.Stride+lo : s*r.Stride+hi] {
				buf[j*S+s] = p
			}
		}
		if lo == 0 {
			fill(buf[:S], NoPort) // LID 0 is no destination (OpenSM never dumps it)
		}
		bw.Write(buf[:(hi-lo)*S])
	}
	bw.WriteString(compactEnd)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write compact LFTs: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("lft: write compact LFTs: %w", err)
	}
	return nil
}

// WriteCompactLFTsFile writes the tables of WriteCompactLFTs to path
// atomically, mode 0644.
func WriteCompactLFTsFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteCompactLFTs(w, g, r) }, 0o644)
}

// IsCompactLFTs reports whether b, the start of a file, opens a compact
// LFT file (a gzip stream; an OpenSM dump or ibroute output is text).
func IsCompactLFTs(b []byte) bool { return bytes.HasPrefix(b, gzipMagic) }

// ReadCompactLFTs reads tables written by WriteCompactLFTs into a routing
// bound to g, by the rules of ReadLFTs: tables are matched to switches by
// node GUID (opt.SkipUnknownSwitches, opt.AllowMissingSwitches), a LID
// whose port GUID has another LID in g is remapped into that port's range
// unless opt.NoRemap, a port beyond the switch's port count is
// ErrPortRange, a route to a LID beyond g's highest is ErrLIDRange, two
// LIDs remapped onto one in a table ErrDuplicate. A damaged or cut file is
// ErrSyntax or ErrTruncated (the gzip checksum covers every byte). Errors
// are *ParseError values naming the byte offset in the decompressed data.
func ReadCompactLFTs(in io.Reader, name string, g *fabric.Graph, opt ReadOptions) (*Routing, error) {
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, parseErr(name, 0, ErrSyntax, "not a compact LFT file (%v), expected a gzip stream", err)
	}
	zr.Multistream(false)
	c := &compactReader{name: name, r: bufio.NewReaderSize(zr, 256<<10), g: g, opt: opt, x: newPortIndex(g)}
	rt, err := c.read()
	if err != nil {
		return nil, err
	}
	// The gzip trailer (CRC-32, length) is checked at the stream's end,
	// and nothing may follow it.
	n, err := io.Copy(io.Discard, c.r)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, c.fail(ErrTruncated, "the file ends inside the gzip stream, expected its trailer")
	case err != nil:
		return nil, c.fail(ErrSyntax, "%v, expected an intact gzip stream", err)
	case n != 0:
		return nil, c.fail(ErrSyntax, "%d bytes after %q, expected the end of the content", n, compactEnd)
	}
	var rest [1]byte
	if n, _ := in.Read(rest[:]); n != 0 {
		return nil, parseErr(name, 0, ErrSyntax, "bytes after the gzip stream, expected the end of the file")
	}
	return rt, nil
}

// ReadLFTsFile reads the tables at path, a compact LFT file or anything
// ReadLFTs reads, told apart by their first bytes.
func ReadLFTsFile(path string, g *fabric.Graph, opt ReadOptions) (*Routing, error) {
	return readPath(path, func(r io.Reader) (*Routing, error) {
		br := bufio.NewReaderSize(r, 256<<10)
		head, _ := br.Peek(len(gzipMagic))
		if IsCompactLFTs(head) {
			return ReadCompactLFTs(br, path, g, opt)
		}
		return ReadLFTs(br, path, g, opt)
	})
}

// compactReader reads the decompressed content of a compact LFT file.
type compactReader struct {
	name string
	r    *bufio.Reader
	off  int64 // bytes of decompressed content read
	g    *fabric.Graph
	opt  ReadOptions
	x    *portIndex
}

func (c *compactReader) fail(sentinel error, format string, args ...any) error {
	return parseErr(c.name, 0, sentinel, "byte %d of the content: "+format, append([]any{c.off}, args...)...)
}

// full reads len(b) bytes; what says what they are, for the error.
func (c *compactReader) full(b []byte, what string) error {
	n, err := io.ReadFull(c.r, b)
	c.off += int64(n)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return c.fail(ErrTruncated, "the content ends inside %s, expected %d more bytes", what, len(b)-n)
	}
	return c.fail(ErrSyntax, "%v while reading %s, expected an intact gzip stream", err, what)
}

func (c *compactReader) read() (*Routing, error) {
	head := make([]byte, len(compactMagic)+8)
	if err := c.full(head, "the header"); err != nil {
		return nil, err
	}
	if string(head[:len(compactMagic)]) != compactMagic {
		c.off = 0
		return nil, c.fail(ErrSyntax, "header %q, expected %q", clip(head[:len(compactMagic)]), compactMagic)
	}
	maxLID := int(binary.LittleEndian.Uint32(head[len(compactMagic):]))
	S := int(binary.LittleEndian.Uint32(head[len(compactMagic)+4:]))
	if maxLID > maxUnicastLID || S > maxUnicastLID {
		return nil, c.fail(ErrSyntax, "%d switches and LIDs up to %d, expected at most %d of each", S, maxLID, maxUnicastLID)
	}
	sw, err := c.switches(S)
	if err != nil {
		return nil, err
	}
	dst, err := c.owners(maxLID)
	if err != nil {
		return nil, err
	}
	rt := New(c.g, "file")
	if err := c.entries(rt, sw, dst); err != nil {
		return nil, err
	}
	var end [len(compactEnd)]byte
	if err := c.full(end[:], "the closing "+fmt.Sprintf("%q", compactEnd)); err != nil {
		return nil, err
	}
	if string(end[:]) != compactEnd {
		return nil, c.fail(ErrSyntax, "%q after the tables, expected %q", end[:], compactEnd)
	}
	return rt, nil
}

// switches reads the switch GUIDs and maps each table to a switch of g
// (-1: skipped).
func (c *compactReader) switches(S int) ([]int32, error) {
	sw := make([]int32, 0, min(S, c.g.NumSwitches()+1))
	seen := make([]bool, c.g.NumSwitches())
	var unknown []string
	var b [8]byte
	for i := 0; i < S; i++ {
		if err := c.full(b[:], "the switch GUIDs"); err != nil {
			return nil, err
		}
		guid := binary.LittleEndian.Uint64(b[:])
		s, ok := c.x.swByID[guid]
		switch {
		case !ok:
			s = -1
			if !c.opt.SkipUnknownSwitches {
				unknown = append(unknown, fmt.Sprintf("0x%016x (table %d)", guid, i))
			}
		case seen[s]:
			return nil, c.fail(ErrDuplicate, "second table for switch 0x%016x (%s), expected one", guid, c.g.SwitchName(s))
		default:
			seen[s] = true
		}
		sw = append(sw, s)
	}
	if len(unknown) > 0 {
		return nil, c.fail(ErrUnknownSwitch, "switch %s is not in the fabric, expected only switches of the fabric", listed(unknown))
	}
	if !c.opt.AllowMissingSwitches {
		var missing []string
		for s, ok := range seen {
			if !ok {
				missing = append(missing, fmt.Sprintf("0x%016x (%s)", c.g.F.Nodes[c.g.Switches[s]].GUID, c.g.SwitchName(int32(s))))
			}
		}
		if len(missing) > 0 {
			return nil, c.fail(ErrMissingSwitch, "no table for %d of the fabric's %d switches: %s, expected one table per switch",
				len(missing), c.g.NumSwitches(), listed(missing))
		}
	}
	return sw, nil
}

// owners reads the port GUID of every LID and returns the LID of g each
// one stands for (remapped by port GUID unless opt.NoRemap).
func (c *compactReader) owners(maxLID int) ([]int32, error) {
	dst := make([]int32, maxLID+1)
	var b [8]byte
	for lid := range dst {
		if err := c.full(b[:], "the LIDs' port GUIDs"); err != nil {
			return nil, err
		}
		dst[lid] = int32(lid)
		if !c.opt.NoRemap {
			dst[lid] = int32(c.x.remap(lid, binary.LittleEndian.Uint64(b[:])))
		}
	}
	return dst, nil
}

// entries reads the out ports, LID by LID, into rt.
func (c *compactReader) entries(rt *Routing, sw []int32, dst []int32) error {
	col := make([]byte, len(sw))
	nports := make([]int, len(sw))
	for i, s := range sw {
		if s >= 0 {
			nports[i] = c.g.F.Nodes[c.g.Switches[s]].NumPorts()
		}
	}
	// from[d]: the file LID last routed as LID d of g, for the message
	// when two of them land on one switch's entry.
	from := make([]int32, rt.Stride)
	for lid := range dst {
		if err := c.full(col, "the out ports"); err != nil {
			return err
		}
		d := int(dst[lid])
		for i, p := range col {
			s := sw[i]
			if p == NoPort || s < 0 {
				continue
			}
			if int(p) > nports[i] {
				return c.fail(ErrPortRange, "LID 0x%04x routed to port %d of switch 0x%016x (%s), expected 0..%d (or 255 for no route)",
					lid, p, rt.Switches[s], c.g.SwitchName(s), nports[i])
			}
			if lid == 0 {
				return c.fail(ErrSyntax, "switch 0x%016x routes LID 0, expected no route (LID 0 is no destination)", rt.Switches[s])
			}
			if d >= rt.Stride {
				return c.fail(ErrLIDRange, "LID 0x%04x%s beyond the fabric's highest LID, expected at most 0x%04x",
					d, remapNote(d, lid), rt.Stride-1)
			}
			e := &rt.lft[int(s)*rt.Stride+d]
			if *e != NoPort {
				return c.fail(ErrDuplicate, "LID 0x%04x%s routed twice on switch 0x%016x, expected once (also as LID 0x%04x)",
					d, remapNote(d, lid), rt.Switches[s], from[d])
			}
			*e = p
			from[d] = int32(lid)
		}
	}
	return nil
}
