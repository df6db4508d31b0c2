package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/studies/placement"
)

// registerRoles adds --roles, the I/O assignment of the io pattern read
// from a placement roles file (nuesm study placement --roles FILE).
func registerRoles(fl *pflag.FlagSet, rf *runFlags) {
	fl.StringVar(&rf.roles, "roles", "", "io: I/O nodes and their compute nodes from a roles file (nuesm study placement --roles), instead of --io-every")
}

// rolesIONodes reads a roles file and maps it onto n: torus node i is
// switch i of the fabric (as topo's torus generator numbers them), an I/O
// node's CAs are I/O nodes, a compute node's CAs send their I/O messages
// to the CAs of their serving I/O node and a failed I/O node's CAs are
// idle (its switch still forwards). Switches whose names carry
// coordinates must match the file's.
func rolesIONodes(path string, n *flitsim.Network) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := placement.ReadRoles(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return roleTargets(r, n, path)
}

// roleTargets is rolesIONodes after reading; name labels the errors.
func roleTargets(r *placement.Roles, n *flitsim.Network, name string) ([]int32, error) {
	g := n.Graph()
	if S := g.NumSwitches(); S != len(r.Nodes) {
		return nil, fmt.Errorf("%s: roles of a %s torus (%d nodes) on a fabric of %d switches", name, r.Torus, len(r.Nodes), S)
	}
	serve := make([]int, len(r.Nodes))
	for i, nr := range r.Nodes {
		sw := g.SwitchName(int32(i))
		if label := r.Torus.Label(i); strings.Contains(sw, "(") && !strings.Contains(sw, label) {
			return nil, fmt.Errorf("%s: node %d is %s, but switch %d of the fabric is %q", name, i, label, i, sw)
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
	io, err := n.IONodesBySwitch(serve)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return io, nil
}
