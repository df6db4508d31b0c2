package sm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nuesm/nuesm/lft"
)

// PublishedStatus is status.json of a published generation: what was
// published, from which fabric and jobs, with which figures.
type PublishedStatus struct {
	Generation   int               `json:"generation"`
	Published    time.Time         `json:"published"`
	Fabric       string            `json:"fabric"`
	FabricSHA256 string            `json:"fabric_sha256"`
	Engine       string            `json:"engine"`
	VLs          int               `json:"vls"`
	Verified     bool              `json:"verified"`
	Switches     int               `json:"switches"`
	Terminals    int               `json:"terminals"`
	Pairs        int64             `json:"pairs"`
	AvgHops      float64           `json:"avg_hops"`
	MaxEFI       int64             `json:"max_efi"`
	Jobs         []JobStatus       `json:"jobs"`
	EffectiveEFI int64             `json:"effective_efi"`
	DarkFiber    float64           `json:"dark_fiber_percent"`
	Plan         *PlanSummary      `json:"plan,omitempty"`
	Files        map[string]string `json:"files"`
	// SHA256 holds the SHA-256 of every file of the generation but
	// status.json, as written: the daemon checks the published files
	// against it and reports changes in /healthz.
	SHA256 map[string]string `json:"sha256,omitempty"`
	// RoutingConfig is the configuration the tables were published under
	// (Config.routingConfig): a restart under another routes in full.
	RoutingConfig string `json:"routing_config,omitempty"`
}

// JobStatus describes one job the routing was computed for.
type JobStatus struct {
	ID           string `json:"id"`
	Hosts        int    `json:"hosts"`
	Terminals    int    `json:"terminals"`
	EffectiveEFI int64  `json:"effective_efi"`
}

// Names in the output directory: the symlink to the current generation,
// the generations' prefix, the name a real directory in place of
// "current" is moved to, and the daemon's files beside the table set
// (lft.TableSet) in each generation.
const (
	currentLink   = "current"
	previousLink  = "previous"
	genPrefix     = "gen-"
	displacedName = "current.displaced-"
	statusFile    = "status.json"
	planFile      = "plan.json"
)

// publisher owns the output directory: gen-NNNNNN directories, one per
// published generation, and the symlink "current" to the newest. Old
// generations go once more than keep are on disk, the oldest first, but
// never the current one nor, while the disk has room, the one before it
// (the previous: "nuesm diff DIR/gen-<previous> DIR/current" shows the
// last change). When the disk lacks room for one more generation, every
// generation but the current one goes before the write: new tables for
// a changed fabric matter more than the previous ones.
type publisher struct {
	dir     string
	keep    int
	lastGen int // the highest generation published or seen: numbers never repeat
	// free returns the bytes available in dir (nil: syscall.Statfs).
	free func(dir string) (uint64, error)
	// checked remembers the files of the current generation whose
	// checksums matched, by stamp, so that unchanged files are not read
	// again.
	checked map[string]fileStamp
}

// cleanup removes what a crashed publish may have left behind.
func (p *publisher) cleanup() error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".gen-") || e.Name() == ".current.tmp" || e.Name() == ".previous.tmp" {
			if err := os.RemoveAll(filepath.Join(p.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// generations lists the published generation numbers, ascending.
func (p *publisher) generations() ([]int, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	var gens []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), genPrefix); ok && e.IsDir() {
			if v, err := strconv.Atoi(n); err == nil {
				gens = append(gens, v)
			}
		}
	}
	sort.Ints(gens)
	return gens, nil
}

// genName is the directory name of generation gen.
func genName(gen int) string { return fmt.Sprintf("%s%06d", genPrefix, gen) }

// current returns the published status, or nil when nothing is published.
func (p *publisher) current() (*PublishedStatus, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, currentLink, statusFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st PublishedStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("published status: %w", err)
	}
	p.lastGen = max(p.lastGen, st.Generation)
	return &st, nil
}

// genDir returns the directory of generation gen.
func (p *publisher) genDir(gen int) string {
	return filepath.Join(p.dir, fmt.Sprintf("%s%06d", genPrefix, gen))
}

// currentPath returns the path of a file of the current generation.
func (p *publisher) currentPath(name string) string {
	return filepath.Join(p.dir, currentLink, name)
}

// currentGen returns the generation "current" points to (0: none).
func (p *publisher) currentGen() int {
	target, err := os.Readlink(filepath.Join(p.dir, currentLink))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(target), genPrefix))
	if err != nil {
		return 0
	}
	return n
}

