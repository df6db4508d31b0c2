package topo

import "github.com/nuesm/nuesm/fabric"

// directLIDs rejects, before anything is built, a direct network of
// switches switches with hosts hosts each whose endpoints (one LID per
// switch and per host) would not fit the unicast LID range. Used by the
// Dragonfly, flattened butterfly, Slim Fly, NovaCube and RSI generators.
func directLIDs(kind string, switches, hosts int) error {
	if need := int64(switches) * int64(1+hosts); need > fabric.MaxUnicastLID {
		return paramError(kind, "%d switches with %d hosts each need %d LIDs, more than the %d unicast LIDs", switches, hosts, need, fabric.MaxUnicastLID)
	}
	return nil
}
