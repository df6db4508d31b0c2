package ibnetdiscover

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// pipePath returns a path that opens the read end of a fresh pipe, as
// the shell's <(command) does, and the write end.
func pipePath(t *testing.T) (string, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	p := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	return p, w
}

// TestReadDumpFileRefuses: the command-line reader fails at once, with
// what it found, on /dev/zero, a directory and a named pipe nothing
// writes to, through every entry point (ReadDumpFile, ParseFile,
// LoadFile).
func TestReadDumpFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.topo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	type tc struct {
		path, want string
		is         error
	}
	cases := []tc{
		{fifo, "a named pipe with nothing in it: nothing writes to it", ErrNotDump},
		{dir, "a directory, expected a dump file", ErrNotRegular},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, tc{"/dev/zero", "a character device, expected a dump file", ErrNotRegular})
	}
	for _, c := range cases {
		for name, read := range map[string]func() error{
			"ReadDumpFile": func() error { _, err := ReadDumpFile(c.path, 1<<20); return err },
			"ParseFile":    func() error { _, err := ParseFile(c.path); return err },
			"LoadFile":     func() error { _, err := LoadFile(c.path); return err },
		} {
			err := ibtest.Returns(t, name+"("+c.path+")", read)
			if !errors.Is(err, c.is) || !strings.Contains(fmt.Sprint(err), c.path+": "+c.want) {
				t.Errorf("%s(%s): %v, want %v saying %q", name, c.path, err, c.is, c.want)
			}
		}
	}
}

// TestReadDumpFilePipe: a pipe with a writer is read as it comes, and one
// that never ends stops at the limit.
func TestReadDumpFilePipe(t *testing.T) {
	dump := smallDump(t)
	path, w := pipePath(t)
	go func() {
		_, _ = w.Write(dump)
		w.Close()
	}()
	var l *Loaded
	err := ibtest.Returns(t, "LoadFileLimited(pipe)", func() (err error) {
		l, err = LoadFileLimited(path, int64(len(dump)))
		return err
	})
	if err != nil || len(l.Fabric.Nodes) != 24 || string(l.Text) != string(dump) {
		t.Fatalf("a dump through a pipe: %v", err)
	}

	path, w = pipePath(t)
	go func() { // until the test closes w
		for {
			if _, err := w.Write([]byte("# more of the same\n")); err != nil {
				return
			}
		}
	}()
	err = ibtest.Returns(t, "LoadFileLimited(endless pipe)", func() error {
		_, err := LoadFileLimited(path, 1<<20)
		return err
	})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(fmt.Sprint(err), path+": more, more than the limit of 1 MiB") {
		t.Errorf("an endless pipe: %v", err)
	}
}

// TestLoadFileLimited: a regular file over the limit is refused before it
// is read, one within it loads.
func TestLoadFileLimited(t *testing.T) {
	dump := smallDump(t)
	path := filepath.Join(t.TempDir(), "fabric.topo")
	if err := os.WriteFile(path, dump, 0o644); err != nil {
		t.Fatal(err)
	}
	n := int64(len(dump))
	if l, err := LoadFileLimited(path, n); err != nil || len(l.Fabric.Nodes) != 24 {
		t.Fatalf("a dump of exactly the limit: %v", err)
	}
	want := fmt.Sprintf("%s: %d bytes, more than the limit of %d bytes", path, n, n-1)
	if _, err := LoadFileLimited(path, n-1); !errors.Is(err, ErrTooLarge) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("a dump over the limit: %v, want %q", err, want)
	}
}
