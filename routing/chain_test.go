package routing

import (
	"context"
	"errors"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// TestVerifyOptions: one definition of verified, switch delivery included
// unless the engine promises CA traffic only.
func TestVerifyOptions(t *testing.T) {
	for _, c := range []struct {
		e              Engine
		switchDelivery bool
	}{{nil, true}, {UpDn{}, true}, {LASH{}, true}, {Ftree{}, false}} {
		o := VerifyOptions(c.e, Options{})
		if o.SwitchDelivery != c.switchDelivery || o.MaxVLs != DefaultMaxVLs || o.Workers < 1 {
			t.Errorf("%T: %+v", c.e, o)
		}
	}
	if o := VerifyOptions(UpDn{}, Options{MaxVLs: 3, Workers: 2}); o.MaxVLs != 3 || o.Workers != 2 {
		t.Errorf("limits not kept: %+v", o)
	}
}

// brokenEngine routes with MinHop and then takes away a top switch's route
// to another top switch's LID: no CA packet passes there (its shortest
// paths to that LID go up once), a switch's own packets do.
type brokenEngine struct{}

func (brokenEngine) Name() string       { return "broken" }
func (brokenEngine) DeadlockFree() bool { return false }
func (brokenEngine) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	r, err := MinHop{}.Route(ctx, g, opt)
	if err != nil {
		return nil, err
	}
	var tops []int32
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if g.TermOff[s] == g.TermOff[s+1] {
			tops = append(tops, s)
		}
	}
	r.Engine = "broken"
	r.Row(tops[0])[g.F.Port(fabric.PortRef{Node: g.Switches[tops[1]], Port: 0}).LID] = lft.NoPort
	return r, nil
}

// TestRouteChainVerifies: the chain refuses tables that drop a switch's own
// packets (and says why), accepts ftree's, whose promise is CA traffic,
// and RouteUnverified hands out the first tables with the verifier's
// verdict.
func TestRouteChainVerifies(t *testing.T) {
	tp, err := topo.FatTree(4, 2, 0)
	g := blTopo(t)(tp, err)
	res, err := RouteChain(context.Background(), g, []Engine{brokenEngine{}, Ftree{}}, Options{})
	if err != nil || res.Routing.Engine != "ftree" || len(res.Attempts) != 2 || res.Attempts[0].Err == nil || res.Attempts[0].Report == nil {
		t.Fatalf("chain: %v, %+v", err, res)
	}
	if _, err := cdg.Verify(g, res.Routing, cdg.Options{SwitchDelivery: true}); err == nil {
		t.Fatal("ftree's tables deliver every switch's packets: the test shows nothing")
	}
	res, err = RouteChain(context.Background(), g, []Engine{brokenEngine{}}, Options{})
	if !errors.Is(err, ErrChainFailed) || res == nil || res.Routing != nil || len(res.Attempts) != 1 {
		t.Fatalf("broken alone: %v, %+v", err, res)
	}
	res, err = RouteUnverified(context.Background(), g, []Engine{brokenEngine{}, Ftree{}}, Options{})
	if err != nil || res.Routing == nil || res.Routing.Engine != "broken" || res.Attempts[0].Err == nil || res.Report.OK() {
		t.Fatalf("unverified: %v, %+v", err, res)
	}
	if res, err := RouteChain(context.Background(), g, []Engine{Ftree{}}, Options{MaxVLs: 99}); err == nil || res == nil {
		t.Fatalf("99 VLs: %v, %v", res, err)
	}
}

// TestRouteChainKeepsState: with KeepState the accepted routing comes
// with the verifier's State (the same report as without), from which
// the same tables verify again walking no destination.
func TestRouteChainKeepsState(t *testing.T) {
	tp, err := topo.FatTree(4, 2, 0)
	g := blTopo(t)(tp, err)
	plain, err := RouteChain(context.Background(), g, []Engine{brokenEngine{}, UpDn{}}, Options{})
	if err != nil || plain.State != nil {
		t.Fatalf("without KeepState: %v, State %v", err, plain.State != nil)
	}
	res, err := RouteChain(context.Background(), g, []Engine{brokenEngine{}, UpDn{}}, Options{KeepState: true})
	if err != nil || res.State == nil || res.Report.String() != plain.Report.String() {
		t.Fatalf("with KeepState: %v, State %v, report\n%s\nexpected\n%s", err, res.State != nil, res.Report, plain.Report)
	}
	rep, next, err := VerifyState(g, res.Routing, UpDn{}, Options{}, res.State)
	if err != nil || next == nil || next.Walked() != 0 || rep.String() != res.Report.String() {
		t.Fatalf("the same tables against their State: %v, State kept %v", err, next != nil)
	}
}

// TestAutoWorkers: a chain left to choose its workers routes small
// fabrics on one goroutine, larger ones on all; a count given stays.
func TestAutoWorkers(t *testing.T) {
	tp, err := topo.Random(128, 4, 8, 1)
	small := dlGraph(t, tp, err) // 128 switches × 1,153 LIDs
	tp, err = topo.Torus([]int{8, 8, 8}, 4, false)
	large := dlGraph(t, tp, err) // 512 × 2,561
	for _, c := range []struct {
		g        *fabric.Graph
		in, want int
	}{{small, 0, 1}, {small, 3, 3}, {large, 0, 0}, {large, 1, 1}} {
		if got := autoWorkers(c.g, Options{Workers: c.in}).Workers; got != c.want {
			t.Errorf("%d switches, workers %d: got %d, want %d", c.g.NumSwitches(), c.in, got, c.want)
		}
	}
}