// publish writes a new generation and makes it current with one rename
// of the "current" symlink; st.Generation, st.Files and st.SHA256 are
// filled in. A deleted output directory is made again; a real directory
// in place of "current" is moved aside (displacedName + time) first.
// When the disk is short, old generations go before the write; a write
// that still runs out of room prunes to the current generation and tries
// once more.
func (p *publisher) publish(st *PublishedStatus, files []lft.File) error {
	if err := p.prepare(); err != nil {
		return err
	}
	err := p.publishOnce(st, files)
	if errors.Is(err, syscall.ENOSPC) {
		if perr := p.prune(0, false); perr != nil {
			return errors.Join(err, perr)
		}
		err = p.publishOnce(st, files)
	}
	if err != nil {
		return err
	}
	p.checked = nil
	if err := p.prune(p.keep, true); err != nil {
		return err
	}
	return p.dropDumps()
}

// dropDumps removes OpenSM's LFT dump from every generation but the
// current one, where OpenSM reads it: the others keep their LFTs as
// nuesm.lft ("nuesm export" writes the dump again). Generations without
// nuesm.lft keep their dump, their only record of the LFTs.
func (p *publisher) dropDumps() error {
	gens, err := p.generations()
	if err != nil {
		return err
	}
	cur := p.currentGen()
	for _, g := range gens {
		dir := p.genDir(g)
		if g == cur {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, lft.CompactLFTsFile)); err != nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, lft.LFTsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// prepare makes the output directory ready for a publish: there, with
// "current" a symlink or absent, and room for one more generation.
func (p *publisher) prepare() error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	cur := filepath.Join(p.dir, currentLink)
	if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		aside := filepath.Join(p.dir, displacedName+time.Now().UTC().Format("20060102T150405.000000000"))
		if err := os.Rename(cur, aside); err != nil {
			return fmt.Errorf("%s is no symlink and cannot be moved aside: %w", cur, err)
		}
	}
	if err := p.prune(p.keep-1, true); err != nil {
		return err
	}
	if need, free, short := p.short(); short {
		if err := p.prune(0, false); err != nil {
			return fmt.Errorf("%s: %d bytes free, a generation takes about %d: %w", p.dir, free, need, err)
		}
	}
	return nil
}

// short reports whether the disk lacks room for another generation of
// the current one's size (with a quarter to spare).
func (p *publisher) short() (need, free uint64, short bool) {
	ents, err := os.ReadDir(filepath.Join(p.dir, currentLink))
	if err != nil {
		return 0, 0, false
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			need += uint64(fi.Size())
		}
	}
	freeOf := p.free
	if freeOf == nil {
		freeOf = freeBytes
	}
	free, err = freeOf(p.dir)
	if err != nil {
		return need, 0, false
	}
	return need, free, free < need+need/4
}

// nextGen returns the number the next publication takes.
func (p *publisher) nextGen() (int, error) {
	gens, err := p.generations()
	if err != nil {
		return 0, err
	}
	gen := p.lastGen + 1
	if len(gens) > 0 {
		gen = max(gen, gens[len(gens)-1]+1)
	}
	return gen, nil
}

// publishOnce writes generation nextGen and swaps "current" to it; on
// failure nothing of it stays behind unless "current" names it.
func (p *publisher) publishOnce(st *PublishedStatus, files []lft.File) error {
	gen, err := p.nextGen()
	if err != nil {
		return err
	}
	name := genName(gen)
	tmp := filepath.Join(p.dir, fmt.Sprintf(".%s.tmp-%d", name, os.Getpid()))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	st.Generation = gen
	if err := p.writeGeneration(tmp, st, files); err != nil {
		return err
	}
	final := filepath.Join(p.dir, name)
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	if err := p.swapCurrent(name); err != nil {
		if p.currentGen() == gen {
			// "current" names it already ("previous" or a sync failed):
			// it stays, and the failure is reported.
			p.lastGen = gen
			return err
		}
		return errors.Join(err, os.RemoveAll(final))
	}
	p.lastGen = gen
	return nil
}

