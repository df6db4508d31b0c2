package slurm

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxRangeHosts is the most hosts one numeric range may name, SLURM's own
// limit ("Too many hosts in range" above 65536).
const MaxRangeHosts = 65536

// MaxHosts bounds the number of host names one expression may expand to,
// so that a hostile "a[0-65535]b[0-65535]" cannot exhaust memory.
const MaxHosts = 1 << 20

// ErrHostlist is wrapped by every *HostlistError, for errors.Is.
var ErrHostlist = errors.New("invalid hostlist")

// HostlistError reports a malformed hostlist expression: what is wrong, at
// which byte offset (0-based) and, when there is one, what was expected.
type HostlistError struct {
	Expr   string // the whole expression
	Offset int    // byte offset of the problem in Expr
	Msg    string // what is wrong, e.g. "unterminated bracket"
	Want   string // what was expected, e.g. "']'"; may be empty
}

// Error reads like
//
//	hostlist "node[1-": unterminated bracket at offset 4, expected ']'
//
// Long expressions are cut around the offset.
func (e *HostlistError) Error() string {
	s := fmt.Sprintf("hostlist %q: %s at offset %d", clip(e.Expr, e.Offset, 64), e.Msg, e.Offset)
	if e.Want != "" {
		s += ", expected " + e.Want
	}
	return s
}

// Unwrap returns ErrHostlist.
func (e *HostlistError) Unwrap() error { return ErrHostlist }

// clip shortens s to about n bytes around offset, marking cuts with "…".
func clip(s string, offset, n int) string {
	if len(s) <= n {
		return s
	}
	lo := max(0, offset-n/2)
	hi := min(len(s), lo+n)
	lo = max(0, hi-n)
	out := s[lo:hi]
	if lo > 0 {
		out = "…" + out
	}
	if hi < len(s) {
		out += "…"
	}
	return out
}

// numRange is one "lo-hi" (or "lo") of a bracket group; width is the
// number of digits lo was written with, which sets the zero padding.
type numRange struct {
	lo, hi uint64
	width  int
}

// group is one bracket group: its ranges in order and how many values
// they name (duplicates included).
type group struct {
	ranges []numRange
	count  int
}

// item is one comma- or space-separated element: texts[0] group[0]
// texts[1] … group[k-1] texts[k], where texts[k] is always "".
type item struct {
	texts  []string
	groups []group
	count  int // hosts it expands to
}

