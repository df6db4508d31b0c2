// Package interop holds engine-level interoperability tests against the
// real OpenSM, ibsim and infiniband-diags (see internal/ibtest): our
// engines' tables loaded into OpenSM's file engine and read back from the
// simulated switches, and OpenSM's own tables read by our verifier. It has
// no code of its own besides the tests.
package interop
