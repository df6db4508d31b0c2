package cdg_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestSourcesCountWalkedPorts: the report's source count is the ports whose
// paths are walked: CA ports on switches (plus the switches when they send
// too), not a CA pair cabled to each other beside the fabric.
func TestSourcesCountWalkedPorts(t *testing.T) {
	tp, err := topo.Ring(3, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ibnetdiscover.Write(&b, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	b.WriteString(`
caguid=0x2c90400000001
Ca	1 "H-0002c90400000001"		# "a"
[1](2c90400000002) 	"H-0002c90400000010"[1] (2c90400000011) 		# lid 40 lmc 0 "b" lid 41 4xHDR

caguid=0x2c90400000010
Ca	1 "H-0002c90400000010"		# "b"
[1](2c90400000011) 	"H-0002c90400000001"[1] (2c90400000002) 		# lid 41 lmc 0 "a" lid 40 4xHDR
`)
	res, err := ibnetdiscover.Parse(&b, "ring3+pair")
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Terms) != 5 {
		t.Fatalf("%d terminal ports, want 3 on switches + 2 cabled to each other", len(g.Terms))
	}
	r, err := routing.MinHop{}.Route(context.Background(), g, routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  cdg.Options
		want int
	}{
		{cdg.Options{MaxVLs: 1}, 3},
		{cdg.Options{MaxVLs: 1, SwitchDelivery: true}, 6},
	} {
		rep, err := cdg.Verify(g, r, c.opt)
		if err != nil {
			t.Fatalf("%+v: %v\n%s", c.opt, err, rep)
		}
		if rep.Sources != c.want {
			t.Errorf("%+v: %d sources, want %d", c.opt, rep.Sources, c.want)
		}
	}
}
