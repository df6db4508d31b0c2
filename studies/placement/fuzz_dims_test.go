package placement

import (
	"errors"
	"slices"
	"testing"
)

// FuzzParseDims: torus sizes never panic the parser, accepted tori stay
// within MaxNodes and print as sizes that parse to the same torus.
func FuzzParseDims(f *testing.F) {
	for _, s := range []string{"8x8", "4,4,4", "2X3", "", "x", "1x4", "65536x2", "256x256", "-2x2", "99999999999999999999x2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseDims(s)
		if err != nil {
			if !errors.Is(err, ErrBadTorus) {
				t.Fatalf("%q: error without ErrBadTorus: %v", s, err)
			}
			return
		}
		if tr.N() < 2 || tr.N() > MaxNodes {
			t.Fatalf("%q: %d nodes", s, tr.N())
		}
		back, err := ParseDims(tr.String())
		if err != nil || !slices.Equal(back.K, tr.K) {
			t.Fatalf("%q = %v, rewritten %q reads %v, %v", s, tr.K, tr.String(), back, err)
		}
	})
}
