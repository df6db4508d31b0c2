package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/lft"
)

// Phases of a rollout (Status.Phase, state.json).
const (
	PhaseIdle     = "idle"      // the switches hold the deployed generation
	PhaseRollout  = "rolling"   // executing a plan
	PhaseStuck    = "stuck"     // a step did not take or did not verify; retried later
	PhaseRefused  = "refused"   // OpenSM cannot deliver the generation
	PhaseNoOpenSM = "no-opensm" // OpenSM is not running
	PhaseStarting = "starting"  // nothing done yet
)

// state is the rollout state machine's persistent part (state.json in
// StateDir): which generation is being rolled out, how far, and what is
// staged. It is written as files are staged and when a rollout ends or
// stops; a restart settles from what the switches hold whatever it says.
type state struct {
	Phase       string    `json:"phase"`
	Target      int       `json:"target_generation"` // generation being rolled out (or last tried)
	TargetDir   string    `json:"target_dir"`
	Deployed    int       `json:"deployed_generation"` // last generation whose every step was proven
	Step        int       `json:"step"`                // steps of the plan done (proven or waited)
	Steps       int       `json:"steps"`
	Staged      int       `json:"staged_step"` // step staged or in progress: the stable files hold its tables or, while its writes go first, the step before's (0: the held state)
	Error       string    `json:"error,omitempty"`
	Updated     time.Time `json:"updated"`
	Plans       int       `json:"plans"` // plans started (for status)
	ProvenSteps int64     `json:"proven_steps"`
}

func (d *Deployer) statePath() string { return filepath.Join(d.cfg.StateDir, "state.json") }

// loadState reads state.json; a missing file is a fresh start.
func (d *Deployer) loadState() (state, error) {
	st := state{Phase: PhaseStarting}
	b, err := os.ReadFile(d.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return state{Phase: PhaseStarting}, fmt.Errorf("%s: %w", d.statePath(), err)
	}
	return st, nil
}

// save writes state.json atomically and publishes the status.
func (d *Deployer) save() error {
	d.st.Updated = time.Now().UTC()
	d.publishStatus()
	return atomicfile.WriteFile(d.statePath(), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d.st)
	}, 0o644)
}

// Files beside the stable paths that keep the staged SLs and SL2VL
// tables (OpenSM serves them from the policy and its configuration;
// these let a restart know them as tables).
const (
	stagedSL    = "staged.sl"
	stagedSL2VL = "staged.sl2vl"
	// olderStagedSL2VL is where earlier versions staged the SL2VL tables
	// (OpenSM's dump form, a row per port pair), read when
	// stagedSL2VL is not there.
	olderStagedSL2VL = "staged-sl2vl.dump"
)

// stage writes r as the tables OpenSM reads: the LFT file, the QoS
// policy, and the SL files kept for restarts. The LFT file is written
// last: it is what a heavy sweep applies. A file that would not change
// is left as it is (each atomic write syncs the disk, and most steps
// change only the LFTs).
func (d *Deployer) stage(g *fabric.Graph, r *lft.Routing) error {
	files := []struct {
		what, path string
		write      func(io.Writer) error
	}{
		{"QoS policy", d.cfg.QoSPolicyFile, func(w io.Writer) error { return lft.WriteQoSPolicyPaths(w, g, r) }},
		{"SLs", filepath.Join(d.cfg.StateDir, stagedSL), func(w io.Writer) error { return lft.WriteSL(w, g, r) }},
		{"SL2VL", filepath.Join(d.cfg.StateDir, stagedSL2VL), func(w io.Writer) error { return lft.WriteSL2VL(w, g, r) }},
		{"LFTs", d.cfg.LFTsFile, func(w io.Writer) error { return lft.WriteOpenSMLFTs(w, g, r) }},
	}
	for _, f := range files {
		if err := writeChanged(f.path, f.write); err != nil {
			return fmt.Errorf("stage %s: %w", f.what, err)
		}
	}
	return nil
}

// writeChanged writes a file atomically unless it already holds what
// write produces.
func writeChanged(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
		return nil
	}
	return atomicfile.WriteFile(path, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }, 0o644)
}

// stagedTables reads what the stable files hold, bound to g (nil when
// there is nothing staged or it does not fit g).
func (d *Deployer) stagedTables(g *fabric.Graph) *lft.Routing {
	f, err := os.Open(d.cfg.LFTsFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	r, err := lft.ReadLFTs(f, d.cfg.LFTsFile, g, lft.ReadOptions{SkipUnknownSwitches: true, AllowMissingSwitches: true})
	if err != nil {
		return nil
	}
	d.heldSLs(g, r)
	return r
}

// heldSLs gives r the staged SLs and SL2VL tables (the ones OpenSM
// serves), or SL 0 and the identity map when none fit g. SLs staged for
// a fabric with more LIDs than g (a generation of another fabric) are
// cut to r's LIDs: a table wider than r's LFTs is no routing one can
// stage or plan with.
func (d *Deployer) heldSLs(g *fabric.Graph, r *lft.Routing) {
	if sl, n, err := lft.ReadSLFile(filepath.Join(d.cfg.StateDir, stagedSL), g); err == nil {
		sl.Resize(r.Stride, len(r.Switches))
		r.SL, r.NumVLs = sl, n
	}
	p := filepath.Join(d.cfg.StateDir, stagedSL2VL)
	if _, err := os.Stat(p); err != nil {
		p = filepath.Join(d.cfg.StateDir, olderStagedSL2VL)
	}
	if m, err := lft.ReadSL2VLFile(p, g); err == nil {
		r.SL2VL = m
	}
}
