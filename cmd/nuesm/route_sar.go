package main

import (
	"fmt"
	"io"

	"github.com/nuesm/nuesm/sar"
)

// sarSummary is summary.json's "sar" part.
type sarSummary struct {
	Jobs         []sarJobJSON `json:"jobs"`
	EffectiveEFI int64        `json:"effective_efi"`
	MaxJobEFI    int64        `json:"max_job_efi"`
	DarkFiberPct float64      `json:"dark_fiber_percent"`
	DarkCables   int          `json:"dark_cables"`
	Cables       int          `json:"cables"`
}

type sarJobJSON struct {
	ID           string `json:"id"`
	Terminals    int    `json:"terminals"`
	Paths        int64  `json:"paths"`
	EffectiveEFI int64  `json:"effective_efi"`
}

func newSARSummary(m *sar.Metrics) *sarSummary {
	s := &sarSummary{EffectiveEFI: m.EffectiveEFI, MaxJobEFI: m.MaxJobEFI, DarkFiberPct: m.DarkFiber,
		DarkCables: m.DarkCables, Cables: m.Cables, Jobs: []sarJobJSON{}}
	for _, j := range m.Jobs {
		s.Jobs = append(s.Jobs, sarJobJSON{ID: j.ID, Terminals: j.Terminals, Paths: j.Paths, EffectiveEFI: j.EffectiveEFI})
	}
	return s
}

// printSAR prints the SAR metrics of a routing for its jobs.
func printSAR(w io.Writer, m *sar.Metrics) {
	fmt.Fprintf(w, "SAR: %d jobs, effective EFI %d (largest of one job %d), dark fiber %.1f%% (%d of %d cables)\n",
		len(m.Jobs), m.EffectiveEFI, m.MaxJobEFI, m.DarkFiber, m.DarkCables, m.Cables)
	for _, j := range m.Jobs {
		fmt.Fprintf(w, "  job %-12s %4d terminals  effective EFI %d\n", j.ID, j.Terminals, j.EffectiveEFI)
	}
}
