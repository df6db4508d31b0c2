package enginetest

import (
	"strings"
	"testing"

	"github.com/nuesm/nuesm/routing"
)

// FuzzNewChain: engine chain specs and shared parameters (--engine,
// --param, the daemon's engine and [params]) never panic the parsers of
// any registered engine; an accepted chain is not empty, and building it
// twice gives the same engines (the parameters are checked, not guessed).
func FuzzNewChain(f *testing.F) {
	for _, s := range [][2]string{
		{"nue:partition=locality:share=none,dfsssp:vlbalance=off,updn", ""},
		{"nue,dfsssp", "vlbalance=off"},
		{"dor:dims=8x8x8:torus=1x1x0", ""},
		{"dor-nodateline:dateline=on", ""},
		{"lash:sources=all,minhop", ""},
		{"sar-nue:schedule=lockstep,sar-dfsssp:vlcount=exact", "switchsources=on"},
		{"nue:share=", ""}, {"nue::", ""}, {":x=1", ""}, {"8x8x8", ""}, {"nue", "nope=1"},
		{"best:of=nue+(nue:share=switchlid:partition=locality):by=hops,updn", ""},
		{"best:of=(dor:dims=4x4)+(nue:share=none)", "share=switch"}, {"best:of=nue+(nue", ""}, {"best:of=())(", ""},
		{"dor:dims=0x4", ""}, {"dor:torus=2", ""}, {"nue:partition=locality:partition=auto", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, spec, params string) {
		shared := map[string]string{}
		for _, p := range strings.Split(params, ";") {
			if k, v, err := routing.ParseParam(p); err == nil {
				shared[k] = v
			}
		}
		chain, err := routing.NewChain(spec, shared)
		if err != nil {
			return
		}
		if len(chain) == 0 {
			t.Fatalf("%q: empty chain accepted", spec)
		}
		again, err := routing.NewChain(spec, shared)
		if err != nil || len(again) != len(chain) {
			t.Fatalf("%q: second build: %v", spec, err)
		}
		for i := range chain {
			if chain[i].Name() != again[i].Name() {
				t.Fatalf("%q: engine %d is %s, then %s", spec, i, chain[i].Name(), again[i].Name())
			}
		}
	})
}
