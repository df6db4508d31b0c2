package ibnetdiscover

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// Combined sentinels of damaged input.
var (
	errTruncatedSyntax = fmt.Errorf("%w: %w", ErrTruncated, ErrSyntax)
	errNoDump          = fmt.Errorf("%w: %w", ErrNotDump, ErrNoNodes)
)

// sniffLen is how much of the input sniff looks at.
const sniffLen = 512

// compressed are the magic numbers of the compressed formats a dump is
// most often kept in.
var compressed = []struct{ magic, name, tool string }{
	{"\x1f\x8b", "gzip", "zcat"},
	{"BZh", "bzip2", "bzcat"},
	{"\xfd7zXZ\x00", "xz", "xzcat"},
	{"\x28\xb5\x2f\xfd", "zstd", "zstdcat"},
	{"PK\x03\x04", "zip", "unzip -p"},
}

// sniff rejects input that is compressed or binary (see binaryAt) from
// its first bytes, before the line loop: a file without newlines would
// otherwise be read up to the line length limit first.
func (p *parser) sniff(br *bufio.Reader) error {
	head, _ := br.Peek(sniffLen)
	for _, c := range compressed {
		if bytes.HasPrefix(head, []byte(c.magic)) {
			return p.errAt(1, ErrNotDump, "not an ibnetdiscover dump: %s-compressed data, expected text (decompress it first: %s FILE)", c.name, c.tool)
		}
	}
	if i := binaryByte(head); i >= 0 {
		line := 1 + bytes.Count(head[:i], []byte{'\n'})
		col := i - bytes.LastIndexByte(head[:i], '\n')
		return p.errAt(line, ErrNotDump, "not an ibnetdiscover dump: binary data (byte 0x%02x at column %d), expected text", head[i], col)
	}
	return nil
}

// binaryByte returns the index of the first byte of b that no text file
// holds, or -1: NUL, 0x01-0x08, 0x0E-0x1A, 0x1C-0x1F (the rule of
// net/http.DetectContentType). ibnetdiscover prints none of them: it
// replaces what is not printable in node descriptions.
func binaryByte(b []byte) int {
	for i, c := range b {
		if c < 0x20 && (c <= 0x08 || c >= 0x0e && c != 0x1b) {
			return i
		}
	}
	return -1
}

// binaryAt is the error for a line holding binary data, or nil.
func (p *parser) binaryAt(line []byte) error {
	i := binaryByte(line)
	if i < 0 {
		return nil
	}
	return p.errAt(p.line, ErrNotDump, "not an ibnetdiscover dump: binary data (byte 0x%02x at column %d), expected text", line[i], i+1)
}

// cutShort marks an error on a last line that has no newline: the file
// was cut in the middle of that line.
func (p *parser) cutShort(err error) error {
	var e *Error
	if !p.unterminated || !errors.As(err, &e) || e.Line != p.line {
		return err
	}
	return p.errAt(e.Line, fmt.Errorf("%w: %w", ErrTruncated, e.Err),
		"truncated at line %d (it ends without a newline): %s", e.Line, e.Msg)
}

// oneSided is a cable listed from one end only: line and port are the
// listing end's, far the end that lists no cable.
type oneSided struct {
	line, port int
	far        fabric.PortRef
	farName    lazyID
}

// truncatedLinks replaces the link and validation errors by one when they
// are what a dump cut short inside its last node block produces and
// nothing else: ports cabled to nodes without a node block (their blocks
// were to follow), and cables to ports of the last block beyond the last
// port it lists (the cut took its remaining port lines). It takes two or
// more missing nodes, or one with a cut last block or a last line without
// newline; a single missing node alone keeps its own, precise error. On
// a last line without newline any error counts as part of the cut.
func (p *parser) truncatedLinks(errs ErrorList) *Error {
	unknown, tail := 0, 0
	for _, e := range errs {
		switch {
		case errors.Is(e, ErrUnknownNode):
			unknown++
		case errors.Is(e, errOneSided):
			tail++
		case p.unterminated && e.Line == p.line:
			// the cut line says less than it should ("lid 1" of "lid 14")
		default:
			return nil
		}
	}
	if tail != len(p.oneSided) || !p.tailCut {
		return nil
	}
	if len(p.unknownPeers) < 2 && tail == 0 && !p.unterminated {
		return nil
	}
	var parts []string
	if unknown > 0 {
		parts = append(parts, fmt.Sprintf("%s cabled to %s without a node block (first: %s)",
			plural(unknown, "port is", "ports are"), plural(len(p.unknownPeers), "node", "nodes"), p.firstUnknown))
	}
	if tail > 0 {
		o := p.oneSided[0]
		parts = append(parts, fmt.Sprintf("the last node block (line %d) lists no cable on %s that other lines cable to it (first: line %d, port %d to %s[%d])",
			p.nodeLine[o.far.Node], plural(tail, "port", "ports"), o.line, o.port, o.farName, o.far.Port))
	}
	line := max(p.lastText, 1)
	return p.errAt(line, fmt.Errorf("%w: %w", ErrTruncated, errs),
		"truncated at line %d: %s, expected the rest of the dump", line, strings.Join(parts, "; "))
}

// cutLastBlock reports whether the dump ends the way a cut one does: its
// last text line is the node line or a port line of the last node block,
// and every one-sided cable leads to a port of that block beyond the last
// one it lists (ibnetdiscover lists ports in increasing order). It runs
// right after link, while the claims are there.
func (p *parser) cutLastBlock() bool {
	if len(p.nodeLine) == 0 {
		return false
	}
	last := fabric.NodeID(len(p.nodeLine) - 1)
	listed, end := 0, int(p.nodeLine[last])
	for port := 1; int(p.portBase[last])+port < len(p.claims); port++ {
		if l := int(p.claims[int(p.portBase[last])+port].line); l != 0 {
			listed, end = port, max(end, l)
		}
	}
	cutAfter := p.lastText == end ||
		p.unterminated && p.lastText == p.line && p.prevText == end // a fragment of the next block's first line
	if !cutAfter {
		return false
	}
	for _, o := range p.oneSided {
		if o.far.Node != last || int(o.far.Port) <= listed {
			return false
		}
	}
	return true
}

// plural formats "1 node", "2 nodes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
