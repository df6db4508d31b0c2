package slurm

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// FuzzExpand: Expand never panics, agrees with Count, and what it returns
// survives Compress and CompressSorted.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"node[001-004,010]", "a[1-3]b[2,4]", "n7,m[01-02]", "n[8-10]", "n[08-10]",
		"node[1-", "n[1-10:2]", "unit[0-31]rack", "a,,b c", "[1-3]", "n[099-101],n0102", "n[18446744073709551615]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		hosts, err := Expand(expr)
		n, cerr := Count(expr)
		if (err == nil) != (cerr == nil) || err == nil && n != len(hosts) {
			t.Fatalf("Expand %d hosts, %v; Count %d, %v", len(hosts), err, n, cerr)
		}
		if err != nil {
			var he *HostlistError
			if !errors.As(err, &he) || he.Offset < 0 || he.Offset > len(expr) {
				t.Fatalf("error %v: not a *HostlistError with an offset in [0, %d]", err, len(expr))
			}
			return
		}
		back, err := Expand(Compress(hosts))
		if err != nil || !slices.Equal(back, hosts) {
			t.Fatalf("Compress(%q) = %q: %v", hosts, Compress(hosts), err)
		}
		sorted, err := Expand(CompressSorted(hosts))
		if err != nil || len(sorted) != len(hosts) {
			t.Fatalf("CompressSorted(%q) = %q: %v", hosts, CompressSorted(hosts), err)
		}
	})
}

// FuzzParseSqueue: no panics; every job parsed has a consistent node list.
func FuzzParseSqueue(f *testing.F) {
	if b, err := os.ReadFile("testdata/squeue-all.txt"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("1|RUNNING|n[1-|UNLIMITED|batch\n"))
	f.Add([]byte("JOBID|STATE|NODELIST|TIME_LIMIT|PARTITION\n12|RUNNING|n1|1-00:00:00|p\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ParseSqueue(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !strings.Contains(err.Error(), "squeue output") {
				t.Fatalf("error %v does not say where", err)
			}
			return
		}
		for _, j := range jobs {
			if n, _ := Count(j.NodeList); n != len(j.Nodes) || j.ID == "" || j.State == "" {
				t.Fatalf("inconsistent job %+v", j)
			}
		}
	})
}

// FuzzParseRESTJobs: no panics on arbitrary JSON.
func FuzzParseRESTJobs(f *testing.F) {
	for _, name := range []string{"testdata/jobs-v0.0.38.json", "testdata/job-error-v0.0.38.json"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"jobs":[{"job_id":{"set":true,"number":3},"job_state":["RUNNING"],"nodes":"n[1-2]","time_limit":{"infinite":true}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ParseRESTJobs(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrREST) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrREST", err)
			}
			return
		}
		for _, j := range jobs {
			if n, _ := Count(j.NodeList); n != len(j.Nodes) || j.ID == "" || j.State == "" {
				t.Fatalf("inconsistent job %+v", j)
			}
		}
	})
}

// FuzzParseHostMap: no panics; errors carry the file and line.
func FuzzParseHostMap(f *testing.F) {
	if b, err := os.ReadFile("testdata/hostmap.txt"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("n1 \"unterminated\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ov, err := ParseHostMap(bytes.NewReader(b), "fuzz.map")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "hostmap fuzz.map") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		for _, o := range ov {
			if o.Host == "" || (o.GUID == 0) == (o.Desc == "") || o.Line < 1 {
				t.Fatalf("bad override %+v", o)
			}
		}
	})
}

// FuzzParseTimeLimit: no panics, never negative.
func FuzzParseTimeLimit(f *testing.F) {
	for _, s := range []string{"UNLIMITED", "30:00", "1-02:04:00", "12:00:00", "5", "2-3:30", "1--2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTimeLimit(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseTimeLimit(%q) = %v", s, d)
		}
	})
}

// FuzzParseJobsFile: no panics; a parsed file gives unique ids, each with
// hosts matching its expression; errors name the file.
func FuzzParseJobsFile(f *testing.F) {
	for _, s := range []string{"1 n[1-2]\n2 m3 # c\n", "1\n", "1 n1\n1 n2\n", "x\ta[1-2]b[3,4]\n", "# only\n\n", "5 n[1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseJobsFile(strings.NewReader(in), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "jobs f:") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, j := range jobs {
			want, err := Expand(j.NodeList)
			if ids[j.ID] || j.ID == "" || len(j.Nodes) == 0 || err != nil || !slices.Equal(want, j.Nodes) {
				t.Fatalf("job %+v (repeat %v, expand %v)", j, ids[j.ID], err)
			}
			ids[j.ID] = true
		}
	})
}
