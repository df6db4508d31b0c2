package main

import "github.com/nuesm/nuesm/sm"

// servePlugins wires the update planner and the SLURM job source into the
// daemon.
func servePlugins(cfg sm.Config) []sm.Option {
	return nil
}
