package lft

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// qosGUIDsPerLine is the number of GUIDs or GUID ranges per "port-guid:"
// line (a group may have many such lines).
const qosGUIDsPerLine = 8

// WriteQoSPolicy writes r's per-destination SLs as an OpenSM QoS policy
// file (opensm -Q -Y <file>; OpenSM's QoS_management_in_OpenSM.txt, "Full
// QoS Policy File"), so that OpenSM answers PathRecord queries with the
// routing's SLs:
//
//   - port-groups: one group "nuesm-slN" per SL N > 0, listing the port
//     GUIDs of the destinations with that SL (switch port 0 for switch
//     LIDs, CA and router ports), consecutive GUIDs merged into ranges;
//   - qos-levels: DEFAULT with sl 0 (the policy format requires it; it
//     covers every destination with SL 0 and any port unknown to g), and a
//     level "nuesm-slN" with sl N per group;
//   - qos-match-rules: one rule per group, matching by destination only
//     ("destination: nuesm-slN", "qos-level-name: nuesm-slN").
//
// A policy matches ports, not LIDs, and cannot depend on the source: it
// fails with ErrNotPerDest when r.SL is not per destination (a BySrc row
// or a Pair entry differs from ByDest), and with ErrUnwritable when the
// LIDs of one port (LMC > 0) have different SLs. The SL2VL tables are not
// part of a policy file (OpenSM takes them from its options, qos_sl2vl).
func WriteQoSPolicy(w io.Writer, g *fabric.Graph, r *Routing) error {
	if err := r.CheckShape(g); err != nil {
		return err
	}
	if err := perDest(&r.SL); err != nil {
		return err
	}
	bySL := make([][]uint64, NumSLs)
	ports := lidPorts(g)
	slices.SortFunc(ports, func(a, b lidPort) int { return cmpU64(a.guid, b.guid) })
	for _, p := range ports {
		if p.lid == 0 {
			continue
		}
		lo, hi := int(p.lid), int(p.lid)+(1<<p.lmc)-1
		if hi >= len(r.SL.ByDest) {
			return fmt.Errorf("lft: port 0x%016x has LIDs %d-%d beyond the SL table (%d entries): %w",
				p.guid, lo, hi, len(r.SL.ByDest), ErrUnwritable)
		}
		sl := r.SL.ByDest[lo]
		for l := lo + 1; l <= hi; l++ {
			if r.SL.ByDest[l] != sl {
				return fmt.Errorf("lft: port 0x%016x (%s) has SL %d for LID %d and SL %d for LID %d, expected one SL per port (a QoS policy matches ports): %w",
					p.guid, p.desc, sl, lo, r.SL.ByDest[l], l, ErrUnwritable)
			}
		}
		if sl >= NumSLs {
			return fmt.Errorf("lft: port 0x%016x (%s): SL %d, expected 0..15: %w", p.guid, p.desc, sl, ErrUnwritable)
		}
		if p.guid == 0 && sl != 0 {
			return fmt.Errorf("lft: a port of %s with LID %d and SL %d has no port GUID, expected one (a QoS policy names ports by GUID): %w",
				p.desc, lo, sl, ErrUnwritable)
		}
		bySL[sl] = append(bySL[sl], p.guid)
	}

	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "# OpenSM QoS policy written by nuesm: the per-destination SLs of a %q routing\n", r.Engine)
	fmt.Fprintf(bw, "# (%d VLs). Load with: opensm -Q -Y <this file>\n", r.NumVLs)
	bw.WriteString("port-groups\n")
	for sl := 1; sl < NumSLs; sl++ {
		if len(bySL[sl]) == 0 {
			continue
		}
		fmt.Fprintf(bw, "    port-group\n        name: nuesm-sl%d\n        use: destinations whose paths use SL %d\n", sl, sl)
		writeGUIDRanges(bw, bySL[sl])
		bw.WriteString("    end-port-group\n")
	}
	bw.WriteString("end-port-groups\n\nqos-levels\n")
	bw.WriteString("    qos-level\n        name: DEFAULT\n        use: destinations whose paths use SL 0\n        sl: 0\n    end-qos-level\n")
	for sl := 1; sl < NumSLs; sl++ {
		if len(bySL[sl]) > 0 {
			fmt.Fprintf(bw, "    qos-level\n        name: nuesm-sl%d\n        sl: %d\n    end-qos-level\n", sl, sl)
		}
	}
	bw.WriteString("end-qos-levels\n\nqos-match-rules\n")
	for sl := 1; sl < NumSLs; sl++ {
		if len(bySL[sl]) > 0 {
			fmt.Fprintf(bw, "    qos-match-rule\n        use: paths to destinations with SL %d\n        destination: nuesm-sl%d\n        qos-level-name: nuesm-sl%d\n    end-qos-match-rule\n", sl, sl, sl)
		}
	}
	bw.WriteString("end-qos-match-rules\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lft: write QoS policy: %w", err)
	}
	return nil
}

// WriteQoSPolicyFile writes the policy of WriteQoSPolicy to path
// atomically, mode 0644.
func WriteQoSPolicyFile(path string, g *fabric.Graph, r *Routing) error {
	return atomicfile.WriteFile(path, func(w io.Writer) error { return WriteQoSPolicy(w, g, r) }, 0o644)
}

// perDest reports ErrNotPerDest unless every BySrc row and Pair entry
// agrees with ByDest.
func perDest(t *SLTable) error {
	if t.BySrc != nil {
		stride := len(t.ByDest)
		for off := 0; off+stride <= len(t.BySrc); off += stride {
			if !bytes.Equal(t.BySrc[off:off+stride], t.ByDest) {
				return fmt.Errorf("lft: the SL of switch %d's paths depends on the source (SLTable.BySrc), but a QoS policy holds per-destination SLs only: %w",
					off/stride, ErrNotPerDest)
			}
		}
	}
	for k, sl := range t.Pair {
		d := int(k & 0xFFFF)
		if d >= len(t.ByDest) || t.ByDest[d] != sl {
			return fmt.Errorf("lft: the path from LID %d to LID %d has its own SL %d (SLTable.Pair), but a QoS policy holds per-destination SLs only: %w",
				k>>16, d, sl, ErrNotPerDest)
		}
	}
	return nil
}

// writeGUIDRanges writes sorted GUIDs as "port-guid:" lines, merging runs
// of consecutive GUIDs into ranges.
func writeGUIDRanges(bw *bufio.Writer, guids []uint64) {
	var items []string
	for i := 0; i < len(guids); {
		j := i
		for j+1 < len(guids) && guids[j+1] == guids[j]+1 {
			j++
		}
		if j == i {
			items = append(items, fmt.Sprintf("0x%016x", guids[i]))
		} else {
			items = append(items, fmt.Sprintf("0x%016x-0x%016x", guids[i], guids[j]))
		}
		i = j + 1
	}
	for i := 0; i < len(items); i += qosGUIDsPerLine {
		bw.WriteString("        port-guid: ")
		for k, it := range items[i:min(i+qosGUIDsPerLine, len(items))] {
			if k > 0 {
				bw.WriteString(", ")
			}
			bw.WriteString(it)
		}
		bw.WriteByte('\n')
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
