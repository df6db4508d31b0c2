package slurm

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// hostKey is a host name split into a prefix and its trailing number.
type hostKey struct {
	prefix string
	num    uint64
	digits int  // digits the number was written with (0 = no number)
	wmin   int  // narrowest zero padding that prints it as written
	wmax   int  // widest one
	plain  bool // no trailing number: never merged into a range
}

// splitHost splits a name into prefix and trailing decimal number. A
// number written with leading zeros ("007") fixes the padding to its
// length; one without ("7", "10") prints as written for any padding up to
// its length. A name without trailing digits, or whose trailing number
// does not fit in 64 bits, is plain.
func splitHost(h string) hostKey {
	i := len(h)
	for i > 0 && isDigit(h[i-1]) {
		i--
	}
	if i == len(h) {
		return hostKey{prefix: h, plain: true}
	}
	v, err := strconv.ParseUint(h[i:], 10, 64)
	if err != nil {
		return hostKey{prefix: h, plain: true}
	}
	k := hostKey{prefix: h[:i], num: v, digits: len(h) - i}
	natural := len(strconv.FormatUint(v, 10))
	if natural < k.digits { // zero-padded
		k.wmin, k.wmax = k.digits, k.digits
	} else {
		k.wmin, k.wmax = 1, k.digits
	}
	return k
}

// hostRange is a run lo..hi of consecutive numbers under one prefix,
// printable with any padding in [wmin, wmax]; or one plain name.
type hostRange struct {
	prefix     string
	lo, hi     uint64
	wmin, wmax int
	plain      bool
}

// extend adds k to r if k is r.hi+1 under the same prefix and a padding
// exists that prints every member as written. Ranges stop at
// MaxRangeHosts hosts, so that Expand accepts what Compress prints.
func (r *hostRange) extend(k hostKey) bool {
	if r.plain || k.plain || r.prefix != k.prefix || r.hi == math.MaxUint64 || k.num != r.hi+1 || r.hi-r.lo+1 >= MaxRangeHosts {
		return false
	}
	wmin, wmax := max(r.wmin, k.wmin), min(r.wmax, k.wmax)
	if wmin > wmax {
		return false
	}
	r.hi, r.wmin, r.wmax = k.num, wmin, wmax
	return true
}

// Compress returns a hostlist expression for hosts, as `scontrol show
// hostlist` prints it: order and duplicates are kept, a host extends the
// range before it when it is that range's next number under the same
// prefix with compatible zero padding, and neighbouring ranges with the
// same prefix share one bracket: tux2,tux1,tux2 → "tux[2,1-2]",
// n8,n9,n10 → "n[8-10]", n08,n9 → "n[08,9]", a1b2,a1b4 → "a1b[2,4]".
// Only the trailing number of a name is compressed. Expand(Compress(h))
// returns h for any non-empty names free of '[', ']', ',' and white space
// (which no hostlist can hold), up to MaxHosts names; a run longer than
// MaxRangeHosts is split where SLURM would print one range it cannot read
// back. The empty list gives "".
func Compress(hosts []string) string {
	keys := make([]hostKey, len(hosts))
	for i, h := range hosts {
		keys[i] = splitHost(h)
	}
	return format(ranges(keys))
}

// CompressSorted is Compress after sorting the hosts as `scontrol show
// hostlistsorted` does: by prefix (byte order), names without a number
// first, then by number where the zero padding is compatible and by digit
// count where it is not (n9, n10, n08 → "n[9-10,08]"). Duplicates are
// kept. For lists without duplicates or mixed padding it prints what
// hostlistsorted prints; on such odd lists SLURM's output depends on the
// input order, this one does not.
func CompressSorted(hosts []string) string {
	keys := make([]hostKey, len(hosts))
	for i, h := range hosts {
		keys[i] = splitHost(h)
	}
	slices.SortStableFunc(keys, compareKeys)
	return format(ranges(keys))
}

// compareKeys orders hosts as SLURM's hostlist sort does.
func compareKeys(a, b hostKey) int {
	if c := strings.Compare(a.prefix, b.prefix); c != 0 {
		return c
	}
	switch {
	case a.plain && b.plain:
		return 0
	case a.plain:
		return -1
	case b.plain:
		return 1
	}
	if max(a.wmin, b.wmin) > min(a.wmax, b.wmax) { // paddings incompatible
		return a.digits - b.digits
	}
	switch {
	case a.num < b.num:
		return -1
	case a.num > b.num:
		return 1
	}
	return 0
}

// ranges folds the hosts, in order, into ranges.
func ranges(keys []hostKey) []hostRange {
	var out []hostRange
	for _, k := range keys {
		if n := len(out); n > 0 && out[n-1].extend(k) {
			continue
		}
		out = append(out, hostRange{prefix: k.prefix, lo: k.num, hi: k.num, wmin: k.wmin, wmax: k.wmax, plain: k.plain})
	}
	return out
}

// format prints ranges, sharing one bracket among neighbours with the
// same prefix.
func format(rs []hostRange) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		r := rs[i]
		if r.plain {
			b.WriteString(r.prefix)
			i++
			continue
		}
		j := i + 1
		for j < len(rs) && !rs[j].plain && rs[j].prefix == r.prefix {
			j++
		}
		b.WriteString(r.prefix)
		if j == i+1 && r.lo == r.hi {
			b.WriteString(padNumber(r.lo, r.wmin))
			i = j
			continue
		}
		b.WriteByte('[')
		for k := i; k < j; k++ {
			if k > i {
				b.WriteByte(',')
			}
			b.WriteString(padNumber(rs[k].lo, rs[k].wmin))
			if rs[k].hi != rs[k].lo {
				b.WriteByte('-')
				b.WriteString(padNumber(rs[k].hi, rs[k].wmin))
			}
		}
		b.WriteByte(']')
		i = j
	}
	return b.String()
}
