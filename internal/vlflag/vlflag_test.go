package vlflag

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--vls", "1"}, ""},
		{[]string{"--vls", "15"}, ""},
		{[]string{"--vls", "0"}, "--vls 0, expected 1..15"},
		{[]string{"--vls", "16"}, "--vls 16"},
		{[]string{"--vls", "99"}, "--vls 99"},
		{[]string{"--vls", "-1"}, "--vls -1"},
	} {
		fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fl.Int("vls", 8, "")
		if err := fl.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := Check(fl, "vls", "absent")
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
