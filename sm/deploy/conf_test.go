package deploy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfNeedsLogFlush: without force_log_flush TRUE (or -d2, -V on
// OpenSM's command line) OpenSM keeps its info lines in a buffer, the
// deployer never reads "file tables configured" and every rollout stops
// at its first step's timeout; the configuration check refuses it,
// naming the option and the file.
func TestConfNeedsLogFlush(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "opensm.conf")
	lfts, policy := filepath.Join(dir, "opensm-lfts.dump"), filepath.Join(dir, "qos-policy.conf")
	base := "routing_engine file,no_fallback\nlfts_file " + lfts + "\nqos TRUE\nqos_policy_file " + policy + "\n"
	for _, c := range []struct {
		text string
		args []string
		ok   bool
	}{
		{base, nil, false},
		{base + "force_log_flush FALSE\n", nil, false},
		{base + "force_log_flush TRUE\n", nil, true},
		{base + "force_log_flush TRUE\nforce_log_flush FALSE\n", nil, false},
		{base, []string{"-F", conf, "-d2"}, true},
		{base, []string{"-d", "2", "-F", conf}, true},
		{base, []string{"-V"}, true},
		{base, []string{"-d", "1"}, false},
	} {
		if err := os.WriteFile(conf, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		oc, err := readConf(conf, c.args)
		if err != nil {
			t.Fatal(err)
		}
		err = oc.checkFiles(lfts, policy)
		if c.ok != (err == nil) {
			t.Errorf("%q %v: %v, want ok=%v", c.text, c.args, err, c.ok)
			continue
		}
		if err != nil && (!errors.Is(err, ErrConf) || !strings.Contains(err.Error(), "force_log_flush") || !strings.Contains(err.Error(), conf)) {
			t.Errorf("%q %v: %v, want ErrConf naming force_log_flush and %s", c.text, c.args, err, conf)
		}
	}
}
