package ibnetdiscover

import (
	"bytes"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
)

// isSpace reports the blanks the format separates fields with. Lines are
// trimmed of them at both ends before they are parsed.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func hexVal(c byte) (uint64, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

// trimSpace trims blanks at both ends without allocating.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// scan walks one line. Its methods advance on success and stay put on
// failure, so callers can try alternatives.
type scan struct {
	b []byte
	i int
}

func (s *scan) eof() bool { return s.i >= len(s.b) }

func (s *scan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// rest returns the unread part of the line.
func (s *scan) rest() []byte { return s.b[s.i:] }

// ws skips blanks and reports how many it skipped.
func (s *scan) ws() int {
	n := s.i
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
	return s.i - n
}

// byte consumes c.
func (s *scan) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// lit consumes the literal t.
func (s *scan) lit(t string) bool {
	if len(s.b)-s.i >= len(t) && string(s.b[s.i:s.i+len(t)]) == t {
		s.i += len(t)
		return true
	}
	return false
}

// dec reads a decimal number of at most max. ok is false when there is no
// digit or the number exceeds max.
func (s *scan) dec(max uint64) (v uint64, ok bool) {
	start := s.i
	over := false
	for s.i < len(s.b) && isDigit(s.b[s.i]) {
		if !over {
			v = v*10 + uint64(s.b[s.i]-'0')
			if v > max {
				over = true
			}
		}
		s.i++
	}
	if s.i == start || over {
		s.i = start
		return 0, false
	}
	return v, true
}

// hex reads 1 to 16 hex digits.
func (s *scan) hex() (uint64, bool) {
	start := s.i
	var v uint64
	for s.i < len(s.b) {
		d, ok := hexVal(s.b[s.i])
		if !ok {
			break
		}
		if s.i-start == 16 {
			s.i = start
			return 0, false
		}
		v = v<<4 | d
		s.i++
	}
	if s.i == start {
		return 0, false
	}
	return v, true
}

// token returns the bytes up to the next blank (for messages).
func (s *scan) token() []byte {
	j := s.i
	for j < len(s.b) && !isSpace(s.b[j]) {
		j++
	}
	return s.b[s.i:j]
}

// quoteMax quotes b for a message, shortened to about 60 bytes.
func quoteMax(b []byte) string {
	const max = 60
	if len(b) > max {
		return strconv.Quote(string(b[:max]) + "…")
	}
	return strconv.Quote(string(b))
}

// widthNames lists the width spellings, longest first where one is a
// prefix of another ("12x" before "1x").
var widthNames = [...]string{"12x", "1x", "2x", "4x", "8x", "??"}

// parseWidthSpeed splits "4xQDR", "12xFDR10", "?????" into width and speed.
func parseWidthSpeed(tok []byte) (fabric.Width, fabric.Speed, bool) {
	for _, wn := range widthNames {
		if !bytes.HasPrefix(tok, []byte(wn)) {
			continue
		}
		w, ok := fabric.ParseWidth(wn)
		if !ok {
			return 0, 0, false
		}
		sp, ok := fabric.ParseSpeed(string(tok[len(wn):]))
		if !ok {
			return 0, 0, false
		}
		return w, sp, true
	}
	return 0, 0, false
}

// kindOfPrefix maps a node id prefix letter to its kind.
func kindOfPrefix(c byte) (fabric.NodeKind, bool) {
	switch c {
	case 'S':
		return fabric.Switch, true
	case 'H':
		return fabric.CA, true
	case 'R':
		return fabric.Router, true
	}
	return 0, false
}

// nodeID reads a quoted node id `"S-0002c90000000001"`.
func (s *scan) nodeID() (fabric.NodeKind, uint64, bool) {
	start := s.i
	if !s.byte('"') || s.eof() {
		s.i = start
		return 0, 0, false
	}
	k, ok := kindOfPrefix(s.b[s.i])
	if !ok {
		s.i = start
		return 0, 0, false
	}
	s.i++
	if !s.byte('-') {
		s.i = start
		return 0, 0, false
	}
	g, ok := s.hex()
	if !ok || !s.byte('"') {
		s.i = start
		return 0, 0, false
	}
	return k, g, true
}

// diagPrefixes start lines that the diagnostics print on stderr.
var diagPrefixes = [...]string{
	"ibwarn:", "iberror:", "ibpanic:", "ibnetdiscover:", "ibnetdiscover ",
	"libibumad", "libibmad", "libibnetdisc", "umad_", "mad_rpc", "ibnd_",
	"ERROR:", "Error:", "WARNING:", "Warning:",
}

// looksLikeDiagnostic reports a line that is clearly stderr output of the
// infiniband diagnostics: it starts with a known prefix ("ibwarn:",
// "ibnetdiscover: iberror:") or with a C source position
// ("src/query_smp.c:195; umad (…) bad status 110").
func looksLikeDiagnostic(t []byte) bool {
	for _, p := range diagPrefixes {
		if bytes.HasPrefix(t, []byte(p)) {
			return true
		}
	}
	end := 0
	for end < len(t) && !isSpace(t[end]) {
		end++
	}
	tok := t[:end]
	if i := bytes.Index(tok, []byte(".c:")); i > 0 && i+3 < len(tok) && isDigit(tok[i+3]) {
		return true
	}
	return false
}

// looksLikeNodeLine reports `<Word> <digits> "…`, the shape of a node line,
// so that an unknown node kind gets a precise error.
func looksLikeNodeLine(t []byte) bool {
	s := scan{b: t}
	n := 0
	for !s.eof() && (s.peek() >= 'a' && s.peek() <= 'z' || s.peek() >= 'A' && s.peek() <= 'Z') {
		s.i++
		n++
	}
	if n == 0 || s.ws() == 0 {
		return false
	}
	if _, ok := s.dec(1 << 20); !ok {
		return false
	}
	return s.ws() > 0 && s.peek() == '"'
}
