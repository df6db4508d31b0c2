package lft

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// Names of the files of a table set, as nuesm route and the daemon write
// them.
const (
	CompactLFTsFile = "nuesm.lft"         // the LFTs, compact (LFTFORMAT.md): the set's record of them
	LFTsFile        = "opensm-lfts.dump"  // the LFTs for opensm -R file -U (TableSet.OpenSMLFTs)
	SLFile          = "nuesm.sl"          // the SL of every path (SLFORMAT.md)
	SL2VLFile       = "nuesm.sl2vl"       // the SL2VL tables (SL2VLFORMAT.md)
	OpenSMSL2VLFile = "opensm-sl2vl.dump" // the SL2VL tables in OpenSM's dump form, as older sets hold them
	QoSPolicyFile   = "qos-policy.conf"   // every path SL as OpenSM QoS rules (when a policy can hold them)
	FabricFile      = "fabric.topo"       // the dump the tables are for
	SummaryFile     = "summary.json"
)

// TableSet is a routing as the files a subnet manager loads (LFTs, SLs,
// SL2VL, QoS policy), with the dump it was computed for and a summary.
// nuesm route and the daemon both write their sets from it, so one
// routing gives the same bytes from either.
type TableSet struct {
	Graph   *fabric.Graph
	Routing *Routing
	// Fabric is the dump's text, written as FabricFile so that plan, diff
	// and verify find the fabric beside the tables; nil writes none.
	Fabric []byte
	// Summary is written as indented JSON to SummaryFile; nil writes none.
	Summary any
	// OpenSMLFTs adds LFTsFile, the LFTs as OpenSM's file engine loads
	// them, beside CompactLFTsFile (which every set has: readers take
	// it). It is the largest file by far: write it where OpenSM reads it.
	OpenSMLFTs bool

	policyOK *bool // whether a QoS policy holds the SLs (computed once)
}

// File is one file of a table set.
type File struct {
	Name  string
	Key   string // the file's key in a summary: lfts, opensm_lfts, sl, sl2vl, qos_policy, fabric
	Write func(io.Writer) error
	// Data is the content when it is at hand (the fabric), so that a
	// writer may link an identical file instead of writing it again.
	Data []byte
}

// Tables lists the table files of the set: LFTs (compact, and OpenSM's
// dump when OpenSMLFTs), SLs, SL2VL, and the QoS policy serving every
// path's SL (per destination, per source switch, per pair:
// WriteQoSPolicyPaths) unless no policy can hold them (see OpenSMNotes).
func (ts *TableSet) Tables() []File {
	g, r := ts.Graph, ts.Routing
	files := []File{{Name: CompactLFTsFile, Key: "lfts", Write: func(w io.Writer) error { return WriteCompactLFTs(w, g, r) }}}
	if ts.OpenSMLFTs {
		files = append(files, File{Name: LFTsFile, Key: "opensm_lfts", Write: func(w io.Writer) error { return WriteOpenSMLFTs(w, g, r) }})
	}
	files = append(files,
		File{Name: SLFile, Key: "sl", Write: func(w io.Writer) error { return WriteSL(w, g, r) }},
		File{Name: SL2VLFile, Key: "sl2vl", Write: func(w io.Writer) error { return WriteSL2VL(w, g, r) }})
	if ts.hasPolicy() {
		files = append(files, File{Name: QoSPolicyFile, Key: "qos_policy", Write: func(w io.Writer) error { return WriteQoSPolicyPaths(w, g, r) }})
	}
	return files
}

// hasPolicy reports whether a QoS policy can hold the routing's SLs.
func (ts *TableSet) hasPolicy() bool {
	if ts.policyOK == nil {
		ok := WriteQoSPolicyPaths(io.Discard, ts.Graph, ts.Routing) == nil
		ts.policyOK = &ok
	}
	return *ts.policyOK
}

// OpenSMNotes says what of the routing OpenSM cannot deliver as written:
// path SLs no QoS policy holds, SL2VL tables per switch port (OpenSM
// programs one map per port kind from qos_*sl2vl), and more than 8 VLs
// (OpenSM masks the SL2VL map to each port's operational VLs, VL i &
// 7 on ports operating 8 VLs).
func (ts *TableSet) OpenSMNotes() []string {
	g, r := ts.Graph, ts.Routing
	var notes []string
	if err := WriteQoSPolicyPaths(io.Discard, g, r); err != nil {
		notes = append(notes, fmt.Sprintf("no %s: OpenSM's SA cannot serve these SLs (%v); hosts would use SL 0", QoSPolicyFile, err))
	}
	for s, t := range r.SL2VL.Switch {
		if t != nil {
			notes = append(notes, fmt.Sprintf("switch %s has SL2VL tables per port pair; OpenSM programs one SL2VL map per port kind (qos_*sl2vl), so it cannot deliver these tables", g.SwitchName(int32(s))))
			break
		}
	}
	if v := r.MaxVL() + 1; v > 8 {
		notes = append(notes, fmt.Sprintf("the routing uses %d VLs: every port must operate at least VL0-%d (OpenSM's max_op_vls 5 and the hardware's VLCap), else OpenSM maps SL i to VL i mod 8 and the routing is not deadlock-free; qos_sl2vl must be %s",
			v, v-1, sl2vlList(r.SL2VL.Default)))
	}
	return notes
}

