// Package lft holds the output of routing: per-switch linear forwarding
// tables (LFTs), the service level (SL) of every path and the per-switch
// SL-to-VL mapping, plus the readers and writers of the formats OpenSM and
// infiniband-diags use (opensm-lfts.dump, ibroute, opensm-sl2vl.dump, QoS
// policy), our own compact forms (LFTFORMAT.md, SLFORMAT.md,
// SL2VLFORMAT.md), table sets (TableSet: the files of one routing) and
// diffs.
//
// A Routing is bound to one compiled fabric (fabric.Graph): switch i of the
// Routing is switch i of the Graph. Routings are plain data, safe for
// concurrent reads.
//
// Walker is the one way the project follows a packet through the tables
// (the verifier, the planner, the metrics and the simulator's set-up use
// it), and Reason the one list of ways a packet is lost.
package lft
