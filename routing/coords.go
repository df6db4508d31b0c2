package routing

// SwitchCoords reads the coordinates at the end of a switch description,
// "<anything> (x,y,…)", as the topo generators write them, for engines
// outside this package that recognise a shape from them (the pora engine
// of studies/novacube). ok is false when the description does not end in a
// parenthesised list of non-negative integers.
func SwitchCoords(desc string) (c []int32, ok bool) { return parseCoords(desc) }
