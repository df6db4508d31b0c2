package plan

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// MarshalText names the kind in JSON.
func (k StepKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// MarshalText names the strategy in JSON.
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// PlanJSON is a plan for files and tools (plan.json, nuesm plan --json):
// switches by name and GUID, LFT writes grouped per switch.
type PlanJSON struct {
	Metrics      Metrics      `json:"metrics"`
	MaxVLs       int          `json:"max_vls"`
	AllowReorder bool         `json:"allow_reorder"`
	Steps        []StepJSON   `json:"steps"`
	Dests        []DestPlan   `json:"destinations,omitempty"`
	Blackout     []int32      `json:"blackout_dlids,omitempty"`
	Verify       *ReportJSON  `json:"verify,omitempty"`
	Note         string       `json:"note,omitempty"`
	Fallback     *DrainReport `json:"drain_fallback,omitempty"`
}

// DrainReport says which destinations need the drain phase.
type DrainReport struct {
	Dests  []int32 `json:"dlids"`
	Pairs  int64   `json:"pairs"`
	Reason string  `json:"reason"`
}

// StepJSON is one step of a PlanJSON.
type StepJSON struct {
	Index  int           `json:"index"` // 1-based
	Kind   StepKind      `json:"kind"`
	Note   string        `json:"note"`
	Blocks int           `json:"lft_blocks,omitempty"`
	LFT    []SwitchWrite `json:"lft,omitempty"`
	SL     []SLJSON      `json:"sl,omitempty"`
	SL2VL  []string      `json:"sl2vl,omitempty"` // switches whose SL2VL tables are written ("default" for the default map)
	Paused []PausedJSON  `json:"paused,omitempty"`
}

// SwitchWrite is the LFT writes of one switch in one step.
type SwitchWrite struct {
	Switch  string   `json:"switch"`
	GUID    string   `json:"guid"`
	Blocks  []int    `json:"blocks"`
	Entries [][3]int `json:"entries"` // [LID, old port, new port]; 255 = no route
}

// SLJSON is one SL change: from every source ("*"), from one source
// switch's terminals, or for one source LID.
type SLJSON struct {
	DLID int    `json:"dlid"`
	From string `json:"from"`
	SLID int    `json:"slid,omitempty"`
	Old  uint8  `json:"old"`
	New  uint8  `json:"new"`
}

// PausedJSON is the pairs one Pause or Resume step names for a
// destination.
type PausedJSON struct {
	DLID    int32 `json:"dlid"`
	Sources int   `json:"source_switches"`
	Pairs   int64 `json:"pairs"`
}

// JSON describes p with g's names.
func (p *Plan) JSON(g *fabric.Graph) *PlanJSON {
	out := &PlanJSON{Metrics: p.Metrics(), MaxVLs: p.MaxVLs, AllowReorder: p.AllowReorder, Dests: p.Dests,
		Blackout: p.Blackout, Steps: make([]StepJSON, 0, len(p.Steps))}
	name := func(s int32) string {
		if s < 0 || int(s) >= g.NumSwitches() {
			return fmt.Sprintf("switch %d", s)
		}
		return g.SwitchName(s)
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		j := StepJSON{Index: i + 1, Kind: s.Kind, Note: s.Note, Blocks: s.Blocks()}
		for k := 0; k < len(s.LFT); {
			sw := s.LFT[k].Switch
			w := SwitchWrite{Switch: name(sw)}
			if sw >= 0 && int(sw) < g.NumSwitches() {
				w.GUID = fmt.Sprintf("0x%016x", g.F.Nodes[g.Switches[sw]].GUID)
			}
			for ; k < len(s.LFT) && s.LFT[k].Switch == sw; k++ {
				e := s.LFT[k]
				if b := lft.Block(int(e.LID)); len(w.Blocks) == 0 || w.Blocks[len(w.Blocks)-1] != b {
					w.Blocks = append(w.Blocks, b)
				}
				w.Entries = append(w.Entries, [3]int{int(e.LID), int(e.Old), int(e.New)})
			}
			j.LFT = append(j.LFT, w)
		}
		for _, c := range s.SL {
			from := "*"
			if c.Src >= 0 {
				from = name(c.Src)
			}
			j.SL = append(j.SL, SLJSON{DLID: c.DLID, From: from, SLID: c.SLID, Old: c.Old, New: c.New})
		}
		for _, c := range s.SL2VL {
			n := "default"
			if c.Switch >= 0 {
				n = name(c.Switch)
			}
			j.SL2VL = append(j.SL2VL, n)
		}
		for _, pa := range s.Paused {
			j.Paused = append(j.Paused, PausedJSON{DLID: pa.DLID, Sources: len(pa.Sources), Pairs: pa.Pairs})
		}
		out.Steps = append(out.Steps, j)
	}
	return out
}

// ReportJSON is a Report for files and tools.
type ReportJSON struct {
	Safe         bool             `json:"safe"`
	Pairs        int64            `json:"pairs"`
	ChangedPairs int64            `json:"changed_pairs"`
	LostPairs    int64            `json:"lost_pairs"`
	Blackout     int64            `json:"blackout_pairs,omitempty"`
	ReorderPairs int64            `json:"reorder_pairs"`
	VLsUsed      int              `json:"vls_used"`
	VLLimit      int              `json:"vl_limit"`
	Obligations  []Obligation     `json:"obligations"`
	Steps        []StepCheckJSON  `json:"steps"`
	Epochs       []EpochCheckJSON `json:"epochs"`
	Shape        []string         `json:"shape_problems,omitempty"`
}

// StepCheckJSON is what Verify found for one step.
type StepCheckJSON struct {
	Index   int      `json:"index"`
	Kind    StepKind `json:"kind"`
	Writes  int      `json:"lft_writes"`
	Units   int      `json:"write_units"`
	Method  string   `json:"method"` // "exhaustive" or "union"
	States  int      `json:"states,omitempty"`
	Loops   int64    `json:"loop_pairs,omitempty"`
	Dropped int64    `json:"dropped_pairs,omitempty"`
	Unsafe  int      `json:"unsafe_states,omitempty"`
	Cycle   string   `json:"state_cycle,omitempty"`
	Example string   `json:"example,omitempty"`
}

// EpochCheckJSON is the in-flight dependency check of one epoch.
type EpochCheckJSON struct {
	From         int    `json:"from_step"`
	To           int    `json:"to_step"`
	Dependencies int    `json:"dependencies"`
	Cycle        string `json:"cycle,omitempty"`
	Drops        int64  `json:"dead_ends,omitempty"`
}

// JSON describes r.
func (r *Report) JSON() *ReportJSON {
	out := &ReportJSON{Safe: r.OK(), Pairs: r.Pairs, ChangedPairs: r.ChangedPairs, LostPairs: r.LostPairs, Blackout: r.BlackoutPairs,
		ReorderPairs: r.ReorderPairs, VLsUsed: r.VLsUsed, VLLimit: r.VLLimit, Obligations: r.Obligations, Shape: r.Shape}
	for _, s := range r.Steps {
		j := StepCheckJSON{Index: s.Index, Kind: s.Kind, Writes: s.Writes, Units: s.Units, Method: "union",
			States: s.States, Loops: s.Loops, Dropped: s.Dropped, Unsafe: s.StateFailures, Example: s.Example}
		if s.States > 0 {
			j.Method = "exhaustive"
		}
		if s.Kind != Write {
			j.Method = ""
		}
		if s.StateCycle != nil {
			j.Cycle = s.StateCycle.Error()
		}
		out.Steps = append(out.Steps, j)
	}
	for _, e := range r.Epochs {
		j := EpochCheckJSON{From: e.From, To: e.To, Dependencies: e.Dependencies, Drops: e.Drops}
		if e.Cycle != nil {
			j.Cycle = e.Cycle.Error()
		}
		out.Epochs = append(out.Epochs, j)
	}
	return out
}
