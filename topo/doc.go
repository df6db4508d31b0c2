// Package topo generates fabrics of well-known shapes (fat trees, Clos,
// tori, Dragonfly, Slim Fly, NovaCube, RSI, random…), injects failures into
// any fabric, and reports analytic properties the generators know.
//
// Every generator is deterministic (seeded where random), validates its
// parameters, numbers hosts "node0001 HCA-1", "node0002 HCA-1", … and gives
// switches readable descriptions carrying their coordinates or position.
// GUIDs follow ibsim's convention so a generated fabric survives a trip
// through ibsim and ibnetdiscover: switch i has node GUID
// SwitchGUIDBase+i+1, CA i has node GUID CAGUIDBase+2(i+1) and port p has
// port GUID node GUID + p. LIDs are assigned with fabric.AssignLIDs.
package topo
