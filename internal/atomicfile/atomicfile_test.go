package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	for i, want := range []string{"first\n", "second, longer content\n", ""} {
		err := WriteFile(path, func(w io.Writer) error {
			_, err := io.WriteString(w, want)
			return err
		}, 0o640)
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("write %d: content %q, want %q", i, got, want)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", st.Mode().Perm())
		}
		if names := entries(t, dir); len(names) != 1 || names[0] != "out.txt" {
			t.Fatalf("directory holds %v, want only out.txt", names)
		}
	}
}

func TestWriteFileErrorKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, strings.Repeat("partial ", 100000))
		return boom
	}, 0o644)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the writer's error", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old\n" {
		t.Fatalf("old file changed to %q", got[:min(len(got), 40)])
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("temporary file left behind: %v", names)
	}
}

func TestWriteFilePanicRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.txt")
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic did not propagate")
			}
		}()
		_ = WriteFile(path, func(w io.Writer) error { panic("writer bug") }, 0o644)
	}()
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "f")
	err := WriteFile(path, func(io.Writer) error { return nil }, 0o644)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a wrapped ErrNotExist", err)
	}
	if err := WriteFile(t.TempDir()+"/", func(io.Writer) error { return nil }, 0o644); err == nil {
		t.Fatal("directory path accepted")
	}
}

func TestWriteFileRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := WriteFile("rel.txt", func(w io.Writer) error {
		_, err := io.WriteString(w, "x")
		return err
	}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile("rel.txt"); string(got) != "x" {
		t.Fatalf("got %q", got)
	}
}

// TestWriteFileOverDirectory: a path that is a non-empty directory fails
// the rename; the error names the path once and no temporary file stays.
func TestWriteFileOverDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }, 0o644)
	if err == nil || strings.Count(err.Error(), path) != 1 || !strings.Contains(err.Error(), "rename") {
		t.Fatalf("err = %v, want the rename's error naming %s once", err, path)
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != "f" {
		t.Errorf("left behind: %v", got)
	}
}
