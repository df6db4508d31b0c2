package sm

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// readDump reads the dump at path, at most limit bytes: it opens without
// blocking and refuses anything but a regular file (a named pipe,
// /dev/zero) and a file beyond limit.
func readDump(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: larger than max_dump_bytes = %d", path, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than max_dump_bytes = %d", path, limit)
	}
	return b, nil
}