// isSep reports whether c separates hostlist elements: a comma or ASCII
// white space (SLURM accepts both).
func isSep(c byte) bool {
	switch c {
	case ',', ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Expand returns the host names of a SLURM hostlist expression in the
// order `scontrol show hostnames` prints them, duplicates included. The
// grammar is SLURM 22.05's:
//
//   - Elements are separated by commas or white space; empty elements are
//     ignored ("a,,b" = "a,b"). An element is a plain name or a name with
//     bracket groups: "node[001-004,010]", "rack[0-1]_blade[0-2]".
//   - A bracket group holds comma-separated numbers and ranges lo-hi
//     (lo <= hi). Each range is zero-padded to the digits its start was
//     written with: "n[8-10]" = n8 n9 n10, "n[08-10]" = n08 n09 n10,
//     "n[01-1]" = n01, "n[1-01]" = n1.
//   - Several groups make a cartesian product. SLURM's order, kept here:
//     the last group varies fastest, then the first, the second, …, so
//     "a[1-2]b[1-2]c[1-2]" gives a1b1c1 a1b1c2 a2b1c1 a2b1c2 a1b2c1 ….
//   - If an element has brackets it must end with one: "unit[0-31]rack"
//     is invalid (slurm.conf(5)); "n[1-2]-ib" too.
//   - There are no escapes: '[', ']', ',' and white space cannot be part
//     of a name. Stepped ranges ("[1-10:2]") are not SLURM 22.05 syntax
//     and are rejected, as are the 3-D "[123x456]" boxes of BlueGene-era
//     builds.
//
// Where SLURM 22.05 silently accepts a malformed group ("n[1-3" prints
// "n]", "n[3-]" prints n3, "n[ 1-3]" pads to two digits) Expand returns an
// error instead. A single range may name at most MaxRangeHosts hosts (as
// in SLURM) and the whole expression at most MaxHosts. Errors are
// *HostlistError. The empty expression expands to no hosts.
func Expand(expr string) ([]string, error) {
	items, total, err := parseHostlist(expr)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, total)
	for i := range items {
		out = items[i].expand(out)
	}
	return out, nil
}

// Count returns how many host names expr expands to, without expanding it.
func Count(expr string) (int, error) {
	_, total, err := parseHostlist(expr)
	return total, err
}

// parseHostlist splits expr into items and counts the hosts they name.
func parseHostlist(expr string) ([]item, int, error) {
	var items []item
	total := 0
	for i := 0; i < len(expr); {
		if isSep(expr[i]) {
			i++
			continue
		}
		it, next, err := parseItem(expr, i)
		if err != nil {
			return nil, 0, err
		}
		if it.count > MaxHosts-total {
			return nil, 0, &HostlistError{Expr: expr, Offset: i, Msg: fmt.Sprintf("more than %d hosts", MaxHosts)}
		}
		total += it.count
		items = append(items, it)
		i = next
	}
	return items, total, nil
}

// parseItem parses the element starting at expr[start] up to the next
// separator outside brackets and returns it and the offset after it.
func parseItem(expr string, start int) (item, int, error) {
	var it item
	i, textStart := start, start
	for i < len(expr) && !isSep(expr[i]) {
		switch expr[i] {
		case '[':
			it.texts = append(it.texts, expr[textStart:i])
			g, next, err := parseGroup(expr, i)
			if err != nil {
				return item{}, 0, err
			}
			it.groups = append(it.groups, g)
			i, textStart = next, next
		case ']':
			return item{}, 0, &HostlistError{Expr: expr, Offset: i, Msg: "unexpected ']' outside brackets"}
		default:
			i++
		}
	}
	tail := expr[textStart:i]
	it.texts = append(it.texts, tail)
	if len(it.groups) > 0 && tail != "" {
		return item{}, 0, &HostlistError{Expr: expr, Offset: textStart,
			Msg:  fmt.Sprintf("text %q after the last bracket group", tail),
			Want: "the name to end with a [range] (SLURM rejects e.g. \"unit[0-31]rack\")"}
	}
	it.count = 1
	for _, g := range it.groups {
		if it.count > MaxHosts/g.count {
			return item{}, 0, &HostlistError{Expr: expr, Offset: start, Msg: fmt.Sprintf("more than %d hosts", MaxHosts)}
		}
		it.count *= g.count
	}
	return it, i, nil
}

// parseGroup parses the bracket group opening at expr[open] == '[' and
// returns it and the offset after its ']'.
func parseGroup(expr string, open int) (group, int, error) {
	var g group
	fail := func(off int, msg, want string) (group, int, error) {
		return group{}, 0, &HostlistError{Expr: expr, Offset: off, Msg: msg, Want: want}
	}
	unterminated := func() (group, int, error) { return fail(open, "unterminated bracket", "']'") }
	i := open + 1
	for {
		if i >= len(expr) {
			return unterminated()
		}
		rangeStart := i
		lo, width, next, err := parseNumber(expr, i, open, len(g.ranges) == 0, "start")
		if err != nil {
			return group{}, 0, err
		}
		i = next
		hi := lo
		if i < len(expr) && expr[i] == '-' {
			i++
			if hi, _, i, err = parseNumber(expr, i, open, false, "end"); err != nil {
				return group{}, 0, err
			}
		}
		if i < len(expr) && expr[i] == ':' {
			return fail(i, "stepped range (SLURM 22.05 has no \"lo-hi:step\")", "',' or ']'")
		}
		if hi < lo {
			return fail(rangeStart, fmt.Sprintf("decreasing range %q", expr[rangeStart:i]), "lo <= hi")
		}
		if hi-lo >= MaxRangeHosts {
			return fail(rangeStart, fmt.Sprintf("too many hosts in range %q (SLURM's limit is %d)", expr[rangeStart:i], MaxRangeHosts), "")
		}
		n := int(hi-lo) + 1
		if g.count > MaxHosts-n {
			return fail(rangeStart, fmt.Sprintf("more than %d hosts", MaxHosts), "")
		}
		g.count += n
		g.ranges = append(g.ranges, numRange{lo: lo, hi: hi, width: width})
		if i >= len(expr) {
			return unterminated()
		}
		switch c := expr[i]; c {
		case ',':
			i++
		case ']':
			return g, i + 1, nil
		default:
			return fail(i, fmt.Sprintf("unexpected %s in brackets", quoteByte(c)), "',' or ']'")
		}
	}
}

// parseNumber reads the decimal number at expr[i] (the start or end of a
// range, as what says) and returns its value, its digit count and the
// offset after it.
func parseNumber(expr string, i, open int, first bool, what string) (uint64, int, int, error) {
	fail := func(off int, msg, want string) (uint64, int, int, error) {
		return 0, 0, 0, &HostlistError{Expr: expr, Offset: off, Msg: msg, Want: want}
	}
	if i >= len(expr) {
		return fail(open, "unterminated bracket", "']'")
	}
	j := i
	for j < len(expr) && isDigit(expr[j]) {
		j++
	}
	if j == i {
		c := expr[i]
		switch {
		case c == ']' && first && what == "start":
			return fail(i, "empty brackets", "a number")
		case (c == ',' || c == ']') && what == "start":
			return fail(i, "empty range", "a number")
		case c == ',' || c == ']':
			return fail(i, "range without an end", "a number")
		case c == '-':
			return fail(i, "range without a start", "a number")
		case c == '[':
			return fail(i, "'[' inside brackets", "a number")
		case isSep(c):
			return fail(i, "white space inside brackets", "a number")
		}
		return fail(i, fmt.Sprintf("unexpected %s in range %s", quoteByte(c), what), "a digit")
	}
	v, err := strconv.ParseUint(expr[i:j], 10, 64)
	if err != nil {
		return fail(i, fmt.Sprintf("number %q out of range", expr[i:j]), fmt.Sprintf("at most %d", uint64(math.MaxUint64)))
	}
	return v, j - i, j, nil
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return fmt.Sprintf("%q", string(c))
}

// values returns the group's values, zero-padded, in order.
func (g group) values() []string {
	out := make([]string, 0, g.count)
	for _, r := range g.ranges {
		for v := r.lo; ; v++ {
			out = append(out, padNumber(v, r.width))
			if v == r.hi {
				break
			}
		}
	}
	return out
}

// padNumber formats v with at least width digits.
func padNumber(v uint64, width int) string {
	s := strconv.FormatUint(v, 10)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}

// expand appends the item's hosts to out in SLURM's order.
func (it *item) expand(out []string) []string {
	k := len(it.groups)
	if k == 0 {
		return append(out, it.texts[0])
	}
	vals := make([][]string, k)
	for j, g := range it.groups {
		vals[j] = g.values()
	}
	idx := make([]int, k-1) // odometer over groups 0..k-2, group 0 fastest
	var b strings.Builder
	for {
		b.Reset()
		for j := 0; j < k-1; j++ {
			b.WriteString(it.texts[j])
			b.WriteString(vals[j][idx[j]])
		}
		b.WriteString(it.texts[k-1])
		prefix := b.String()
		for _, v := range vals[k-1] {
			out = append(out, prefix+v)
		}
		j := 0
		for ; j < k-1; j++ {
			if idx[j]++; idx[j] < len(vals[j]) {
				break
			}
			idx[j] = 0
		}
		if j == k-1 {
			return out
		}
	}
}
