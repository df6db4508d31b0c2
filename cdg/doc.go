// Package cdg builds channel dependency graphs (CDGs) and proves routings
// safe.
//
// A channel is one direction of a switch-to-switch cable (fabric.Graph
// channel ids). A virtual channel is a (channel, VL) pair, numbered
// c*numVLs + vl. A routing creates a dependency from virtual channel a to b
// when some path leaves a switch on b right after arriving on a. Dally and
// Seitz (IEEE ToC 36(5), 1987): a deterministic routing is deadlock-free if
// its CDG over virtual channels is acyclic. When VLs do not change along a
// path the CDG splits into one graph per VL and this is the familiar
// "acyclic per VL" condition; with per-hop SL2VL changes (DOR's dateline)
// the cross-VL edges are kept and checked too.
//
// Verify follows every (source, destination) pair through the forwarding
// tables and checks delivery, loop freedom, dead ends, the VL limit and CDG
// acyclicity. A packet's path depends on its switch and destination only,
// so the next hops towards one destination form a forest: each switch is
// settled once per destination, and each (switch, VL) of the delivered
// paths sets its dependency once. A destination that some source cannot
// reach, and tables whose SL2VL may change the VL along a path, are walked
// source switch by source switch, which also finds why packets are lost.
// Cycle search is iterative (no recursion), so CDGs of millions of edges
// are fine.
//
// VerifyState also keeps a State: per dependency the number of
// destinations whose paths have it, and a topological order of the CDG.
// State.Verify then checks a routing that differs in a few destinations
// (a repair after a failed cable or switch) by walking only those, in the
// old tables and the new, and inserting the dependencies it gains into
// the order (Pearce and Kelly), with the report a full Verify gives.
// State.RepairBase hands a repair the CDG of the destinations a failure
// left intact.
package cdg
