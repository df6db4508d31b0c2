// Package nue implements Nue routing: deadlock-free, destination-based
// routing on the complete channel dependency graph (Domke, Hoefler,
// Matsuoka, "Routing on the Dependency Graph: A New Approach to
// Deadlock-Free High-Performance Routing", HPDC 2016; Domke's dissertation,
// 2017, §4 and Algorithm 4.1 of the summary in seed 001).
//
// Outline (Algorithm 4.1):
//
//  1. The destination LIDs are partitioned into k virtual layers (k = the VL
//     limit); SL = layer, SL2VL is the identity. A layer routes its
//     terminal LIDs first, in LID order in indirect networks and spread
//     over the layer (bit-reversed switch rank) in direct ones, then its
//     switch LIDs.
//  2. Per layer, the root is the switch of highest betweenness centrality
//     (Brandes 2001) inside the convex subgraph of the layer's destination
//     switches; a spanning tree from the root, built with the current
//     channel weights, gives escape paths whose turns are marked used in the
//     layer's complete CDG before any routing.
//  3. Per destination, a modified Dijkstra grows the tree of next hops from
//     the destination outwards. A switch may join through a turn already in
//     use; an unused turn only if it closes no cycle among the used turns
//     (checked incrementally with a dynamic topological order,
//     Marchetti-Spaccamela, Nanni & Rohnert, IPL 59, 1996); otherwise the
//     turn is blocked for the layer.
//     Turns a destination tries but does not keep are released again. When
//     switches stay unreached, a local backtracking step reroutes one
//     neighbour; when that fails too, the unreached sources fall back to
//     the escape paths, whose turns are used already, joining the routes
//     found where a turn allows (the whole destination where none does).
//     While loads stay below
//     the initial weight, the Dijkstra settles switches level by level
//     from the destination; the sweep (sweep.go) does that without a
//     queue and with the same result, leaving the Dijkstra whatever leaves
//     that pattern.
//  4. The channel weights grow by the number of LIDs routed over each
//     channel, starting at (number of LIDs)² so shortest paths win.
//
// The used turns of a layer stay acyclic by construction, and every path of
// the layer only uses used turns, so each layer's CDG is acyclic: the
// routing is deadlock-free for any connected topology and any k ≥ 1.
//
// Layers are independent apart from the shared channel weights. By default
// (schedule "sequential") destinations are routed one at a time, layers
// taking turns, each against the weights of all before it; switch LIDs,
// routed last, add no weight, so each layer's run on one worker, the layers
// side by side, with the same result. In direct networks the LIDs of one switch in one
// layer share one search (share "switch"); elsewhere only a switch's own
// LID joins a terminal LID's search of its switch and layer (share
// "switchlid"; see nue/README.md). The result does not depend on the
// number of workers.
package nue
