package routing_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestBestOfSpecs: engines with parameters go into best's "of" as their
// spec in parentheses; the members come back in the ordinary spec form,
// and malformed lists are refused with what was expected.
func TestBestOfSpecs(t *testing.T) {
	for spec, want := range map[string][]string{
		"best:of=nue+(nue:share=switchlid)":                                                  {"nue", "nue:share=switchlid"},
		"best:of= (nue:share=switch) + ( nue : share=switchlid:partition=locality ):by=hops": {"nue:share=switch", "nue:partition=locality:share=switchlid"},
		"best:of=(nue)+(dor:dims=4x4x4:torus=1x1x1)+dfsssp":                                  {"nue", "dor:dims=4x4x4:torus=1x1x1", "dfsssp"},
	} {
		chain, err := routing.NewChain(spec+",updn", nil)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if b, ok := chain[0].(routing.Best); !ok || !reflect.DeepEqual(b.Of, want) || len(chain) != 2 {
			t.Errorf("%s: chain %+v, want best of %q and updn", spec, chain, want)
		}
	}
	for spec, msg := range map[string]string{
		"best:of=nue+nue":              "same engine with the same parameters",
		"best:of=nue+(nue:share=auto)": "same engine with the same parameters",
		"best:of=(nue:partition=locality:share=switch)+(nue:share=switch:partition=locality)": "same engine with the same parameters",
		"best:of=nue+nue:share=switchlid":                      `unknown parameter "share"`,
		"best:of=nue+nue(share=switchlid)":                     "goes in parentheses, e.g. (nue:share=switchlid)",
		"best:of=nue+(nue:share=switchlid,partition=locality)": "not closed (inside the parentheses ':' separates the parameters",
		"best:of=nue+(nue:share=switchlid":                     "'(' at column 13 is not closed",
		"best:of=nue)+dor":                                     "')' at column 12 has no '('",
		"best:of=nue+(nue:share=bogus)":                        `unknown value "bogus"`,
		"best:of=nue+(nue:bogus=1)":                            `unknown parameter "bogus"`,
		"best:of=nue++dor":                                     "engine 2 \"\": no engine name",
		"best:of=nue+()":                                       "empty engine chain",
		"best:of=nue+(best:of=dor)":                            "best cannot compare itself",
		"best:of=nue+(nosuch:x=1)":                             "nosuch",
		"(nue:share=switchlid)":                                "parentheses hold an engine with parameters inside best's of",
	} {
		if _, err := routing.NewChain(spec, nil); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", spec, err, msg)
		}
	}
}

// TestBestComparesParameterSets: on the 3×3×3 torus with 4 hosts per
// switch Nue's share=switch balances better at 1 VL and share=switchlid at
// 8 VLs; best of both returns, in either order, exactly the tables of the
// variant of lower max channel load, named by its spec, the same twice.
func TestBestComparesParameterSets(t *testing.T) {
	tp, err := topo.Torus([]int{3, 3, 3}, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	variants := []string{"nue:share=switch", "nue:share=switchlid"}
	for _, vls := range []int{1, 8} {
		opt := routing.Options{MaxVLs: vls}
		alone := map[string]*lft.Routing{}
		load := map[string]int{}
		for _, v := range variants {
			alone[v] = routeSpec(t, g, v, opt)
			m, err := routing.Measure(g, alone[v], 0)
			if err != nil {
				t.Fatal(err)
			}
			load[v] = int(m.MaxEFI)
		}
		want := variants[0]
		if load[variants[1]] < load[variants[0]] {
			want = variants[1]
		}
		if load[variants[0]] == load[variants[1]] {
			t.Fatalf("%d VLs: both variants reach max EFI %d; the fabric does not tell them apart", vls, load[want])
		}
		for _, of := range []string{"(nue:share=switch)+(nue:share=switchlid)", "(nue:share=switchlid)+(nue:share=switch)"} {
			var first *lft.Routing
			for range 2 {
				r := routeSpec(t, g, "best:of="+of, opt)
				if r.Engine != want || !lft.Equal(r, alone[want]) {
					t.Errorf("%d VLs, of=%s: best gave %s, want the tables of %s (max EFI %v)", vls, of, r.Engine, want, load)
				}
				if first != nil && !lft.Equal(first, r) {
					t.Errorf("%d VLs, of=%s: two runs gave different tables", vls, of)
				}
				first = r
			}
		}
		t.Logf("%d VLs: max EFI %v, best took %s", vls, load, want)
	}
}

// routeSpec routes g with a one-engine spec through the verifying chain.
func routeSpec(t *testing.T, g *fabric.Graph, spec string, opt routing.Options) *lft.Routing {
	t.Helper()
	chain, err := routing.NewChain(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := routing.RouteChain(context.Background(), g, chain, opt)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return res.Routing
}
