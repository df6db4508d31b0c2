package main

import "github.com/nuesm/nuesm/sm"

// servePlugins wires the update planner (plugins_plan.go) and the SLURM job
// source (plugins_slurm.go) into the daemon.
func servePlugins(cfg sm.Config) ([]sm.Option, error) {
	var opts []sm.Option
	p, err := planPlugin(cfg)
	if err != nil {
		return nil, err
	}
	opts = append(opts, p...)
	j, err := slurmPlugin(cfg)
	if err != nil {
		return nil, err
	}
	return append(opts, j...), nil
}
