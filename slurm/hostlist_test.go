package slurm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// hosts spells a host list compactly for test tables.
func hosts(s string) []string { return strings.Fields(s) }

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
	}{
		// FORMATS.md §6 and the brief
		{"node[001-004,010]", "node001 node002 node003 node004 node010"},
		{"a[1-3]b[2,4]", "a1b2 a1b4 a2b2 a2b4 a3b2 a3b4"},
		{"n7,m[01-02]", "n7 m01 m02"},
		// zero padding follows the start of each range
		{"n[8-10]", "n8 n9 n10"},
		{"n[08-10]", "n08 n09 n10"},
		{"n[098-101]", "n098 n099 n100 n101"},
		{"n[01-1]", "n01"},
		{"n[1-01]", "n1"},
		{"n[0-0]", "n0"},
		{"n[00-01]", "n00 n01"},
		{"n[1-2,01-02]", "n1 n2 n01 n02"},
		// the man pages: scontrol(1), slurm.conf(5), Slurm::Hostlist(3pm)
		{"tux[1-3]", "tux1 tux2 tux3"},
		{"tux[0-5,12,20-25]", "tux0 tux1 tux2 tux3 tux4 tux5 tux12 tux20 tux21 tux22 tux23 tux24 tux25"},
		{"lx[15,18,32-33]", "lx15 lx18 lx32 lx33"},
		{"node1,node[2-5,12]", "node1 node2 node3 node4 node5 node12"},
		{"alpha,beta,gamma", "alpha beta gamma"},
		{"nid[10-12]", "nid10 nid11 nid12"},
		// order and duplicates are kept, as scontrol show hostnames does
		{"n[3,1,2]", "n3 n1 n2"},
		{"n[1-3,2]", "n1 n2 n3 n2"},
		{"n[1-2],n[1-2]", "n1 n2 n1 n2"},
		// several groups: SLURM's order (last group fastest, then the first…)
		{"n[1-2][3-4]", "n13 n14 n23 n24"},
		{"a[1-2][3]", "a13 a23"},
		{"n[1-2]-x[1-2]", "n1-x1 n1-x2 n2-x1 n2-x2"},
		{"a[1-3]b[1-2]c[1-2]", "a1b1c1 a1b1c2 a2b1c1 a2b1c2 a3b1c1 a3b1c2 a1b2c1 a1b2c2 a2b2c1 a2b2c2 a3b2c1 a3b2c2"},
		{"a[1-2]b[1-2]c[1-2]d[1-2]", "a1b1c1d1 a1b1c1d2 a2b1c1d1 a2b1c1d2 a1b2c1d1 a1b2c1d2 a2b2c1d1 a2b2c1d2 " +
			"a1b1c2d1 a1b1c2d2 a2b1c2d1 a2b1c2d2 a1b2c2d1 a1b2c2d2 a2b2c2d1 a2b2c2d2"},
		{"x[1-2]y[5-6],z[1-2]w[1,3]", "x1y5 x1y6 x2y5 x2y6 z1w1 z1w3 z2w1 z2w3"},
		// separators: commas and white space, empty elements ignored
		{"a,,b", "a b"},
		{"a b\tc\nd", "a b c d"},
		{",n1,", "n1"},
		{"n[1-3], m2 ", "n1 n2 n3 m2"},
		{"", ""},
		{" , ", ""},
		// plain names keep whatever they hold but separators and brackets
		{"n1-2,a.b,a_1,a\"b\"", "n1-2 a.b a_1 a\"b\""},
		{"[1-3]", "1 2 3"},
		{"n[0000000000000000000001-2]", "n0000000000000000000001 n0000000000000000000002"},
		{"n[18446744073709551614-18446744073709551615]", "n18446744073709551614 n18446744073709551615"},
	} {
		got, err := Expand(tc.expr)
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.expr, err)
			continue
		}
		if want := hosts(tc.want); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("Expand(%q)\n got %q\nwant %q", tc.expr, got, want)
		}
		if n, err := Count(tc.expr); err != nil || n != len(got) {
			t.Errorf("Count(%q) = %d, %v; want %d", tc.expr, n, err, len(got))
		}
	}
}

