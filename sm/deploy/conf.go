package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/lft"
)

// ErrConf means OpenSM's configuration does not let it deliver the
// routing; the message names the lines to change.
var ErrConf = errors.New("OpenSM configuration")

// osmDefaultSL2VL is OpenSM's qos_sl2vl default (OSM_DEFAULT_QOS_SL2VL).
var osmDefaultSL2VL = [lft.NumSLs]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7}

// sl2vlKeys are the options that set SL2VL tables, one per port kind; the
// kind-specific ones fall back to qos_sl2vl when unset.
var sl2vlKeys = []string{"qos_sl2vl", "qos_ca_sl2vl", "qos_swe_sl2vl", "qos_sw0_sl2vl", "qos_rtr_sl2vl"}

const (
	blockBegin = "# nuesm: begin (written by nuesm serve, [opensm] manage_conf; edit nuesm's configuration instead)"
	blockEnd   = "# nuesm: end"
)

// osmConf is OpenSM's configuration as it takes effect: the file's last
// value per option (OpenSM parses in order), then the command line.
type osmConf struct {
	path string
	opt  map[string]string
	line map[string]int // line of the effective value (0 = command line)
}

// readConf parses path and overlays the options given on OpenSM's command
// line (args without the program name; nil when unknown).
func readConf(path string, args []string) (*osmConf, error) {
	c := &osmConf{path: path, opt: map[string]string{}, line: map[string]int{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConf, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		c.opt[f[0]] = strings.Join(f[1:], " ")
		c.line[f[0]] = n
	}
	flags := map[string]string{"-R": "routing_engine", "--routing_engine": "routing_engine", "-U": "lfts_file",
		"--lfts_file": "lfts_file", "-Y": "qos_policy_file", "--qos_policy_file": "qos_policy_file"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-Q" || a == "--qos" {
			c.opt["qos"], c.line["qos"] = "TRUE", 0
			continue
		}
		if a == "-V" || a == "-d2" || (a == "-d" && i+1 < len(args) && args[i+1] == "2") {
			c.opt["-d2"] = "TRUE" // log flushed after every line
			continue
		}
		if k, ok := flags[a]; ok && i+1 < len(args) {
			c.opt[k], c.line[k] = args[i+1], 0
			i++
		}
	}
	return c, nil
}

// trapSweeps reports whether OpenSM heavy-sweeps on a link's trap: its
// sweep_on_trap, TRUE by default; OpenSM takes a boolean option as TRUE
// only when it reads "TRUE".
func (c *osmConf) trapSweeps() bool {
	v, ok := c.opt["sweep_on_trap"]
	return !ok || v == "TRUE"
}

func (c *osmConf) where(key string) string {
	if n := c.line[key]; n > 0 {
		return fmt.Sprintf("%s:%d", c.path, n)
	}
	if _, ok := c.opt[key]; ok {
		return "OpenSM's command line"
	}
	return c.path + " (not set)"
}

// checkFiles reports what keeps OpenSM from loading the deployer's files
// through its file engine without falling back to another engine.
func (c *osmConf) checkFiles(lfts, policy string) error {
	var errs []error
	eng := strings.Split(c.opt["routing_engine"], ",")
	if eng[0] != "file" {
		errs = append(errs, fmt.Errorf("routing_engine %q at %s, expected \"file,no_fallback\" (OpenSM's file engine loads nuesm's tables)",
			c.opt["routing_engine"], c.where("routing_engine")))
	} else if !contains(eng, "no_fallback") {
		errs = append(errs, fmt.Errorf("routing_engine %q at %s, expected \"file,no_fallback\": with a fallback OpenSM replaces a table file it cannot load with its own min-hop tables",
			c.opt["routing_engine"], c.where("routing_engine")))
	}
	if !samePath(c.opt["lfts_file"], lfts) {
		errs = append(errs, fmt.Errorf("lfts_file %q at %s, expected %s", c.opt["lfts_file"], c.where("lfts_file"), lfts))
	}
	if !strings.EqualFold(c.opt["qos"], "TRUE") {
		errs = append(errs, fmt.Errorf("qos %q at %s, expected TRUE (path SLs and SL2VL tables)", c.opt["qos"], c.where("qos")))
	}
	if !samePath(c.opt["qos_policy_file"], policy) {
		errs = append(errs, fmt.Errorf("qos_policy_file %q at %s, expected %s", c.opt["qos_policy_file"], c.where("qos_policy_file"), policy))
	}
	if !c.flushesLog() {
		errs = append(errs, fmt.Errorf("force_log_flush %q at %s, expected TRUE: the deployer waits for OpenSM's log lines, which OpenSM otherwise holds in its buffer",
			c.opt["force_log_flush"], c.where("force_log_flush")))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w %s: %w", ErrConf, c.path, errors.Join(errs...))
	}
	return nil
}

