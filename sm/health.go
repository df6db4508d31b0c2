package sm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// check verifies the published set against what the daemon published
// (gen; 0 when it published nothing and found nothing): the output
// directory is there, "current" is the symlink to gen-<gen>, and every
// file of it has the SHA-256 that status.json recorded when it was
// written. Files whose stamp (size, time, inode) did not change since
// they last matched are not read again.
func (p *publisher) check(gen int) error {
	if _, err := os.Stat(p.dir); err != nil {
		return fmt.Errorf("output directory %s: %w", p.dir, errors.Unwrap(err))
	}
	if gen == 0 {
		return nil
	}
	link := filepath.Join(p.dir, currentLink)
	target, err := os.Readlink(link)
	if err != nil {
		return fmt.Errorf("%s is gone or no symlink (generation %d was published)", link, gen)
	}
	if target != genName(gen) {
		return fmt.Errorf("%s points at %s, but %s was published", link, target, genName(gen))
	}
	st, err := p.current()
	if err != nil || st == nil {
		return fmt.Errorf("%s: %s unreadable: %v", link, statusFile, err)
	}
	if st.Generation != gen {
		return fmt.Errorf("%s: %s says generation %d, but %d was published", link, statusFile, st.Generation, gen)
	}
	return p.checkSums(st.SHA256)
}

// checkSums compares the current generation's files with their recorded
// checksums (none recorded: nothing to compare).
func (p *publisher) checkSums(sums map[string]string) error {
	if p.checked == nil {
		p.checked = map[string]fileStamp{}
	}
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		path := p.currentPath(name)
		stamp, err := stampOf(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("published file %s is gone", path)
		}
		if err != nil {
			return fmt.Errorf("published file %s: %w", path, err)
		}
		if p.checked[name] == stamp {
			continue
		}
		got, err := fileSHA256(path)
		if err != nil {
			return fmt.Errorf("published file %s: %w", path, err)
		}
		if got != sums[name] {
			delete(p.checked, name)
			return fmt.Errorf("published file %s changed after it was published (SHA-256 %.12s…, published %.12s…)", path, got, sums[name])
		}
		p.checked[name] = stamp
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