func TestExpandCounts(t *testing.T) {
	for _, tc := range []struct {
		expr string
		n    int
	}{
		{"linux[0000-1023]", 1024},
		{"linux[0-64,128]", 66},
		{"rack[0-63]_blade[0-41]", 64 * 42},
		{"n[1-65536]", 65536},
		{"a[1-1000]b[1-100]", 100000},
	} {
		got, err := Expand(tc.expr)
		if err != nil || len(got) != tc.n {
			t.Errorf("Expand(%q): %d hosts, %v; want %d", tc.expr, len(got), err, tc.n)
		}
	}
	got, _ := Expand("linux[0000-1023]")
	if got[0] != "linux0000" || got[1023] != "linux1023" {
		t.Errorf("linux[0000-1023]: first %q last %q", got[0], got[1023])
	}
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want string // the whole message, or a part of it after "~"
	}{
		{"node[1-", `hostlist "node[1-": unterminated bracket at offset 4, expected ']'`},
		{"n[1-3", `hostlist "n[1-3": unterminated bracket at offset 1, expected ']'`},
		{"n[1,", `hostlist "n[1,": unterminated bracket at offset 1, expected ']'`},
		{"n[", `hostlist "n[": unterminated bracket at offset 1, expected ']'`},
		{"n[]", `hostlist "n[]": empty brackets at offset 2, expected a number`},
		{"n[1,,2]", `hostlist "n[1,,2]": empty range at offset 4, expected a number`},
		{"n[1,]", `hostlist "n[1,]": empty range at offset 4, expected a number`},
		{"n[3-]", `hostlist "n[3-]": range without an end at offset 4, expected a number`},
		{"n[-3]", `hostlist "n[-3]": range without a start at offset 2, expected a number`},
		{"n[5-3]", `hostlist "n[5-3]": decreasing range "5-3" at offset 2, expected lo <= hi`},
		{"n[010-8]", `~decreasing range "010-8" at offset 2`},
		{"n[1-10:2]", `hostlist "n[1-10:2]": stepped range (SLURM 22.05 has no "lo-hi:step") at offset 6, expected ',' or ']'`},
		{"n[a-c]", `hostlist "n[a-c]": unexpected "a" in range start at offset 2, expected a digit`},
		{"n[1-c]", `~unexpected "c" in range end at offset 4`},
		{"bgl[123x456]", `~unexpected "x" in brackets at offset 7, expected ',' or ']'`},
		{"n[[1-3]", `~'[' inside brackets at offset 2`},
		{"n[ 1-3]", `~white space inside brackets at offset 2`},
		{"n[1-3 ]", `~unexpected " " in brackets at offset 5`},
		{"n[1-2]]", `hostlist "n[1-2]]": unexpected ']' outside brackets at offset 6`},
		{"n]", `~unexpected ']' outside brackets at offset 1`},
		{"unit[0-31]rack", `hostlist "unit[0-31]rack": text "rack" after the last bracket group at offset 10, expected the name to end with a [range] (SLURM rejects e.g. "unit[0-31]rack")`},
		{"n[1-3]-ib", `~text "-ib" after the last bracket group at offset 6`},
		{"a[1-2]b[3]c,d", `~text "c" after the last bracket group at offset 10`},
		{"n[1-65537]", `~too many hosts in range "1-65537" (SLURM's limit is 65536) at offset 2`},
		{"n[18446744073709551616]", `~number "18446744073709551616" out of range at offset 2`},
		{"a[0-65535]b[0-65535]", `~more than 1048576 hosts at offset 0`},
		{"n[1-2\x00]", `~unexpected byte 0x00 in brackets at offset 5`},
	} {
		_, err := Expand(tc.expr)
		if err == nil {
			t.Errorf("Expand(%q): no error, want %s", tc.expr, tc.want)
			continue
		}
		var he *HostlistError
		if !errors.As(err, &he) || !errors.Is(err, ErrHostlist) || he.Expr != tc.expr {
			t.Errorf("Expand(%q): error %T %v is not a *HostlistError for it wrapping ErrHostlist", tc.expr, err, err)
		}
		if part, ok := strings.CutPrefix(tc.want, "~"); ok {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("Expand(%q):\n got %s\nwant it to contain %s", tc.expr, err, part)
			}
		} else if err.Error() != tc.want {
			t.Errorf("Expand(%q):\n got %s\nwant %s", tc.expr, err, tc.want)
		}
		if _, cerr := Count(tc.expr); cerr == nil {
			t.Errorf("Count(%q): no error", tc.expr)
		}
	}
}

func TestHostlistErrorClipsLongExpressions(t *testing.T) {
	expr := strings.Repeat("n1,", 100) + "n[5-3]" + strings.Repeat(",n2", 100)
	_, err := Expand(expr)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if len(msg) > 200 || !strings.Contains(msg, "n[5-3]") || !strings.Contains(msg, "…") || !strings.Contains(msg, "offset 302") {
		t.Fatalf("message not clipped around the problem: %s", msg)
	}
}

