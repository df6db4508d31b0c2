// Package flitsim is a cycle-driven, flit-level simulator of a lossless
// InfiniBand-style fabric. It replays any lft.Routing (computed by an
// engine or read from OpenSM dumps) and turns routing claims into
// measured throughput, latency, link loads and deadlocks.
//
// # Model
//
// Nodes are the CA (and router) ports of the fabric; each has one link to
// its switch. Every link carries at most one flit per cycle, scaled by
// Config.LinkBandwidth, and delivers it after its latency (LinkLatency, or
// per channel ChannelLatency: latency classes such as a Dragonfly's local
// and global cables; InjectLatency for node links), plus PipelineDelay
// when it enters a switch: the switch can forward the flit from then on.
// Credits travel back with the link's latency. RouteStall makes every
// packet wait in route computation and VC allocation once it heads its
// input VC, blocking that VC (BookSim2's routing and VC allocation
// delays); bench/flitsim/booksim.md maps BookSim2's knobs onto these.
//
//   - Input-queued switches and CA ports: one buffer of BufferFlits flits
//     per input port and VL, with credit-based flow control per VL. CAs
//     keep one unbounded source queue per VL and drain what they receive
//     at once.
//   - Switching: virtual cut-through (a packet starts on an output VL only
//     with credits for all of it, the InfiniBand rule) or wormhole (one
//     credit per flit).
//   - Forwarding: the LFT entry of the destination's base LID at every
//     switch; the VL of every hop is SL2VL.VL(switch, in port, out port,
//     SL), the injection VL SL2VL.InjectVL(SL), so a VL may change per hop
//     (datelines, layers). A traffic class may shift all its VLs by a
//     fixed offset.
//   - Crossbar: separable allocation, VC (output VL) allocation then
//     switch allocation, round-robin or iSLIP-style iterative (see
//     Allocator and alloc.go). An input VL forwards one packet at a time;
//     with Queueing VOQ it may start any packet whose output port no older
//     packet of the same buffer targets, with FIFO only the oldest. Each
//     input port sends and each output port receives at most one flit per
//     cycle.
//   - Output VL arbitration: round-robin, or InfiniBand high/low priority
//     tables with weights and the limit of high priority (VLArbitration).
//     Under virtual cut-through links send whole packets, as InfiniBand
//     links do: a started packet keeps its output link and its switch
//     input until its tail (weights are still counted in flits). Wormhole
//     interleaves VLs flit by flit, as virtual channels do.
//
// # Routing policies
//
// Network.WithRouting replaces the LFT by a per-hop Policy: when a head
// flit arrives, the switch's Router picks the output port from the
// packet's state (hop counters, phase bit, intermediate group) and its
// view of the output queues (flits waiting here for a port plus the
// downstream buffer's fill, from credits), and a VCPolicy may assign every
// hop's VL instead of SL2VL. The interfaces are defined here, by their
// consumer; this package implements the LFT (LFTPolicy) and the
// group-adaptive rules MIN-adaptive, Valiant, UGAL and the conditional
// rules of seed 002 §V-D (NewAdaptive) over a Minimal relation; the seed
// studies implement LAR (studies/rsi, seed 000 Algorithm 1), PORA
// (studies/novacube, seed 004 §5.1) and the VC rules (studies/vcpolicy),
// and register them by name for PolicySpec. Random choices draw from a
// PCG stream per switch. The LFT policy gives results identical to the
// plain Network. Bound walks LFT paths only.
//
// Everything is deterministic for a seed: every source draws from its own
// PCG stream (math/rand/v2), the event order within a cycle is fixed, and
// no map is iterated. Runs allocate nothing per flit once warmed up:
// state lives in dense arrays indexed by link, VL and buffer entry, events
// in a timing wheel whose buckets keep their capacity. Idle components
// are skipped: only switches and sources with a possible move run in a
// cycle, and the clock jumps over cycles where nothing is scheduled.
//
// # Traffic and measurement
//
// Traffic selects the destination pattern (uniform, shift all-to-all,
// permutations, hot spot, nearest neighbour, Dragonfly adversarial, RSI
// super-node hot spot, super-node-local, compute/I-O), the arrival process (Bernoulli,
// exponential, Weibull) at an offered load, message sizes and classes.
// Open-loop runs measure packets created in a window after a warm-up and
// drain them; finite patterns report their completion time. Every figure
// is over the window (Result documents the invariants the tests assert),
// and a verdict says whether the network accepted the offered load: past
// saturation a bounded source queue (RunOptions.SourceQueue) refuses
// messages, which keeps memory bounded and marks the run unstable.
//
// A deadlock (buffers whose packets can never move) stops the run with a
// *DeadlockError naming a cycle of (link, VL) buffers with switch names
// and ports; every consecutive pair is a channel dependency of the
// routing.
//
// Network.Bound computes the analytic saturation bound, 1/max channel
// load, for the same traffic pattern by walking the LFT paths.
//
// # Use
//
// Compile a Network once per fabric, routing and hardware model, then call
// Run for each load, pattern or seed; Run is safe for concurrent use on a
// shared Network, so a sweep is a loop over Run calls on a worker pool:
//
//	net, err := flitsim.NewNetwork(g, r, flitsim.Config{VLs: 4})
//	res, err := net.Run(ctx, flitsim.Traffic{Pattern: flitsim.Uniform, Load: 0.5}, flitsim.RunOptions{Seed: 1})
//	b, err := net.Bound(flitsim.Traffic{Pattern: flitsim.Uniform}, 1)
//
// Sweep does that for engines × loads × seeds (SweepPoints) and returns
// one Row per point; WriteCSV and MergeRows make the sweep's CSV the same
// whether it ran locally or as separate jobs (one RunPoint each). Package
// flitsim/plot draws the figures.
package flitsim
