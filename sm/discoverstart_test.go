package sm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/topo"
)

// discoveringDeployer stands for the deployer's discovery: it writes the
// dump once the daemon's watch has seen it missing, then triggers.
type discoveringDeployer struct {
	s     func() *Server
	write func()
}

func (d *discoveringDeployer) Run(ctx context.Context, trigger func(string)) error {
	for ctx.Err() == nil {
		if s := d.s(); s != nil && strings.Contains(strings.Join(s.Status().Problems, "\n"), "fabric dump") {
			d.write()
			trigger("fabric-discovered")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-ctx.Done()
	return nil
}
func (d *discoveringDeployer) Publish(int, string) {}
func (d *discoveringDeployer) Status() any         { return nil }
func (d *discoveringDeployer) Deployed() int       { return 0 }

// TestStartAwaitsDiscovery: when the deployer's discovery writes the
// dump, a first start without it routes once the dump is there, with no
// failed reroute before (it was logged as an error at every first start).
func TestStartAwaitsDiscovery(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "fabric.topo")
	var srv *Server
	ready := make(chan struct{})
	dep := &discoveringDeployer{
		s: func() *Server {
			select {
			case <-ready:
				return srv
			default:
				return nil
			}
		},
		write: func() { tp, err := topo.Torus([]int{4, 4}, 1, false); writeFabric(t, fab, tp, err) },
	}
	cfg := Config{Fabric: fab, Output: filepath.Join(dir, "out"), Engines: "dor"}
	cfg.OpenSM.Enabled, cfg.OpenSM.Discover = true, true
	srv = start(t, cfg, WithDeployer(dep))
	close(ready)
	st := waitFor(t, srv, "publish", func(st Status) bool { return st.Published != nil && st.LastResult == resultPublished })
	if st.Failures != 0 {
		t.Fatalf("%d failed reroutes before the dump was discovered (last: %q)", st.Failures, st.LastError)
	}
}