func TestCompress(t *testing.T) {
	for _, tc := range []struct {
		hosts, want, sorted string
	}{
		// scontrol(1): "tux2,tux1,tux2 = tux[2,1-2]", sorted "tux[1-2,2]"
		{"tux2 tux1 tux2", "tux[2,1-2]", "tux[1-2,2]"},
		{"node001 node002 node003 node004 node010", "node[001-004,010]", "node[001-004,010]"},
		{"a1b2 a1b4 a2b2 a2b4", "a1b[2,4],a2b[2,4]", "a1b[2,4],a2b[2,4]"},
		{"n7 m01 m02", "n7,m[01-02]", "m[01-02],n7"},
		{"n8 n9 n10", "n[8-10]", "n[8-10]"},
		{"n08 n09 n10", "n[08-10]", "n[08-10]"},
		{"n9 n10", "n[9-10]", "n[9-10]"},
		{"n99 n100 n101", "n[99-101]", "n[99-101]"},
		{"n099 n100", "n[099-100]", "n[099-100]"},
		{"n0998 n0999 n1000", "n[0998-1000]", "n[0998-1000]"},
		// padding that cannot be shared splits the range
		{"n08 n9", "n[08,9]", "n[9,08]"},
		{"n9 n010", "n[9,010]", "n[9,010]"},
		{"n10 n11 n012", "n[10-11,012]", "n[10-11,012]"},
		{"n099 n100 n0101", "n[099-100,0101]", "n[099-100,0101]"},
		{"n8 n09 n10", "n[8,09-10]", "n[8,09-10]"},
		{"n0 n00 n000", "n[0,00,000]", "n[0,00,000]"},
		{"n10 n9 n009 n1", "n[10,9,009,1]", "n[1,9-10,009]"},
		// only neighbours share a bracket in input order
		{"a1 b1 a2", "a1,b1,a2", "a[1-2],b1"},
		{"n1 n2 m1 n3", "n[1-2],m1,n3", "m1,n[1-3]"},
		{"b2 a1 b1 a10 a9", "b2,a1,b1,a[10,9]", "a[1,9-10],b[1-2]"},
		// names without a trailing number are never merged
		{"n n", "n,n", "n,n"},
		{"x a b1 a2", "x,a,b1,a2", "a,a2,b1,x"},
		{"a1 a a0", "a1,a,a0", "a,a[0-1]"},
		{"a1b a2b", "a1b,a2b", "a1b,a2b"},
		{"123 124", "[123-124]", "[123-124]"},
		{"n-1 n-2", "n-[1-2]", "n-[1-2]"},
		{"n1-2", "n1-2", "n1-2"},
		{"A1 a1 b1 B1", "A1,a1,b1,B1", "A1,B1,a1,b1"},
		{"n1 n1", "n[1,1]", "n[1,1]"},
		{"n1 n3 n5 n2 n4", "n[1,3,5,2,4]", "n[1-5]"},
		{"n18446744073709551614 n18446744073709551615", "n[18446744073709551614-18446744073709551615]", "n[18446744073709551614-18446744073709551615]"},
		{"", "", ""},
	} {
		in := hosts(tc.hosts)
		if got := Compress(in); got != tc.want {
			t.Errorf("Compress(%q) = %q, want %q", in, got, tc.want)
		}
		if got := CompressSorted(in); got != tc.sorted {
			t.Errorf("CompressSorted(%q) = %q, want %q", in, got, tc.sorted)
		}
		back, err := Expand(Compress(in))
		if err != nil || !slices.Equal(back, in) && len(in) > 0 {
			t.Errorf("Expand(Compress(%q)) = %q, %v", in, back, err)
		}
	}
}

// randomHost draws a name from a small alphabet so that prefixes repeat,
// numbers are neighbours and paddings clash often.
func randomHost(r *rand.Rand) string {
	prefixes := []string{"n", "n", "node", "a", "ab", "x-", "r1n", ""}
	p := prefixes[r.IntN(len(prefixes))]
	switch r.IntN(10) {
	case 0:
		if p == "" {
			p = "login"
		}
		return p + "z" // no trailing number
	case 1:
		return fmt.Sprintf("%s%03d", p, r.IntN(15))
	case 2:
		return fmt.Sprintf("%s%02d", p, 95+r.IntN(10))
	}
	return fmt.Sprintf("%s%d", p, r.IntN(15)+[]int{0, 0, 95, 995}[r.IntN(4)])
}

func TestCompressRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		in := make([]string, 1+r.IntN(20))
		for j := range in {
			in[j] = randomHost(r)
		}
		for _, c := range []struct {
			name string
			f    func([]string) string
			want []string
		}{
			{"Compress", Compress, in},
			{"CompressSorted", CompressSorted, sortedLikeSLURM(in)},
		} {
			expr := c.f(in)
			back, err := Expand(expr)
			if err != nil || !slices.Equal(back, c.want) {
				t.Fatalf("%s(%q) = %q, expands to %q, %v; want %q", c.name, in, expr, back, err, c.want)
			}
			if again := c.f(back); again != expr {
				t.Fatalf("%s not stable: %q, then %q", c.name, expr, again)
			}
		}
	}
}

// sortedLikeSLURM sorts hosts with the comparator CompressSorted uses.
func sortedLikeSLURM(in []string) []string {
	keys := make([]hostKey, len(in))
	for i, h := range in {
		keys[i] = splitHost(h)
	}
	slices.SortStableFunc(keys, compareKeys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.prefix
		if !k.plain {
			out[i] += padNumber(k.num, k.digits)
		}
	}
	return out
}

func BenchmarkExpand(b *testing.B) {
	for b.Loop() {
		if _, err := Expand("node[0001-4096],login[1-4],rack[0-7]_blade[00-15]"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompress(b *testing.B) {
	h, _ := Expand("node[0001-4096],login[1-4],rack[0-7]_blade[00-15]")
	for b.Loop() {
		Compress(h)
	}
}
