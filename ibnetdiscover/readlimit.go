package ibnetdiscover

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultMaxBytes is a size limit for dumps that fits any real fabric: a
// dump takes about 100 bytes per port line, and 256 MiB hold the port
// lines of several million ports.
const DefaultMaxBytes = 256 << 20

// ReadFileLimited reads the dump at path for a caller that must not hang
// or grow without bound on a bad path: it opens without blocking, refuses
// anything but a regular file (a named pipe, /dev/zero, a directory…)
// with an error wrapping ErrNotRegular, and a file larger than limit
// bytes, or one that grows past it while being read, with an error
// wrapping ErrTooLarge. Symbolic links are followed.
func ReadFileLimited(path string, limit int64) ([]byte, error) {
	return readLimited(path, limit, false)
}

// ReadDumpFile reads the dump at path for a command-line tool, which may
// be handed a pipe (nuesm info <(ibnetdiscover)): a regular file as
// ReadFileLimited reads it; a named pipe as it comes, up to limit bytes,
// and a pipe nothing writes to is an error at once instead of a wait; a
// device, socket or directory is refused with an error wrapping
// ErrNotRegular.
func ReadDumpFile(path string, limit int64) ([]byte, error) {
	return readLimited(path, limit, true)
}

// readLimited is ReadFileLimited, and ReadDumpFile with pipes.
func readLimited(path string, limit int64, pipes bool) ([]byte, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, fmt.Errorf("ibnetdiscover: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ibnetdiscover: %w", err)
	}
	mode := st.Mode()
	if pipes && mode&os.ModeNamedPipe != 0 {
		return readPipe(f, path, limit)
	}
	if !mode.IsRegular() {
		expected := "a regular file"
		if pipes {
			expected = "a dump file"
		}
		return nil, fmt.Errorf("ibnetdiscover: %s: %s, expected %s: %w", path, fileKind(mode), expected, ErrNotRegular)
	}
	if st.Size() > limit {
		return nil, tooLarge(path, limit, fmt.Sprintf("%d bytes", st.Size()))
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("ibnetdiscover: %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, limit, "grew while being read")
	}
	return b, nil
}

// readPipe reads the named pipe f, opened without blocking: with no
// writer the first read sees end of file, so an idle pipe fails at once.
func readPipe(f *os.File, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(LimitReader(f, limit, path))
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("ibnetdiscover: %s: %w", path, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("ibnetdiscover: %s: a named pipe with nothing in it: nothing writes to it, or its writer wrote nothing: %w", path, ErrNotDump)
	}
	return b, nil
}

// ParseFileLimited parses the dump at path, read with ReadFileLimited.
func ParseFileLimited(path string, limit int64) (*Result, error) {
	b, err := ReadFileLimited(path, limit)
	if err != nil {
		return nil, err
	}
	return Parse(bytes.NewReader(b), path)
}

// LimitReader returns a reader of r that fails with an error wrapping
// ErrTooLarge, naming name and the limit, once r has more than limit
// bytes: for dumps that come through a pipe, where ReadFileLimited cannot
// be used. Parse stops at that error.
func LimitReader(r io.Reader, limit int64, name string) io.Reader {
	return &limitReader{r: r, left: limit, limit: limit, name: name}
}

type limitReader struct {
	r     io.Reader
	left  int64 // bytes that may still come
	limit int64
	name  string
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, tooLarge(l.name, l.limit, "more")
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1] // one byte beyond shows whether there is more
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		n += int(l.left) // hand out the bytes within the limit only
		return n, tooLarge(l.name, l.limit, "more")
	}
	return n, err
}

// tooLarge is the error for a dump beyond limit; size says how big.
func tooLarge(name string, limit int64, size string) error {
	return fmt.Errorf("ibnetdiscover: %s: %s, more than the limit of %s: %w", name, size, sizeText(limit), ErrTooLarge)
}

// sizeText prints whole MiB as such, other sizes in bytes.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fileKind names a mode that is not a regular file.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}