func sl2vlList(m [NumSLs]uint8) string {
	b := make([]byte, 0, 48)
	for i, v := range m {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%d", v)
	}
	return string(b)
}

// Files lists every file of the set in the order WriteDir writes them:
// the fabric, the tables, the summary last (so that a summary means a
// complete set).
func (ts *TableSet) Files() []File {
	var files []File
	if ts.Fabric != nil {
		files = append(files, File{Name: FabricFile, Key: "fabric", Data: ts.Fabric, Write: func(w io.Writer) error { _, err := w.Write(ts.Fabric); return err }})
	}
	files = append(files, ts.Tables()...)
	if ts.Summary != nil {
		files = append(files, File{Name: SummaryFile, Key: "summary", Write: func(w io.Writer) error { return WriteJSON(w, ts.Summary) }})
	}
	return files
}

// Keys maps the keys of the set's files, the summary aside, to their
// names, as summaries list them.
func (ts *TableSet) Keys() map[string]string {
	m := map[string]string{}
	for _, f := range ts.Files() {
		if f.Name != SummaryFile {
			m[f.Key] = f.Name
		}
	}
	return m
}

// WriteDir writes the set into dir (created if needed) as one group:
// every file is written beside its target first, and only then are they
// renamed into place, so that a failed write leaves an earlier set whole
// instead of new tables beside old SLs and summary. It then removes the
// files of an earlier set that this one does not have: a stale QoS
// policy would contradict nuesm.sl, a stale OpenSM dump the tables.
func (ts *TableSet) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var files []atomicfile.File
	for _, f := range ts.Files() {
		files = append(files, atomicfile.File{Name: f.Name, Write: f.Write})
	}
	if err := atomicfile.WriteFiles(dir, files, 0o644); err != nil {
		return fmt.Errorf("table set %s: %w", dir, err)
	}
	stale := []string{OpenSMSL2VLFile}
	if !ts.OpenSMLFTs {
		stale = append(stale, LFTsFile)
	}
	if !ts.hasPolicy() {
		stale = append(stale, QoSPolicyFile)
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// WriteJSON writes v as indented JSON, the form of every summary and
// status file.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// FabricPath returns where the set at path (a directory, or a file in it)
// keeps its fabric dump, and whether it is there.
func FabricPath(path string) (string, bool) {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	p := filepath.Join(dir, FabricFile)
	_, err := os.Stat(p)
	return p, err == nil
}

// ReadTableSet reads a table set: a directory holding CompactLFTsFile
// or, as older sets do, only LFTsFile; or an LFT file given as a file (a
// compact one, OpenSM's dump or ibroute output). SLFile and the SL2VL
// tables (SL2VLFile, or OpenSMSL2VLFile where SL2VLFile is absent) next
// to it are read when present; without them the routing keeps SL 0 and
// the identity SL2VL (one VL), as OpenSM's own dumps have none.
func ReadTableSet(path string, g *fabric.Graph, opt ReadOptions) (*Routing, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	lfts, dir := path, filepath.Dir(path)
	if st.IsDir() {
		lfts, dir = filepath.Join(path, CompactLFTsFile), path
		if !present(lfts) {
			lfts = filepath.Join(path, LFTsFile)
		}
	}
	r, err := ReadLFTsFile(lfts, g, opt)
	if err != nil {
		return nil, err
	}
	if p := filepath.Join(dir, SLFile); present(p) {
		sl, n, err := ReadSLFile(p, g)
		if err != nil {
			return nil, err
		}
		r.SL, r.NumVLs = sl, n
	}
	p := filepath.Join(dir, SL2VLFile)
	if !present(p) {
		p = filepath.Join(dir, OpenSMSL2VLFile)
	}
	if present(p) {
		m, err := ReadSL2VLFile(p, g)
		if err != nil {
			return nil, err
		}
		r.SL2VL = m
	}
	return r, nil
}

// present reports whether p exists; other stat errors count as present so
// that reading it reports them.
func present(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}
