package main

import "github.com/nuesm/nuesm/sm"

// slurmPlugin returns the daemon option installing the SLURM job source.
// TODO(issue 6): adapter from package slurm to sm.JobSource.
func slurmPlugin(cfg sm.Config) ([]sm.Option, error) { return nil, nil }