// writeGeneration writes the files and status.json (with the files'
// checksums) into dir, syncing each as soon as it is written, beside the
// next ones (a sync each, one after the other, costs a journal commit
// each on a busy disk; a file whose Write waits, plan.json for the
// planner, waits beside the others' syncs), and dir itself once every
// file is in it, beside the files' last syncs. A file whose
// content is at hand and equal to the current generation's copy (the
// fabric, while it does not change) is linked to that copy instead.
func (p *publisher) writeGeneration(dir string, st *PublishedStatus, files []lft.File) (err error) {
	st.Files = map[string]string{}
	st.SHA256 = map[string]string{}
	var sy syncer
	defer func() {
		if serr := sy.wait(); err == nil && serr != nil {
			err = fmt.Errorf("publish: %w", serr)
		}
	}()
	for _, f := range files {
		sum, ok := p.reuse(dir, f)
		if !ok {
			fd, s, err := writeOpen(filepath.Join(dir, f.Name), f.Write)
			if err != nil {
				return fmt.Errorf("publish %s: %w", f.Name, err)
			}
			sy.add(fd)
			sum = s
		}
		st.Files[f.Name] = f.Name
		st.SHA256[f.Name] = sum
	}
	write := func(w io.Writer) error { return lft.WriteJSON(w, st) }
	fd, _, err := writeOpen(filepath.Join(dir, statusFile), write)
	if err != nil {
		return fmt.Errorf("publish %s: %w", statusFile, err)
	}
	sy.add(fd)
	sy.run(func() error { return syncDir(dir) })
	if err := sy.wait(); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

// syncer syncs and closes files concurrently, each from when it is added.
type syncer struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func (s *syncer) add(f *os.File) {
	s.run(func() error {
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		return nil
	})
}

// run runs sync beside the others.
func (s *syncer) run(sync func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := sync(); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
		}
	}()
}

// wait waits for the files added so far and returns their errors.
func (s *syncer) wait() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// reuse links the current generation's copy of f into dir when f.Data
// holds f's content and the copy holds the same bytes (read to be sure: a
// changed copy would carry its change on), and returns the content's
// SHA-256; ok is false when f is to be written.
func (p *publisher) reuse(dir string, f lft.File) (sum string, ok bool) {
	if f.Data == nil {
		return "", false
	}
	cur := p.currentPath(f.Name)
	fi, err := os.Lstat(cur)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(f.Data)) {
		return "", false
	}
	h := sha256.Sum256(f.Data)
	sum = hex.EncodeToString(h[:])
	if got, err := fileSHA256(cur); err != nil || got != sum {
		return "", false
	}
	if err := os.Link(cur, filepath.Join(dir, f.Name)); err != nil {
		return "", false // a file system without hard links: write it
	}
	return sum, true
}

// swapCurrent points "current" at the generation directory name.
func (p *publisher) swapCurrent(name string) error {
	if err := syncDir(p.dir); err != nil {
		return err
	}
	prev, _ := os.Readlink(filepath.Join(p.dir, currentLink))
	if err := p.swapLink(currentLink, name); err != nil {
		return err
	}
	// "previous" names the generation "current" named before, so that
	// "nuesm diff DIR/previous DIR/current" and "nuesm plan" show the
	// last change.
	if prev != "" {
		if err := p.swapLink(previousLink, prev); err != nil {
			return err
		}
	}
	return syncDir(p.dir)
}

// swapLink points the symlink name at target with one rename.
func (p *publisher) swapLink(name, target string) error {
	link := filepath.Join(p.dir, "."+name+".tmp")
	_ = os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		return err
	}
	if err := os.Rename(link, filepath.Join(p.dir, name)); err != nil {
		_ = os.Remove(link)
		return err
	}
	return nil
}

// prune removes the oldest generations until at most limit are on disk,
// never the current one, nor the one before it (the previous) when
// keepPrevious.
func (p *publisher) prune(limit int, keepPrevious bool) error {
	gens, err := p.generations()
	if err != nil {
		return err
	}
	cur := p.currentGen()
	prev := 0
	for _, g := range gens {
		if g < cur {
			prev = g
		}
	}
	left := len(gens)
	for _, g := range gens {
		if left <= limit {
			break
		}
		if g == cur || (keepPrevious && g == prev) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(p.dir, genName(g))); err != nil {
			return err
		}
		left--
	}
	return nil
}

// writeOpen creates path, writes it and returns it open (unsynced) with
// the SHA-256 of what was written; on an error the file is closed.
func writeOpen(path string, write func(io.Writer) error) (*os.File, string, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	if err := write(io.MultiWriter(f, h)); err != nil {
		f.Close()
		return nil, "", err
	}
	return f, hex.EncodeToString(h.Sum(nil)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
