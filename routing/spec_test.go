package routing

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// routeParams configures e with params (Configure) and routes g with it.
func routeParams(ctx context.Context, e Engine, g *fabric.Graph, opt Options, params map[string]string) (*lft.Routing, error) {
	e, err := Configure(e, params)
	if err != nil {
		return nil, err
	}
	return e.Route(ctx, g, opt)
}

func TestParseSpec(t *testing.T) {
	got, err := ParseSpec(" nue:partition=locality:share=none , dfsssp,updn:,dor:dims=8x8x4:torus=1x1x0")
	if err == nil {
		t.Fatalf("empty parameter after ':' accepted: %+v", got)
	}
	got, err = ParseSpec(" nue:partition=locality: share = none , dfsssp,dor:dims=8x8x4:torus=1x1x0,")
	want := []EngineSpec{
		{"nue", map[string]string{"partition": "locality", "share": "none"}},
		{"dfsssp", nil},
		{"dor", map[string]string{"dims": "8x8x4", "torus": "1x1x0"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseSpec = %+v, %v; want %+v", got, err, want)
	}
	for spec, msg := range map[string]string{
		"":                       "empty engine chain",
		" , ":                    "empty engine chain",
		":share=none":            "no engine name",
		"nue:share":              `parameter "share", expected name=value`,
		"nue:=none":              "expected name=value",
		"nue:share=":             "expected name=value",
		"nue:share=none:share=x": "parameter share given twice",
	} {
		if _, err := ParseSpec(spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSpec(%q): %v, want %q", spec, err, msg)
		}
	}
}

func TestNewChain(t *testing.T) {
	chain, err := NewChain("lash:sources=all,dor:dims=4x4:torus=1x0,updn", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Engine{LASH{Config: LASHConfig{AllSources: true}}, DOR{Config: DORConfig{Dims: []int32{4, 4}, Torus: []bool{true, false}}}, UpDn{}}
	if !reflect.DeepEqual(chain, want) {
		t.Fatalf("chain %+v, want %+v", chain, want)
	}
	// Shared parameters go to every engine that takes them; an engine's
	// own spec wins.
	chain, err = NewChain("lash,dor-nodateline:torus=0,dor", map[string]string{"sources": "all", "torus": "1", "dims": "8"})
	if err != nil {
		t.Fatal(err)
	}
	want = []Engine{LASH{Config: LASHConfig{AllSources: true}}, DOR{NoDateline: true, Config: DORConfig{Dims: []int32{8}, Torus: []bool{false}}},
		DOR{Config: DORConfig{Dims: []int32{8}, Torus: []bool{true}}}}
	if !reflect.DeepEqual(chain, want) {
		t.Fatalf("shared: chain %+v, want %+v", chain, want)
	}
	for _, c := range []struct {
		spec   string
		shared map[string]string
		want   string
	}{
		{"nosuch", nil, `unknown engine "nosuch"`},
		{"updn:sources=all", nil, `updn: unknown parameter "sources": the engine takes no parameters`},
		{"lash:source=all", nil, `lash: unknown parameter "source", expected sources`},
		{"lash:sources=some", nil, `lash: parameter sources: unknown value "some", expected terminals or all`},
		{"lash,updn", map[string]string{"share": "none"}, `parameter share=none: no engine of the chain "lash,updn" takes "share" (lash takes sources)`},
		{"updn,minhop", map[string]string{"x": "1"}, `its engines take no parameters`},
		{"dor:dims=4y4", nil, `dor: dims "4y4": "4y4" is not a size`},
		{"dor:dims=4x4:torus=1", nil, `dor: torus 1: 1 flags for 2 dimensions`},
		{"dor:dateline=off", nil, `use engine "dor-nodateline"`},
		{"dor:dateline=maybe", nil, `dor: parameter dateline: unknown value "maybe", expected on or off`},
	} {
		_, err := NewChain(c.spec, c.shared)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewChain(%q, %v): %v, want %q", c.spec, c.shared, err, c.want)
		}
	}
	var pe *ParamError
	if _, err := NewChain("lash:sources=some", nil); !errors.As(err, &pe) || pe.Engine != "lash" || pe.Name != "sources" {
		t.Errorf("error %v is not a ParamError naming lash and sources", err)
	}
	if chain, err := ParseChain("updn, minhop"); err != nil || len(chain) != 2 {
		t.Errorf("ParseChain: %v, %v", chain, err)
	}
}

func TestParamsHelp(t *testing.T) {
	h := ParamsHelp()
	for _, want := range []string{"  lash:\n    sources=terminals|all", "  dor, dor-nodateline:\n    dims=VALUE"} {
		if !strings.Contains(h, want) {
			t.Errorf("ParamsHelp lacks %q:\n%s", want, h)
		}
	}
}

func TestParseParam(t *testing.T) {
	if k, v, err := ParseParam(" share = none"); err != nil || k != "share" || v != "none" {
		t.Errorf("ParseParam: %q %q %v", k, v, err)
	}
	for _, s := range []string{"share", "=none", ""} {
		if _, _, err := ParseParam(s); err == nil {
			t.Errorf("ParseParam(%q) accepted", s)
		}
	}
}
