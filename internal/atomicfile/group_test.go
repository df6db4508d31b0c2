package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// group returns files a, b and c holding s, with b's write failing when
// failB.
func group(s string, failB bool) []File {
	var files []File
	for _, name := range []string{"a", "b", "c"} {
		files = append(files, File{Name: name, Write: func(w io.Writer) error {
			if name == "b" && failB {
				return errors.New("b failed")
			}
			_, err := io.WriteString(w, s)
			return err
		}})
	}
	return files
}

func readAll(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	for _, name := range []string{"a", "b", "c"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	return got
}

// TestWriteFilesAllOrNone: a group replaces every file, and a write that
// fails, or a target that is a directory, leaves every file as it was
// (the first file is not renamed before the last one is written) and no
// temporary file behind.
func TestWriteFilesAllOrNone(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFiles(dir, group("old", false), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, group("new", true), 0o644); err == nil || err.Error() != "b failed" {
		t.Fatalf("err = %v, want b's", err)
	}
	if got := readAll(t, dir); !slices.Equal(got, []string{"old", "old", "old"}) {
		t.Fatalf("after a failed write: %q", got)
	}
	if err := os.Remove(filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, group("new", false), 0o644); err == nil {
		t.Fatal("a directory in the way of the last file: no error")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "old" {
		t.Fatalf("a = %q after a directory was in c's way", b)
	}
	if err := os.Remove(filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(dir, group("new", false), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, dir); !slices.Equal(got, []string{"new", "new", "new"}) {
		t.Fatalf("after a good write: %q", got)
	}
	if es := entries(t, dir); !slices.Equal(es, []string{"a", "b", "c"}) {
		t.Fatalf("directory holds %q", es)
	}
}
