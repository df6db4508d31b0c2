package flitsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
)

// vcDep is a dependency between virtual channels: a path uses channel c1
// on VL v1, then channel c2 on VL v2.
type vcDep struct {
	c1, c2 int32
	v1, v2 uint8
}

// routingDeps walks the routing's path between every ordered pair of
// terminals with the fabric graph and the routing alone (not the
// simulator) and collects its channel dependencies.
func routingDeps(f *fixture) map[vcDep]bool {
	g, r := f.g, f.r
	deps := map[vcDep]bool{}
	for _, src := range g.Terms {
		for _, dst := range g.Terms {
			if src == dst || src.Switch < 0 || dst.Switch < 0 {
				continue
			}
			sl := r.SL.Of(src.Switch, int(src.LID), int(dst.LID))
			x, in := src.Switch, src.SwitchPort
			prev, prevVL := int32(-1), uint8(0)
			for x != dst.Switch {
				p := r.Port(x, int(dst.LID))
				c := g.ChannelAt(x, p)
				vl := r.SL2VL.VL(x, in, p, sl)
				if prev >= 0 {
					deps[vcDep{prev, c, prevVL, vl}] = true
				}
				prev, prevVL, in, x = c, vl, g.InPort[c], g.Head[c]
			}
		}
	}
	return deps
}

// Deadlock-prone hardware: virtual cut-through with room for one packet
// per VL, or wormhole with short buffers.
var deadlockConfigs = []Config{
	{PacketFlits: 4, BufferFlits: 4, Queueing: FIFO},
	{PacketFlits: 8, BufferFlits: 4, Switching: Wormhole, Queueing: FIFO},
}

// TestDeadlockFound: MinHop on a 5-ring and DOR without datelines on a
// 4×4 torus have cyclic channel dependency graphs; under full uniform
// load they deadlock, and the cycle reported is a cycle of the routing's
// dependencies.
func TestDeadlockFound(t *testing.T) {
	for _, f := range []*fixture{ring5(t, "minhop"), torus(t, 4, "dor-nodateline")} {
		if _, err := cdg.Verify(f.g, f.r, cdg.Options{}); !errors.Is(err, cdg.ErrCycle) {
			t.Fatalf("%s: cdg.Verify = %v, want a dependency cycle", f.r.Engine, err)
		}
		deps := routingDeps(f)
		for ci, cfg := range deadlockConfigs {
			n := network(t, f, cfg)
			for seed := uint64(1); seed <= 2; seed++ {
				name := fmt.Sprintf("%s/%s/cfg%d/seed%d", f.topo.Kind, f.r.Engine, ci, seed)
				res, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 1}, RunOptions{Seed: seed, Warmup: 500, Measure: 60000})
				var de *DeadlockError
				if !errors.As(err, &de) || !errors.Is(err, ErrDeadlock) {
					t.Errorf("%s: err = %v, want a deadlock", name, err)
					continue
				}
				if res == nil || res.Deadlock != de {
					t.Errorf("%s: result does not carry the deadlock", name)
				}
				if len(de.Resources) < 3 {
					t.Errorf("%s: cycle of %d buffers: %v", name, len(de.Resources), de)
					continue
				}
				for i, a := range de.Resources {
					b := de.Resources[(i+1)%len(de.Resources)]
					if n.LinkKind(a.Link) != Channel || !deps[vcDep{a.Link, b.Link, a.VL, b.VL}] {
						t.Errorf("%s: %s => %s is not a dependency of the routing", name, a.Name, b.Name)
					}
					sw := fmt.Sprintf("%q[%d] -> %q[%d]", f.g.SwitchName(f.g.Tail[a.Link]), f.g.OutPort[a.Link], f.g.SwitchName(f.g.Head[a.Link]), f.g.InPort[a.Link])
					if !strings.Contains(a.Name, sw) || (i < 10 && !strings.Contains(de.Error(), a.Name)) {
						t.Errorf("%s: buffer named %q, error %q: want switch names and ports %s", name, a.Name, de.Error(), sw)
					}
					if a.Flits == 0 {
						t.Errorf("%s: buffer %s of the cycle is empty", name, a.Name)
					}
				}
				t.Logf("%s: %v", name, de)
			}
		}
	}
}

// TestNoDeadlock: Nue, DFSSSP and DOR with datelines have acyclic channel
// dependency graphs and never deadlock on the same fabrics and hardware.
func TestNoDeadlock(t *testing.T) {
	for _, f := range []*fixture{ring5(t, "nue"), ring5(t, "dfsssp"), torus(t, 4, "nue"), torus(t, 4, "dfsssp"), torus(t, 4, "dor")} {
		if _, err := cdg.Verify(f.g, f.r, cdg.Options{}); err != nil {
			t.Fatalf("%s: %v", f.r.Engine, err)
		}
		for ci, cfg := range deadlockConfigs {
			n := network(t, f, cfg)
			for seed := uint64(1); seed <= 2; seed++ {
				res, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 1}, RunOptions{Seed: seed, Warmup: 500, Measure: 30000, Drain: 1, DeadlockWindow: 500})
				if err != nil {
					t.Errorf("%s/%s/cfg%d/seed%d: %v", f.topo.Kind, f.r.Engine, ci, seed, err)
					continue
				}
				if res.Accepted < 0.2 {
					t.Errorf("%s/%s/cfg%d: accepted only %.3f flits/cycle/node", f.topo.Kind, f.r.Engine, ci, res.Accepted)
				}
			}
		}
	}
}
