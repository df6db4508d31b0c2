package routing

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseCoords: the coordinate parser of switch descriptions never
// panics, accepts only non-negative coordinates below maxGridPoints, and
// reads back what coordString writes after any description.
func FuzzParseCoords(f *testing.F) {
	for _, s := range []string{"torus 8x8x8 (1,2,3)", "mesh (0,0)", "(7)", "x ( 1 , 2 )", "a (b) (4,5)",
		"(", ")", "()", "(,)", "(-1,2)", "(16777216)", "(1,2", "novacube (3,0,1,2) ", "(+1,0x2)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		c, ok := parseCoords(desc)
		if !ok {
			return
		}
		if len(c) == 0 {
			t.Fatalf("%q: ok without coordinates", desc)
		}
		for _, v := range c {
			if v < 0 || v >= maxGridPoints {
				t.Fatalf("%q: coordinate %d out of range", desc, v)
			}
		}
		prefix := desc[:strings.LastIndexByte(desc, '(')]
		back, ok := parseCoords(prefix + coordString(c))
		if !ok || !slices.Equal(back, c) {
			t.Fatalf("%q: %v, rewritten %q reads %v %v", desc, c, prefix+coordString(c), back, ok)
		}
	})
}

// FuzzParseDims: the dims and torus (wrap) parameters of DOR never panic,
// take sizes >= 1 only and read back what fmtDims and fmtWrap write.
func FuzzParseDims(f *testing.F) {
	for _, s := range [][2]string{{"8x8x8", "1x1x1"}, {"4,4", "0,1"}, {"2X3", "1, 0"}, {"", ""}, {"x", "2"},
		{"0x4", "1"}, {"16777216", "1"}, {"-1x2", "1,1,1"}, {" 5 x 5 ", "0x0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, dims, wrap string) {
		if d, err := parseDims(dims); err == nil {
			for _, k := range d {
				if k < 1 || k >= maxGridPoints {
					t.Fatalf("%q: size %d", dims, k)
				}
			}
			back, err := parseDims(fmtDims(d))
			if err != nil || !slices.Equal(back, d) {
				t.Fatalf("%q: %v, rewritten %q reads %v %v", dims, d, fmtDims(d), back, err)
			}
		} else if !strings.Contains(err.Error(), "dims") {
			t.Fatalf("%q: error without the parameter's name: %v", dims, err)
		}
		if w, err := parseWrap(wrap); err == nil {
			back, err := parseWrap(fmtWrap(w))
			if err != nil || !slices.Equal(back, w) {
				t.Fatalf("%q: %v, rewritten %q reads %v %v", wrap, w, fmtWrap(w), back, err)
			}
		}
	})
}

// FuzzParseChain: an engine chain specification never panics; accepted
// chains name registered engines only.
func FuzzParseChain(f *testing.F) {
	for _, s := range []string{"minhop", "updn,minhop", " dor , updn ", ",", "", "nope", "minhop,,updn", "MINHOP"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		chain, err := ParseChain(spec)
		if err != nil {
			return
		}
		if len(chain) == 0 {
			t.Fatalf("%q: empty chain accepted", spec)
		}
		for _, e := range chain {
			if _, err := Lookup(e.Name()); err != nil {
				t.Fatalf("%q: engine %q: %v", spec, e.Name(), err)
			}
		}
	})
}
