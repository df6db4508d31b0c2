package nue

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Spreading layers over VLs. Nue's SL is the destination's layer, so a
// channel's traffic uses only the VLs of the few destinations it carries
// (on a damaged fat tree's busiest channel, one or two). DFSSSP routes
// on fewer layers than VLs and deals each layer's paths over the spare
// VLs by source and destination (OpenSM's behaviour after
// dfsssp_remove_deadlocks), so each channel's traffic has its own buffer
// on most VLs. With Config.Layers below the VL limit Nue does the same:
// it routes that many layers and SpreadVLs deals every layer over the VLs
// the limit leaves. Any subset of a layer's paths is acyclic, so every
// VL's CDG stays acyclic. Whether it pays depends on the traffic (the
// measurements: bench/fip/NOTES.md), so it is a parameter, not the
// default.

// SpreadVLs deals the paths of r's layers (SL = layer, per destination,
// SL2VL the identity, as Nue writes them) over maxVLs VLs: layer L owns a
// contiguous run of VLs, the first maxVLs mod NumVLs layers one more than
// the others, and the path from source switch s to LID d takes the run's
// VL (s + d) mod its length, so each destination's sources and each
// source's destinations rotate over the layer's VLs. The SLs become per
// source switch (lft.SLTable.BySrc). r with as many layers as maxVLs is
// left as it is.
func SpreadVLs(g *fabric.Graph, r *lft.Routing, maxVLs int) error {
	layers := r.NumVLs
	if layers < 1 || maxVLs > lft.NumSLs || layers > maxVLs {
		return fmt.Errorf("nue: spreading %d layers over %d VLs, expected 1 ≤ layers ≤ VLs ≤ %d", layers, maxVLs, lft.NumSLs)
	}
	if layers == maxVLs {
		return nil
	}
	if !r.SL.PerDest() {
		return fmt.Errorf("nue: spreading layers over VLs needs one SL per destination")
	}
	start := make([]int, layers+1)
	for L := range layers {
		n := maxVLs / layers
		if L < maxVLs%layers {
			n++
		}
		start[L+1] = start[L] + n
	}
	layer := r.SL.ByDest
	first := make([]uint8, len(layer)) // a path's VL where no source row applies
	for d, L := range layer {
		if int(L) >= layers {
			return fmt.Errorf("nue: LID %d has SL %d, beyond the %d layers", d, L, layers)
		}
		first[d] = uint8(start[L])
	}
	r.SL = lft.SLTable{ByDest: first}
	S := g.NumSwitches()
	r.SL.EnableBySrc(S)
	for s := range S {
		row := r.SL.SrcRow(int32(s))
		for d, L := range layer {
			lo, n := start[L], start[L+1]-start[L]
			row[d] = uint8(lo + (s+d)%n)
		}
	}
	r.SL.Compact()
	r.NumVLs = maxVLs
	return nil
}
