// Package atomicfile replaces files so that readers see either the old or
// the new content, never a partial write, and the new content survives a
// crash once WriteFile has returned.
//
// The recipe: create a temporary file in the target's directory, write it
// (buffered), fsync it, rename it over the target, fsync the directory. On
// any error the temporary file is removed and the target is left as it was.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile writes path atomically. write is called once with a buffered
// writer on a temporary file in path's directory; when it returns nil the
// buffer is flushed, the file is synced, given mode perm (exactly perm, the
// umask does not apply) and renamed over path, and the directory is synced.
//
// If write or any step fails, the temporary file is removed, path is left
// unchanged, and the error is returned (write's error as is; the others
// wrapped with the step and path). A panic in write also removes the
// temporary file before it propagates.
func WriteFile(path string, write func(io.Writer) error, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return fmt.Errorf("atomicfile: %q names a directory, expected a file path", path)
	}
	tmpName, err := writeTemp(dir, base, path, write, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmpName, path); err != nil {
		_ = os.Remove(tmpName)
		return fmt.Errorf("atomicfile: %w", err) // os.LinkError names both paths
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("atomicfile: %s written, but syncing its directory failed: %w", path, err)
	}
	return nil
}

// File is one file of a group WriteFiles writes: its name in the
// directory and what it holds.
type File struct {
	Name  string
	Write func(io.Writer) error
}

// WriteFiles writes files into dir as one group: each is written to a
// temporary file beside its target and synced, and only once all are
// written are they renamed over their targets, in order, and the
// directory synced. A write that fails, or a target that is a directory,
// leaves every target as it was, so that a set of files that belong
// together (tables, their SLs, a summary) never mixes an old and a new
// one; only a rename failing partway (the file system failing) can.
func WriteFiles(dir string, files []File, perm os.FileMode) (err error) {
	tmps := make([]string, 0, len(files))
	defer func() {
		if err != nil {
			for _, t := range tmps {
				_ = os.Remove(t)
			}
		}
	}()
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if st, err := os.Lstat(path); err == nil && st.IsDir() {
			return fmt.Errorf("atomicfile: %s is a directory, expected a file", path)
		}
		tmp, err := writeTemp(dir, f.Name, path, f.Write, perm)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], filepath.Join(dir, f.Name)); err != nil {
			tmps = tmps[i:]
			return fmt.Errorf("atomicfile: %w (%d of %d files of the group renamed)", err, i, len(files))
		}
	}
	tmps = nil
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("atomicfile: %d files written into %s, but syncing it failed: %w", len(files), dir, err)
	}
	return nil
}

// writeTemp writes a synced temporary file for path (base in dir) with
// mode perm and returns its name; on failure nothing stays behind.
func writeTemp(dir, base, path string, write func(io.Writer) error, perm os.FileMode) (name string, err error) {
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("atomicfile: create temporary file for %s: %w", path, err)
	}
	tmpName := tmp.Name()
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmpName)
		}
	}()
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if err := write(bw); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("atomicfile: write %s: %w", tmpName, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return "", fmt.Errorf("atomicfile: chmod %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("atomicfile: sync %s: %w", tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("atomicfile: close %s: %w", tmpName, err)
	}
	done = true
	return tmpName, nil
}

// syncDir fsyncs a directory so that a rename in it is durable. File
// systems that cannot sync directories (EINVAL) are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}
