package flitsim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// FuzzParseList: the sweep's value lists and ranges never panic, stay
// within 10,001 values and come out ascending for ranges.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0.1,0.2,0.5", "0.1:1:0.1", "0:1", "1:0", "0:1:0", "0:1e9:1e-9", "a,b", "", "0:1:-1", "NaN:1", "-Inf:Inf:1", "1e308:1.7e308:1e300",
		"1e12:1e12", "9e18:9e18:1", "-0.3:0.3:0.1", "NaN,1", "Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseList(s)
		if err != nil {
			return
		}
		if len(v) > 10001 {
			t.Fatalf("%q: %d values", s, len(v))
		}
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%q: value %d is %v", s, i, x)
			}
			if strings.Contains(s, ":") && i > 0 && x < v[i-1] {
				t.Fatalf("%q: range not ascending: %v", s, v)
			}
		}
	})
}

// FuzzParseEngineSpecs: engine lists ("nue,dfsssp/4") never panic;
// accepted entries have a VL limit 1..15 and a known name.
func FuzzParseEngineSpecs(f *testing.F) {
	for _, s := range []string{"minhop", "updn/4,minhop", "minhop/0", "minhop/16", "minhop,minhop", ",", "nope/3", "/", "minhop/x"} {
		f.Add(s)
	}
	known := func(name string) error {
		if name != "minhop" && name != "updn" {
			return errors.New("unknown engine")
		}
		return nil
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseEngineSpecs(s, 8, known)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.VLs < 1 || e.VLs > 15 || known(e.Name) != nil {
				t.Fatalf("%q: %s with %d VLs", s, e.Name, e.VLs)
			}
		}
	})
}
