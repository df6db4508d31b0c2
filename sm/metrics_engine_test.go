package sm

import "testing"

// TestFromFirst: the fallback label of nuesm_routing_engine_info is false
// for tables of the chain's first engine, and, when that is best, for
// tables of any engine it compares, named by its spec.
func TestFromFirst(t *testing.T) {
	for _, c := range []struct {
		chain, engine string
		want          bool
	}{
		{"nue,dfsssp", "nue", true},
		{"nue:share=none,dfsssp", "nue", true},
		{"nue,dfsssp", "dfsssp", false},
		{"best,updn", "dor", true},
		{"best,updn", "updn", false},
		{"best:of=nue+(nue:share=switchlid),updn", "nue:share=switchlid", true},
		{"best:of=nue+(nue:share=switchlid),updn", "nue", true},
		{"best:of=nue+(nue:share=switchlid),nue:share=switch", "nue:share=switch", false},
		{"best:of=(nue:share=switch)+dor,nue", "nue", false},
	} {
		if got := fromFirst(c.chain, c.engine); got != c.want {
			t.Errorf("fromFirst(%q, %q) = %v, want %v", c.chain, c.engine, got, c.want)
		}
	}
}
