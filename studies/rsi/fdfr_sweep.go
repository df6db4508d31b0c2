package rsi

import (
	"fmt"
	"io"
)

// SweepSummary condenses the single-element failures of a sweep: what the
// FD/FR rule leaves broken once the failed element is back.
type SweepSummary struct {
	Rule     FRRule
	Failures int // failures simulated
	// LostAfterFD: pairs without a table route while the element is down
	// (total over the failures, and the largest single figure).
	LostAfterFD, LostAfterFDMax int64
	// Broken counts the failures after which FR leaves some entry invalid
	// or some pair lost; Invalid*, Lost* and Silent* total and maximise
	// those figures over the failures.
	Broken                 int
	Invalid, InvalidMax    int
	InvalidMin             int // least invalid entries among the broken failures
	Lost, LostMax          int64
	Silent, SilentMax      int64
	Examples               []Failure // the first broken failures (up to 3)
	FRPackets, FRRoundsMax int
}

// Sweep fails each element of fs alone (Simulate with recovery) and
// summarises what stays broken after FR.
func Sweep(t *Tables, fs []Failure, opt Options) (SweepSummary, error) {
	s := SweepSummary{Rule: opt.Rule, InvalidMin: -1}
	for _, f := range fs {
		o, err := Simulate(t, []Failure{f}, opt)
		if err != nil {
			return s, err
		}
		s.Failures++
		s.LostAfterFD += o.After.Lost
		s.LostAfterFDMax = max(s.LostAfterFDMax, o.After.Lost)
		s.FRPackets += o.FRPackets
		s.FRRoundsMax = max(s.FRRoundsMax, o.FRRounds)
		r := o.Recovered
		if o.Invalid == 0 && r.Lost == 0 {
			continue
		}
		s.Broken++
		s.Invalid += o.Invalid
		s.InvalidMax = max(s.InvalidMax, o.Invalid)
		if s.InvalidMin < 0 || o.Invalid < s.InvalidMin {
			s.InvalidMin = o.Invalid
		}
		s.Lost += r.Lost
		s.LostMax = max(s.LostMax, r.Lost)
		s.Silent += r.LostSilent
		s.SilentMax = max(s.SilentMax, r.LostSilent)
		if len(s.Examples) < 3 {
			s.Examples = append(s.Examples, f)
		}
	}
	return s, nil
}

// NodeFailures lists every node of t failed alone.
func NodeFailures(t *Tables) []Failure {
	var fs []Failure
	for x := int32(0); int(x) < t.G.NumSwitches(); x++ {
		fs = append(fs, Failure{Kind: FailNode, Node: x})
	}
	return fs
}

// LinkFailures lists every cable of t failed alone.
func LinkFailures(t *Tables) []Failure {
	var fs []Failure
	g := t.G
	for c := int32(0); int(c) < g.NumChannels(); c++ {
		if c < g.Rev[c] {
			fs = append(fs, Failure{Kind: FailLink, Channel: c})
		}
	}
	return fs
}

// SweepHeader is the header of the table WriteSweepRow writes rows of.
const SweepHeader = "| network | failures | FR rule | pairs lost while down: total (max) | broken after FR | entries still invalid: total (per broken failure) | pairs still lost: total (max) | of which silent: total (max) | e.g. |\n|---|---|---|---|---|---|---|---|---|\n"

// WriteSweepRow writes s as one Markdown row.
func WriteSweepRow(w io.Writer, name, what string, t *Tables, s SweepSummary) error {
	per := "–"
	if s.Broken > 0 {
		per = fmt.Sprintf("%d–%d", s.InvalidMin, s.InvalidMax)
		if s.InvalidMin == s.InvalidMax {
			per = fmt.Sprint(s.InvalidMin)
		}
	}
	ex := "–"
	for i, f := range s.Examples {
		if i == 0 {
			ex = ""
		} else {
			ex += "; "
		}
		ex += f.Describe(t.G)
	}
	_, err := fmt.Fprintf(w, "| %s | %d %s | %s | %d (%d) | %d of %d | %d (%s) | %d (%d) | %d (%d) | %s |\n", name, s.Failures, what, s.Rule,
		s.LostAfterFD, s.LostAfterFDMax, s.Broken, s.Failures, s.Invalid, per, s.Lost, s.LostMax, s.Silent, s.SilentMax, ex)
	return err
}
