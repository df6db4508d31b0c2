package sm

import (
	"os"
	"syscall"
)

// inode returns a file's inode number (0 where unknown), so a dump
// replaced by rename is noticed even with equal size and time.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// freeBytes returns the bytes an unprivileged writer may still use on
// the file system of dir.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