// flushesLog reports whether OpenSM writes each log line out at once:
// force_log_flush TRUE, or -d2 or -V on its command line (osm_log.c
// flushes only error lines otherwise, never the info lines the deployer
// waits for).
func (c *osmConf) flushesLog() bool {
	return c.opt["force_log_flush"] == "TRUE" || c.opt["-d2"] != ""
}

// sl2vl returns the SL2VL map OpenSM programs on ports of the kind whose
// option is key, and the option that decides it.
func (c *osmConf) sl2vl(key string) ([lft.NumSLs]uint8, string, error) {
	for _, k := range []string{key, "qos_sl2vl"} {
		v, ok := c.opt[k]
		if !ok {
			continue
		}
		m, err := parseSL2VL(v)
		if err != nil {
			return m, k, fmt.Errorf("%w: %s at %s: %v", ErrConf, k, c.where(k), err)
		}
		return m, k, nil
	}
	return osmDefaultSL2VL, "OpenSM's default", nil
}

func parseSL2VL(v string) ([lft.NumSLs]uint8, error) {
	var m [lft.NumSLs]uint8
	f := strings.Split(strings.ReplaceAll(v, " ", ""), ",")
	if len(f) != lft.NumSLs {
		return m, fmt.Errorf("%q has %d values, expected 16", v, len(f))
	}
	for i, s := range f {
		n, err := strconv.ParseUint(s, 0, 8)
		if err != nil || n > 15 {
			return m, fmt.Errorf("%q: value %d is %q, expected 0..15", v, i, s)
		}
		m[i] = uint8(n)
	}
	return m, nil
}

func formatSL2VL(m [lft.NumSLs]uint8) string {
	s := make([]string, len(m))
	for i, v := range m {
		s[i] = strconv.Itoa(int(v))
	}
	return strings.Join(s, ",")
}

// checkSL2VL reports port kinds whose SL2VL map differs from want on the
// SLs the routing uses (used[sl]).
func (c *osmConf) checkSL2VL(want [lft.NumSLs]uint8, used [lft.NumSLs]bool) error {
	var errs []error
	for _, k := range sl2vlKeys {
		m, from, err := c.sl2vl(k)
		if err != nil {
			return err
		}
		for sl := range used {
			if used[sl] && m[sl] != want[sl] {
				errs = append(errs, fmt.Errorf("%s (from %s) maps SL %d to VL %d, the routing needs VL %d", k, from, sl, m[sl], want[sl]))
				break
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w %s: %w; add \"qos_sl2vl %s\" (and no other qos_*sl2vl lines), or set opensm.manage_conf",
			ErrConf, c.path, errors.Join(errs...), formatSL2VL(want))
	}
	return nil
}

// writeSL2VLBlock replaces the deployer's block at the end of the OpenSM
// configuration file path with SL2VL lines for every port kind.
func writeSL2VLBlock(path string, m [lft.NumSLs]uint8) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	var keep []string
	in := false
	for _, l := range strings.SplitAfter(string(b), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == blockBegin:
			in = true
		case t == blockEnd && in:
			in = false
		case !in && l != "":
			keep = append(keep, l)
		}
	}
	text := strings.Join(keep, "")
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	var blk strings.Builder
	blk.WriteString(blockBegin + "\n")
	for _, k := range sl2vlKeys {
		fmt.Fprintf(&blk, "%s %s\n", k, formatSL2VL(m))
	}
	blk.WriteString(blockEnd + "\n")
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(real, func(w io.Writer) error {
		_, err := io.WriteString(w, text+blk.String())
		return err
	}, st.Mode().Perm())
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if strings.TrimSpace(v) == x {
			return true
		}
	}
	return false
}

func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	ra, ea := filepath.EvalSymlinks(a)
	rb, eb := filepath.EvalSymlinks(b)
	return ea == nil && eb == nil && ra == rb
}

// cmdline returns a process's arguments without the program name.
func cmdline(procDir string, pid int) []string {
	b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	f := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return f[1:]
}
