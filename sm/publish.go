package sm

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
}

// JobStatus describes one job the routing was computed for.
type JobStatus struct {
	ID           string `json:"id"`
	Hosts        int    `json:"hosts"`
	Terminals    int    `json:"terminals"`
	EffectiveEFI int64  `json:"effective_efi"`
}

// Names in the output directory: the symlink to the current generation,
// the generations' prefix, and the daemon's files beside the table set
// (lft.TableSet) in each generation.
const (
	currentLink  = "current"
	previousLink = "previous"
	genPrefix    = "gen-"
	statusFile   = "status.json"
	planFile     = "plan.json"
)

// publisher owns the output directory.
type publisher struct {
	dir  string
	keep int
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

// publish writes a new generation and makes it current with one rename
// of the "current" symlink. st.Generation and st.Files are filled in.
func (p *publisher) publish(st *PublishedStatus, files []lft.File) error {
	gens, err := p.generations()
	if err != nil {
		return err
	}
	gen := 1
	if len(gens) > 0 {
		gen = gens[len(gens)-1] + 1
	}
	name := fmt.Sprintf("%s%06d", genPrefix, gen)
	tmp := filepath.Join(p.dir, fmt.Sprintf(".%s.tmp-%d", name, os.Getpid()))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	st.Generation = gen
	st.Files = map[string]string{}
	for _, f := range files {
		st.Files[f.Name] = f.Name
	}
	files = append(files, lft.File{Name: statusFile, Write: func(w io.Writer) error { return lft.WriteJSON(w, st) }})
	for _, f := range files {
		if err := writeSynced(filepath.Join(tmp, f.Name), f.Write); err != nil {
			return fmt.Errorf("publish %s: %w", f.Name, err)
		}
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	final := filepath.Join(p.dir, name)
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
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
	if err := syncDir(p.dir); err != nil {
		return err
	}
	return p.prune(gen)
}

// swapLink points the symlink name at target with one rename.
func (p *publisher) swapLink(name, target string) error {
	link := filepath.Join(p.dir, "."+name+".tmp")
	_ = os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		return err
	}
	return os.Rename(link, filepath.Join(p.dir, name))
}

// prune removes generations older than the newest keep, never the
// current or the previous one.
func (p *publisher) prune(current int) error {
	gens, err := p.generations()
	if err != nil {
		return err
	}
	prev, _ := os.Readlink(filepath.Join(p.dir, previousLink))
	for i := 0; i < len(gens)-p.keep; i++ {
		if gens[i] == current || fmt.Sprintf("%s%06d", genPrefix, gens[i]) == prev {
			continue
		}
		if err := os.RemoveAll(filepath.Join(p.dir, fmt.Sprintf("%s%06d", genPrefix, gens[i]))); err != nil {
			return err
		}
	}
	return nil
}

func writeSynced(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
