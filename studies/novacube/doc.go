// Package novacube analyses NovaCube (seed 004, Wang et al. 2016) against
// the torus it extends: diameter and average path length by BFS over the
// generated fabric, link counts, bisection cuts and ideal uniform
// throughput bounds (§4.2), the expected path length of PORA's
// probabilistic routing (§5.1), and a virtual-channel audit of PORA (§5.3)
// that builds the channel dependency graph of every path PORA may take
// under several VC schemes and asks cdg.FindCycle whether it is acyclic.
//
// The deterministic PORA tables are the routing engine "pora" (package
// routing); this package holds the analysis. Everything is deterministic,
// does no I/O and is safe for concurrent use.
package novacube
