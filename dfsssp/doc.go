// Package dfsssp holds two routing engines: SSSP ("sssp"), balanced
// single-source shortest-path routing, and DFSSSP ("dfsssp"), the same
// paths made deadlock-free by assigning them to virtual layers, from
// Domke, Hoefler, Nagel, "Deadlock-Free Oblivious Routing for Arbitrary
// Topologies", IPDPS 2011, pp. 613–624 (SEEDS.md §001 lists both as
// baselines of the Nue thesis). Every detail below follows OpenSM's
// implementation by the same first author (opensm/osm_ucast_dfsssp.c),
// the DFSSSP that fabrics run, whose choices the engines reproduce
// exactly: our forwarding tables equal OpenSM's, and our layering puts the
// same number of paths in each VL (interop_test.go checks both against
// OpenSM on ibsim, including the 8×8×8 torus and Kautz(7,3) known answers).
//
// # SSSP
//
// Destinations are taken one LID at a time in OpenSM's order
// (dfsssp_do_dijkstra_routing): switches sorted by the number of LIDs they
// answer for (their terminals' LIDs plus their own), most first, ties in
// OpenSM's switch-table order (ascending GUID in network byte order); the
// terminal LIDs of each switch in switch-port order, each port's whole LMC
// range; then the switch LIDs in the same switch order. For each
// destination a Dijkstra from its switch over the channel weights gives
// every switch its next hop; then every channel of the tree gets the LIDs
// behind it added to its weight (each switch adds its own LID count along
// its path, as update_weights does). Weights start at P², P being the
// number of LIDs (terminals and switches, as OpenSM counts), so a shorter
// path wins while the balancing load on a path stays below P², which it
// does on every fabric tried (TestSSSPHopsAreShortest).
//
// Balancing makes destination i depend on the weights after destination
// i−1, so destinations run one after another; what can be made fast is
// each Dijkstra: CSR channels, int32 ids, preallocated scratch, no
// allocation per destination. Equal-cost choices are OpenSM's: switches
// are numbered in its switch-table order and all enter the heap at
// infinity each round (plus the destination CA, joined to its switch at
// cost 1), the heap is four-ary with complib cl_heap's exact tie rules
// (osmheap.go), and a switch keeps the first parent that offered its final
// distance.
//
// # DFSSSP layering
//
// A path is a (source switch, destination LID) pair: every source on one
// switch shares the LFT path, so SLs are per source switch
// (lft.SLTable.BySrc) and SL2VL is the identity. All paths start in layer
// 0. Layers are processed in order; in layer L a depth-first search over
// the layer's channel dependency graph (CDG) looks for a cycle, takes the
// "weakest" dependency on it — the one the fewest source LIDs induce —
// and moves every path of layer L that induces it to layer L+1, then
// resumes. The routing needs as many VLs as layers hold paths; more than
// Options.MaxVLs is a *routing.VLError.
//
// The search follows dfsssp_remove_deadlocks and
// search_cycle_in_channel_dep_graph in every detail that decides the
// outcome: a CDG vertex's dependencies are listed in the order paths first
// induced them (layer 0 lists paths by destination, then source switch
// rank); the search rescans that list, descends into the first unvisited
// successor or reports the first one on the search stack; it restarts at
// the first unvisited vertex in the preorder of OpenSM's unbalanced binary
// search tree of channels (keyed by switch LIDs and ports, built in
// creation order); after a cycle, the cycle's vertices become unvisited
// and the search resumes from the vertex that closed it; the weakest
// dependency is the first of the least count along the cycle; a
// dependency whose paths all left the layer stays in the graph (OpenSM
// only unlinks the one it breaks) and is broken for free when a search
// meets it; moved paths enter the next layer in the order they were listed
// on the broken dependency. Counting source LIDs per path gives OpenSM's
// per-LID-pair counts.
//
// Incremental state (layer.go, cycles.go): turn ids are dense, turn
// (c1 → c2) = tbase[c1] + (c2 − Off[Head[c1]]); a layer keeps per-turn
// counts and links in flat arrays, and per-channel dependency lists in
// fixed slots, so breaking a dependency and moving a path only touch the
// path's turns; the depth-first search is resumed, never restarted, after
// each break (vertices that finished stay finished: dependencies only
// disappear from the layer being searched); only the layer being searched
// and the next one exist at a time. The paths inducing a dependency are
// found from a turn → destinations index and each destination's tree in
// preorder (a subtree is a slice), instead of per-dependency path lists.
//
// Sources are the terminal ports, as in OpenSM, which puts no path from a
// switch's port 0 in a CDG: a switch's own traffic shares the path and SL
// of its terminals, and a switch without terminals sends on layer 0. The
// parameter switchsources=on adds the paths of switches without terminals
// (weight 1, their LID) to the CDGs, so that traffic from every switch LID
// is deadlock-free too; on fat trees that costs a second VL.
//
// The parameter layering=firstfit replaces the cycle breaking: each path,
// in layer 0's listing order, goes to the lowest layer whose CDG stays
// acyclic with its dependencies (firstfit.go). It needs fewer layers on
// tori but is not OpenSM's; the default stays OpenSM's heuristic.
//
// After layering, spare VLs go one at a time to the layer with the most
// pairs per VL, as in OpenSM; OpenSM then draws a VL of the layer's range
// at random per queue pair (get_dfsssp_sl), while here a path's VL is a
// fixed rotation (balance.go), so the engine stays deterministic.
// vlbalance=off uses only the VLs the layering needs.
//
// Other deviations: routers are routed like CAs (OpenSM skips them); with
// LMC > 0, layer 0 lists paths destination LID by destination LID (OpenSM:
// destination port, then source, then LIDs).
//
// By default the engine stops where OpenSM stops: it breaks cycles in
// layers 0..MaxVLs−2 and, when the last layer still has a cycle, reports
// Needed = MaxVLs+1, a lower bound. With vlcount=exact it keeps layering
// up to lft.MaxVLs (15) layers and reports the number used (16 meaning
// "more than 15").
//
// Both engines are pure and deterministic, and use one goroutine: every
// step depends on the one before (weights on the previous destination,
// a layer on the previous layer), so Options.Workers has nothing to
// spread and the result cannot depend on it.
package dfsssp
