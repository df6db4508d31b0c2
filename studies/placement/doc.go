// Package placement places I/O nodes in tori with Lee-distance codes and
// assigns compute nodes to them (seed 003, Azeez 2005).
//
// A torus T_{k_0×k_1×…} has one node per switch, numbered with dimension 0
// fastest exactly like topo.Torus numbers its switches, so node i of a
// placement is switch i (and its hosts) of the generated fabric.
//
// What the package offers, with the seed's sections:
//   - LeeDistance and SphereVolume (§2.3, eq. 3.2);
//   - Perfect: the codewords X·Hᵀ ≡ 0 (mod p) when p divides every radix
//     (§3.1.1), with H = (1, 2t+1) in 2D, H = (1, 2, 3) mod 7 in 3D (t = 1)
//     and H = (1) in 1D, applied to the address (x_{n−1}, …, x_0);
//   - RQP, relaxed quasi-perfect (§3.1.2–3.1.5), including the k mod p = 1
//     case (halve, place, replicate twice);
//   - QP, quasi-perfect (Def. 2: disjoint radius-t spheres, every node
//     within t+1): the cited k-resources-in-a-k×k-torus scheme, X·Hᵀ ≡ 0
//     (mod k) (Fig. 3's 8 I/O nodes in Q_8^2); QPCut, RQP's cut code thinned
//     to disjoint spheres; QPGreedy, a lexicographic greedy packing (the
//     seed cites [3] but gives no construction, so all three are offered);
//   - WithCount, a placement of exactly W I/O nodes by deletion or
//     addition (§3.2);
//   - Base, the edge-plane placement (§2.1.3);
//   - Assign: every compute node to an I/O node, per-I/O load, distance
//     histogram (§3.1.5 step 3);
//   - Failover: reassignment when I/O nodes fail, ties X-line first, and
//     the affected region (§4.2–4.4).
//
// # Roles file
//
// WriteRoles writes a placement for routing and the simulator as text,
// one node per line; '#' starts a comment:
//
//	roles v1 dims=8x8 method=rqp t=1 io=13
//	node 0 (0,0) io 0 0
//	node 1 (1,0) compute 0 1
//
// After the header, each node line holds the node (switch) index, its
// coordinates (dimension 0 first, as in topo switch descriptions), its role
// (io, compute, or failed: a failed I/O node whose router still forwards),
// the index of the I/O node serving it (itself for an I/O node, -1 for a
// failed one) and the Lee distance to that I/O node. Every node appears
// once, in index order. ReadRoles parses the format back.
//
// Everything here is deterministic and does no I/O besides the io.Writer
// and io.Reader it is given. Functions are safe for concurrent use.
package placement
