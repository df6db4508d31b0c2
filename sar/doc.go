// Package sar is scheduling-aware routing (SAR; Domke and Hoefler,
// "Scheduling-Aware Routing for Supercomputers", SC16; seed 001 §3): the
// routing engines learn which multi-switch jobs run (routing.Options.Jobs),
// route the destinations inside jobs first and count only intra-job paths
// when balancing, so the paths jobs actually use spread over the fabric.
// sar-nue then moves single table entries of job destinations onto
// another channel whose route is as long, where that lowers the heaviest
// job channel (spread.go): one shortest-path tree per destination sends
// all of a destination's sources down one last channel.
//
// It provides the engines "sar-nue" and "sar-dfsssp" and SAR's metrics:
// the effective edge forwarding index (EFI restricted to intra-job paths,
// per job and over all jobs) and the dark-fiber percentage (cables no
// running job's paths use).
package sar
