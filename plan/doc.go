// Package plan turns a reroute (old and new lft.Routing of one fabric)
// into a consistent update plan and proves plans safe: Build makes one,
// Verify checks any plan (Build's, OneShot's, a hand-made one), Initial
// and FullDrain are the trivial plans for a first publication and for the
// drain-everything fallback.
//
// The problem is the one of Domke's thesis (../shared/seeds/001, the
// contribution "per-packet consistent network updates for in-order
// delivery and deadlock-freedom", needed because SAR reroutes often): a
// subnet manager writes 64-entry LFT blocks in no order it controls, so
// while switches move from old to new tables packets follow old, new and
// mixed paths. A plan is a list of steps; the writes of one step land in
// any order (each block atomically) and the next step starts when they are
// acknowledged. Barrier steps wait until every packet injected before them
// has left the fabric (delivered or dropped by the switch lifetime limit);
// Pause/Resume steps stop and restart injection of listed pairs.
//
// Every state of every step must be (Verify checks each obligation):
//
//   - loop-free and deliver every connected pair: per destination the
//     union of the entries a step may leave old or new is searched for
//     cycles and dead ends reachable from a source (exact, see
//     walker.static), and small steps are also checked state by state;
//   - deadlock-free: per epoch (steps between barriers) the dependencies of
//     every packet that can be in flight, on any time-monotone mix of old
//     and new entries, SLs and SL2VL tables, form an acyclic graph over
//     (channel, VL) (cdg.FindCycle);
//   - in order per pair: a pair whose path, SL or VLs change is paused
//     (Pause, drain, write, Resume) across every step that changes them.
//     Only a drain orders packets in IB: a fresh SL or VL isolates the
//     transition's dependencies but a packet on the new path can still
//     overtake one on the old path. With Options.AllowReorder (transports
//     that tolerate reordering) changed pairs keep injecting and only loop
//     and deadlock freedom are proven for them.
//
// Build picks per destination LID the cheapest strategy it can prove safe
// (Strategy): unchanged; dark (no pair's path changes); in place with the
// writes ordered in reverse topological order of the new tree, each switch
// after its new next hop (Francois and Bonaventure's loop-free ordering);
// the SL switched before or after the ordered writes, with barriers; a
// fresh transition SL (its own VL) so that the destination's old, new and
// mixed paths are isolated from the rest; and, when none keeps the
// epochs' dependency graphs acyclic within the VL limit, a drain phase.
// Candidates are accepted greedily in LID order against incrementally
// maintained acyclic graphs (dag.go), so the plan is deterministic; the
// LIDs of one switch (same SLs, same changed entries) that cannot move
// one at a time, each blocked by the others' old paths, move together. With
// reordering allowed the drain phase opens first: the drained pairs stay
// paused while the live destinations move, so live moves never have to
// coexist with old paths of drained destinations (in the Nue-to-Nue
// reroutes of the tests a fifth fewer destinations drain on a torus, half
// as many on a Dragonfly; the price is a longer pause for fewer pairs).
//
// BuildLive is for subnet managers that cannot stop hosts (OpenSM): its
// plans have no Pause, every pair injects in every state, and it works
// in stages (rounds of live moves, each proven from the tables the last
// one reached, then a blackout of the destinations no round moves: their
// changed entries are unrouted, so the switches drop what the hosts keep
// sending, and then written). Plan.Blackout lets Verify accept those
// drops while it still checks loops and dependencies with them live.
// When that plan needs transition SLs, rounds or a blackout, BuildLive
// tries a barrier after each level of ordered writes instead, with each
// switch that is rerouted upstream of another changed switch written a
// level before it, and keeps the cheaper plan.
//
// The algorithm code is pure: no I/O, no clock, no global randomness.
package plan
