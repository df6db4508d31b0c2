// Package rsi implements the routing-table side of the RSI rack-scale
// interconnect (Lai et al., "RSI: A High-Efficient and Fault-Tolerant
// Interconnection for Resources-Pooling in Rack Scale", seed 000):
//
//   - the two-level routing tables of §IV-A (Fig. 4): per node a layer-1
//     table T1 with one entry per other node of its super node and a
//     super-node table T2 with one entry per other super node, each entry
//     holding every minimal output port (Build, Tables), or one port by
//     dimension order inside super nodes (BuildWith, DimOrder);
//   - the table-size comparison of §IV-A (47 flat entries against 15 + 2
//     for 3 super nodes of 16 nodes) and the hop counts of two-level
//     routing (§VI) (Tables.Sizes, Tables.Hops, FlatLFT);
//   - the fault discovery and recovery of §V (Algorithms 2 and 3): how FD
//     packets invalidate table entries after a node or link failure, which
//     nodes hear of it, which pairs lose every route, and how FR packets
//     restore the tables (Simulate).
//
// Everything here is deterministic and does no I/O. The super nodes are
// the groups of a generated topology (topo.Topology.Group), so the tables
// work for any grouped fabric (RSI, Dragonfly), not only topo.RSI.
package rsi
