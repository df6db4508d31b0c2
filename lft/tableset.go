package lft

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nuesm/nuesm/fabric"
)

// Names of the files of a table set, as nuesm route and the daemon write
// them.
const (
	LFTsFile  = "opensm-lfts.dump"
	SLFile    = "nuesm.sl"
	SL2VLFile = "opensm-sl2vl.dump"
)

// ReadTableSet reads a table set: a directory holding LFTsFile, or an LFT
// dump (OpenSM's or ibroute output) given as a file. SLFile and SL2VLFile
// next to the dump are read when present; without them the routing keeps
// SL 0 and the identity SL2VL (one VL), as OpenSM's own dumps have none.
func ReadTableSet(path string, g *fabric.Graph, opt ReadOptions) (*Routing, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	dump, dir := path, filepath.Dir(path)
	if st.IsDir() {
		dump, dir = filepath.Join(path, LFTsFile), path
	}
	f, err := os.Open(dump)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadLFTs(f, dump, g, opt)
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
	if p := filepath.Join(dir, SL2VLFile); present(p) {
		m, err := ReadOpenSMSL2VLFile(p, g)
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
