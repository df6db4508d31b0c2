package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/studies/placement"
)

// registerRoles adds --roles, the I/O assignment of the io pattern read
// from a placement roles file (nuesm study placement --roles FILE).
func registerRoles(fl *pflag.FlagSet, rf *runFlags) {
	fl.StringVar(&rf.roles, "roles", "", "io: I/O nodes and their compute nodes from a roles file (nuesm study placement --roles), instead of --io-every")
}

// rolesIONodes reads a roles file and maps it onto n
// (placement.Roles.ServeBySwitch, flitsim.Network.IONodesBySwitch).
func rolesIONodes(path string, n *flitsim.Network) ([]int32, error) {
	r, err := placement.ReadRolesFile(path)
	if err != nil {
		return nil, err
	}
	serve, err := r.ServeBySwitch(n.Graph())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	io, err := n.IONodesBySwitch(serve)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io, nil
}
