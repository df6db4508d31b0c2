package lft

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nuesm/nuesm/fabric"
)

// DeltaReport is a Delta for people and JSON: switches by name, blocks per
// switch, SL changes grouped by destination. Build it with Report.
type DeltaReport struct {
	OldEngine string            `json:"old_engine,omitempty"`
	NewEngine string            `json:"new_engine,omitempty"`
	Summary   DeltaSummary      `json:"summary"`
	Switches  []SwitchDeltaJSON `json:"switches"`
	SL        []DestSLDeltaJSON `json:"sl,omitempty"`
	SL2VL     []SL2VLDeltaJSON  `json:"sl2vl,omitempty"`
	Truncated bool              `json:"truncated,omitempty"` // entry lists cut at the limit given to Report
}

// SwitchDeltaJSON is one switch of a DeltaReport.
type SwitchDeltaJSON struct {
	Name    string   `json:"name"`
	GUID    string   `json:"guid"`
	Changed int      `json:"entries_changed"`
	Blocks  []int    `json:"blocks"`
	Entries [][3]int `json:"entries,omitempty"` // [LID, old port, new port]; 255 = no route
}

// DestSLDeltaJSON is the SL change of one destination LID: per
// destination (Sources empty) or for the listed source switches.
type DestSLDeltaJSON struct {
	DLID    int      `json:"dlid"`
	Old     []uint8  `json:"old"` // distinct old SLs
	New     []uint8  `json:"new"` // distinct new SLs
	Sources []string `json:"sources,omitempty"`
	Pairs   int      `json:"pairs,omitempty"` // per-pair exceptions among the changes
}

// SL2VLDeltaJSON is one switch (or "default") whose SL2VL mapping changes.
type SL2VLDeltaJSON struct {
	Switch  string `json:"switch"`
	Entries int    `json:"entries_changed"`
}

// Report describes d with g's names. maxEntries caps the LFT entries
// listed per switch (0: none, <0: all) and the source switches listed per
// SL change.
func (d *Delta) Report(g *fabric.Graph, maxEntries int) *DeltaReport {
	rep := &DeltaReport{OldEngine: d.OldEngine, NewEngine: d.NewEngine, Summary: d.Summary(),
		Switches: make([]SwitchDeltaJSON, 0, len(d.Switches))}
	rep.Summary.TotalEntries = int64(g.NumSwitches()) * int64(d.Stride)
	for _, sw := range d.Switches {
		j := SwitchDeltaJSON{Name: g.SwitchName(sw.Switch), GUID: fmt.Sprintf("0x%016x", sw.GUID),
			Changed: len(sw.Entries), Blocks: sw.Blocks}
		for i, e := range sw.Entries {
			if maxEntries >= 0 && i >= maxEntries {
				rep.Truncated = rep.Truncated || maxEntries > 0
				break
			}
			j.Entries = append(j.Entries, [3]int{e.LID, int(e.Old), int(e.New)})
		}
		rep.Switches = append(rep.Switches, j)
	}
	for i := 0; i < len(d.SL); {
		k := i
		for k < len(d.SL) && d.SL[k].DLID == d.SL[i].DLID {
			k++
		}
		j := DestSLDeltaJSON{DLID: d.SL[i].DLID}
		var oldSet, newSet [NumSLs]bool
		for _, c := range d.SL[i:k] {
			oldSet[c.Old&0xF], newSet[c.New&0xF] = true, true
			if c.SLID != 0 {
				j.Pairs++
			}
			if c.Src >= 0 && (maxEntries < 0 || len(j.Sources) < maxEntries) {
				j.Sources = append(j.Sources, g.SwitchName(c.Src))
			}
		}
		for sl := uint8(0); sl < NumSLs; sl++ {
			if oldSet[sl] {
				j.Old = append(j.Old, sl)
			}
			if newSet[sl] {
				j.New = append(j.New, sl)
			}
		}
		rep.SL = append(rep.SL, j)
		i = k
	}
	for _, c := range d.SL2VL {
		name := "default"
		if c.Switch >= 0 {
			name = g.SwitchName(c.Switch)
		}
		rep.SL2VL = append(rep.SL2VL, SL2VLDeltaJSON{Switch: name, Entries: c.Entries})
	}
	return rep
}

// WriteText renders the report: the summary, then up to maxSwitches
// switches with their changed blocks (and entries, when the report holds
// them), then the SL and SL2VL changes.
func (r *DeltaReport) WriteText(w io.Writer, maxSwitches int) error {
	s := r.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	if r.OldEngine != "" || r.NewEngine != "" {
		row("engines", "%s -> %s", orDash(r.OldEngine), orDash(r.NewEngine))
	}
	pct := 0.0
	if s.TotalEntries > 0 {
		pct = 100 * float64(s.Entries) / float64(s.TotalEntries)
	}
	row("LFT entries", "%d changed of %d (%.2f%%: every switch's entries for LIDs 0..max) on %d switches, %d destination LIDs", s.Entries, s.TotalEntries, pct, s.Switches, s.Dests)
	row("LFT blocks", "%d to write (64 entries each: a subnet manager writes whole blocks)", s.Blocks)
	row("SLs", "%d path SLs changed for %d destinations", s.SLChanges, s.SLDests)
	sl2vl := fmt.Sprintf("%d switches, %d entries", s.SL2VLSwitches, s.SL2VLEntries)
	if s.DefaultSL2VL {
		sl2vl += "; default map changed"
	}
	row("SL2VL", "%s", sl2vl)
	row("VLs", "%d -> %d", s.OldVLs, s.NewVLs)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Switches) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "switch\tentries\tblocks")
		for i, sw := range r.Switches {
			if maxSwitches >= 0 && i >= maxSwitches {
				fmt.Fprintf(tw, "… %d more switches\t\t\n", len(r.Switches)-i)
				break
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\n", sw.Name, sw.Changed, intList(sw.Blocks, 12))
			for _, e := range sw.Entries {
				fmt.Fprintf(tw, "  LID %d\t%s -> %s\t\n", e[0], portText(e[1]), portText(e[2]))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for i, c := range r.SL {
		if maxSwitches >= 0 && i >= maxSwitches {
			fmt.Fprintf(w, "SL: … %d more destinations\n", len(r.SL)-i)
			break
		}
		who := "every source"
		if len(c.Sources) > 0 {
			who = strings.Join(c.Sources, ", ")
		}
		fmt.Fprintf(w, "SL: LID %d: %v -> %v (%s)\n", c.DLID, c.Old, c.New, who)
	}
	for _, c := range r.SL2VL {
		fmt.Fprintf(w, "SL2VL: %s: %d entries\n", c.Switch, c.Entries)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func portText(p int) string {
	if p == int(NoPort) {
		return "none"
	}
	return fmt.Sprint(p)
}

// intList prints up to n numbers and how many more there are.
func intList(xs []int, n int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == n {
			fmt.Fprintf(&b, " … (%d more)", len(xs)-n)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}
