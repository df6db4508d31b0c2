// Package enginetest is the conformance suite of the routing engines: one
// table of fabrics (every generator family at small and medium size, the
// ibnetdiscover corpus, fabrics with failed links) run against every
// registered engine, checking that each engine either refuses the fabric
// the way its contract allows (routing.ErrNotApplicable, *routing.VLError)
// or returns tables that cdg.Verify accepts: every connected pair
// delivered, no loops or dead ends, and, for engines that claim deadlock
// freedom, an acyclic channel dependency graph within the VL limit.
//
// The package's one non-test file, reference.go, is a deliberately naive
// reference of what cdg.Verify computes (delivery per pair and the set of
// dependencies between virtual channels, walked pair by pair with maps and
// no memoisation). The conformance suite and cdg's reference tests compare
// the verifier's optimised report with it.
package enginetest
