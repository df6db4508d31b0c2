package main

import "github.com/nuesm/nuesm/sm"

// planPlugin returns the daemon option installing the update planner.
// TODO(issue 5): adapter from package plan to sm.Planner.
func planPlugin(cfg sm.Config) ([]sm.Option, error) { return nil, nil }
