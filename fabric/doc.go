// Package fabric holds the model of an InfiniBand-style fabric: switches,
// channel adapters (CAs) and routers, their ports, the cables between ports,
// GUIDs, node descriptions and LIDs (with LMC).
//
// A Fabric is plain data: parsers (package ibnetdiscover) and generators
// (package topo) build one with a Builder, Validate checks it, AssignLIDs
// gives LIDs to ports that have none, and Compile produces the dense view
// (Graph) that routing engines work on: int32 switch ids, CSR adjacency of
// the switch graph, channel ids for directed switch-to-switch links and the
// terminals (LID-bearing ports) attached to each switch.
//
// A Fabric is not safe for concurrent mutation; a compiled Graph is
// read-only and safe for concurrent use.
package fabric
