package placement

import (
	"fmt"
	"os"
	"strings"

	"github.com/nuesm/nuesm/fabric"
)

// ReadRolesFile reads the roles file at path (errors name it).
func ReadRolesFile(path string) (*Roles, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadRoles(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ServeBySwitch maps the roles onto fabric g, switch i being torus node i
// (as topo's torus generator numbers them): serve[i] is i for an I/O node,
// -1 for a failed I/O node (its switch still forwards, its nodes idle) and
// the serving I/O node for a compute node, the input of
// flitsim.Network.IONodesBySwitch. Switches whose names carry coordinates
// must match the file's.
func (r *Roles) ServeBySwitch(g *fabric.Graph) ([]int, error) {
	if S := g.NumSwitches(); S != len(r.Nodes) {
		return nil, fmt.Errorf("roles of a %s torus (%d nodes) on a fabric of %d switches", r.Torus, len(r.Nodes), S)
	}
	serve := make([]int, len(r.Nodes))
	for i, nr := range r.Nodes {
		sw := g.SwitchName(int32(i))
		if label := r.Torus.Label(i); strings.Contains(sw, "(") && !strings.Contains(sw, label) {
			return nil, fmt.Errorf("node %d is %s, but switch %d of the fabric is %q", i, label, i, sw)
		}
		switch nr.Role {
		case "io":
			serve[i] = i
		case "failed":
			serve[i] = -1
		default:
			serve[i] = nr.IO
		}
	}
	return serve, nil
}
