package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultAPIVersion is the slurmrestd OpenAPI plugin REST uses when
// REST.APIVersion is empty: the one SLURM 22.05 serves.
const DefaultAPIVersion = "v0.0.38"

// ErrREST is wrapped by the errors slurmrestd reports (a non-2xx status
// or a non-empty "errors" list).
var ErrREST = errors.New("slurmrestd error")

// ErrHTTPToken is the refusal to send a token over plain http:// (see
// REST.AllowHTTPToken).
var ErrHTTPToken = errors.New("refusing to send the token over plain http:// (readable on the network); use https://, a unix:// socket, or allow it explicitly")

// ErrRedirect is an answer that redirects elsewhere: REST does not follow
// it, so the token never leaves URL's host; point URL at the target.
var ErrRedirect = errors.New("redirect not followed (the token goes to the configured URL only); configure the target URL instead")

// REST asks slurmrestd for the jobs: GET {URL}/slurm/{APIVersion}/jobs.
// SLURM 22.05's endpoint ignores state filters, so RunningJobs keeps the
// jobs whose job_state is RUNNING or CONFIGURING itself. The zero value is not usable:
// URL is required. A REST is safe for concurrent use; each call opens its
// own connection (polls are rare) and closes it.
//
// The token stays with URL: a redirect is not followed but reported (the
// token would go to wherever it points), and a token is not sent over
// plain http:// unless AllowHTTPToken says so. Answers are read up to
// MaxBytes.
type REST struct {
	// URL is slurmrestd's address: "http://host:port", "https://host:port"
	// (a path, e.g. of a reverse proxy, is kept as a prefix) or
	// "unix:///path/to/slurmrestd.sock".
	URL string
	// APIVersion is the OpenAPI plugin in the path ("" = DefaultAPIVersion).
	APIVersion string
	// User and Token, when Token is set, go out as X-SLURM-USER-NAME and
	// X-SLURM-USER-TOKEN (rest_auth/jwt; a token from `scontrol token`).
	// SLURM 22.05 rejects a token without the name, so User is then
	// required.
	// Over a unix socket with rest_auth/local neither is needed.
	User, Token string
	// AllowHTTPToken lets a token go over a plain http:// URL, where
	// anyone on the path can read and replay it. Without it such a query
	// is refused before anything is sent; https:// and unix:// need no
	// permission. slurmrestd itself speaks no TLS: put a TLS proxy in front
	// of it, use its unix socket, or set this for a loopback address.
	AllowHTTPToken bool
	// MaxBytes bounds the answer's body (0 = DefaultRESTMaxBytes); more is
	// an error wrapping ErrTooLarge.
	MaxBytes int64
	// Timeout bounds one request (0 = DefaultTimeout); the context passed
	// to RunningJobs may end it sooner.
	Timeout time.Duration
	// Transport, if set, replaces the one built from URL (tests, TLS
	// settings). Its requests still go to URL's host and path.
	Transport http.RoundTripper
}

// RunningJobs fetches the jobs and returns the Allocated ones (RUNNING,
// CONFIGURING), sorted by ID.
func (r *REST) RunningJobs(ctx context.Context) ([]Job, error) {
	jobs, err := r.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	return allocatedJobs(jobs), nil
}

// Jobs fetches every job slurmrestd reports, in its order.
func (r *REST) Jobs(ctx context.Context) ([]Job, error) {
	endpoint, rt, err := r.endpoint()
	if err != nil {
		return nil, err
	}
	if r.Token != "" && r.User == "" {
		return nil, fmt.Errorf("slurmrestd %s: a token needs the user name it was made for (X-SLURM-USER-NAME)", r.URL)
	}
	if r.Token != "" && !r.AllowHTTPToken && plainHTTP(r.URL) {
		return nil, fmt.Errorf("slurmrestd %s: %w", r.URL, ErrHTTPToken)
	}
	limit := r.MaxBytes
	if limit <= 0 {
		limit = DefaultRESTMaxBytes
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("slurmrestd: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if r.Token != "" {
		req.Header.Set("X-SLURM-USER-NAME", r.User)
		req.Header.Set("X-SLURM-USER-TOKEN", r.Token)
	}
	client := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("slurmrestd %s: no answer within %v: %w", r.URL, timeout, ctx.Err())
		}
		return nil, fmt.Errorf("slurmrestd %s: %w", r.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return nil, fmt.Errorf("slurmrestd %s: HTTP %s to %q: %w", r.URL, resp.Status, resp.Header.Get("Location"), ErrRedirect)
	}
	if resp.ContentLength > limit {
		return nil, tooLarge("slurmrestd "+r.URL, limit)
	}
	body, over, err := readLimited(resp.Body, limit)
	if over {
		return nil, tooLarge("slurmrestd "+r.URL, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("slurmrestd %s: reading the answer: %w", r.URL, err)
	}
	if resp.StatusCode/100 != 2 {
		// slurmrestd explains most failures in the JSON "errors" list,
		// with status 500; others (401, 404) come as plain text.
		if _, perr := ParseRESTJobs(bytes.NewReader(body)); errors.Is(perr, ErrREST) {
			return nil, fmt.Errorf("slurmrestd %s: HTTP %s: %w", r.URL, resp.Status, perr)
		}
		return nil, fmt.Errorf("slurmrestd %s: HTTP %s: %q: %w", r.URL, resp.Status, snippet(body), ErrREST)
	}
	jobs, err := ParseRESTJobs(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("slurmrestd %s: %w", r.URL, err)
	}
	return jobs, nil
}

// endpoint returns the request URL and the transport for r.URL.
func (r *REST) endpoint() (string, http.RoundTripper, error) {
	version := r.APIVersion
	if version == "" {
		version = DefaultAPIVersion
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return "", nil, fmt.Errorf("slurmrestd URL %q: %w", r.URL, err)
	}
	path := "/slurm/" + version + "/jobs"
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return "", nil, fmt.Errorf("slurmrestd URL %q: no host", r.URL)
		}
		rt := r.Transport
		if rt == nil {
			rt = &http.Transport{Proxy: nil, DisableKeepAlives: true}
		}
		u.Path = strings.TrimRight(u.Path, "/") + path // a prefix path (behind a proxy) is kept
		u.RawPath, u.RawQuery, u.Fragment = "", "", ""
		return u.String(), rt, nil
	case "unix":
		sock := u.Path
		if sock == "" {
			sock = u.Opaque // "unix:relative.sock"
		}
		if sock == "" {
			return "", nil, fmt.Errorf("slurmrestd URL %q: no socket path (want unix:///path/to/socket)", r.URL)
		}
		rt := r.Transport
		if rt == nil {
			rt = &http.Transport{
				DisableKeepAlives: true,
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "unix", sock)
				},
			}
		}
		return "http://slurmrestd" + path, rt, nil
	}
	return "", nil, fmt.Errorf("slurmrestd URL %q: scheme %q, expected http, https or unix", r.URL, u.Scheme)
}

// plainHTTP reports whether raw (a valid URL) has the http scheme.
func plainHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "http"
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// restResponse is the part of slurmrestd's /jobs answer that we read.
type restResponse struct {
	Errors []restError `json:"errors"`
	Jobs   *[]restJob  `json:"jobs"`
}

type restError struct {
	Error       string `json:"error"`
	Description string `json:"description"`
	Number      int    `json:"error_number"`
	Source      string `json:"source"`
}

// restJob holds the fields of one job. v0.0.38 gives job_state as a
// string and numbers as JSON numbers (null for "infinite/unset"); v0.0.39
// and later give job_state as a list of flags and numbers as
// {"set":…,"infinite":…,"number":…}. Both decode.
type restJob struct {
	JobID           restNumber `json:"job_id"`
	ArrayJobID      restNumber `json:"array_job_id"`
	ArrayTaskID     restNumber `json:"array_task_id"`
	ArrayTaskString string     `json:"array_task_string"`
	HetJobID        restNumber `json:"het_job_id"`
	HetJobOffset    restNumber `json:"het_job_offset"`
	State           restState  `json:"job_state"`
	Nodes           string     `json:"nodes"`
	TimeLimit       restNumber `json:"time_limit"`
	Partition       string     `json:"partition"`
	Name            string     `json:"name"`
	UserName        string     `json:"user_name"`
}

// restNumber is an optional non-negative integer: a JSON number, null
// (unset or infinite), or {"set":bool,"infinite":bool,"number":n}.
type restNumber struct {
	Value    uint64
	Set      bool // a number was given
	Infinite bool // explicitly infinite
}

// UnmarshalJSON decodes the three forms.
func (n *restNumber) UnmarshalJSON(b []byte) error {
	*n = restNumber{}
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '{':
		var o struct {
			Set      *bool           `json:"set"`
			Infinite bool            `json:"infinite"`
			Number   json.RawMessage `json:"number"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.Infinite {
			n.Infinite = true
			return nil
		}
		if (o.Set != nil && !*o.Set) || len(o.Number) == 0 {
			return nil
		}
		return n.UnmarshalJSON(o.Number)
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || v != float64(uint64(v)) {
		return fmt.Errorf("expected a non-negative integer, got %s", snippet(b))
	}
	n.Value, n.Set = uint64(v), true
	return nil
}

// restState is job_state: "RUNNING" or ["RUNNING", "COMPLETING", …].
type restState string

// UnmarshalJSON takes a string, or the first element of a list.
func (s *restState) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = restState(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("job_state: expected a string or a list of strings, got %s", snippet(b))
	}
	*s = ""
	if len(many) > 0 {
		*s = restState(many[0])
	}
	return nil
}

// ParseRESTJobs decodes slurmrestd's answer to GET /slurm/v0.0.38/jobs
// into Jobs, in the answer's order and whatever their state. A non-empty
// "errors" list is an error wrapping ErrREST; a missing "jobs" list, a job
// without job_id or job_state, or a malformed "nodes" hostlist is an error
// wrapping ErrMalformed. IDs are built as squeue prints them: "4_1" for
// array task 1 of array job 4, "6+1" for component 1 of het job 6. A
// time_limit of null means no limit (slurmrestd prints INFINITE so).
func ParseRESTJobs(r io.Reader) ([]Job, error) {
	var resp restResponse
	dec := json.NewDecoder(r)
	if err := dec.Decode(&resp); err != nil {
		return nil, &OutputError{Source: "slurmrestd jobs", Text: "answer", Err: fmt.Errorf("JSON: %w", err)}
	}
	if len(resp.Errors) > 0 {
		var msgs []string
		for i, e := range resp.Errors {
			if i == 3 {
				msgs = append(msgs, fmt.Sprintf("and %d more", len(resp.Errors)-i))
				break
			}
			msgs = append(msgs, e.String())
		}
		return nil, fmt.Errorf("%w: %s", ErrREST, strings.Join(msgs, "; "))
	}
	if resp.Jobs == nil {
		return nil, &OutputError{Source: "slurmrestd jobs", Text: "answer", Err: errors.New(`no "jobs" list`)}
	}
	jobs := make([]Job, 0, len(*resp.Jobs))
	for i, rj := range *resp.Jobs {
		j, err := rj.job()
		if err != nil {
			return nil, &OutputError{Source: "slurmrestd jobs", Text: fmt.Sprintf("[%d] (job_id %d)", i, rj.JobID.Value), Err: err}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func (e restError) String() string {
	s := e.Error
	if e.Description != "" && e.Description != s {
		if s != "" {
			s += ": "
		}
		s += e.Description
	}
	if e.Number != 0 {
		s += fmt.Sprintf(" (error %d", e.Number)
		if e.Source != "" {
			s += " in " + e.Source
		}
		s += ")"
	}
	return s
}

// job converts one decoded job.
func (rj restJob) job() (Job, error) {
	if !rj.JobID.Set {
		return Job{}, errors.New("no job_id")
	}
	if rj.State == "" {
		return Job{}, errors.New("no job_state")
	}
	j := Job{
		State:     strings.ToUpper(string(rj.State)),
		NodeList:  rj.Nodes,
		Partition: rj.Partition,
		Name:      rj.Name,
		User:      rj.UserName,
	}
	switch {
	case rj.ArrayJobID.Value != 0 && rj.ArrayTaskID.Set:
		j.ID = fmt.Sprintf("%d_%d", rj.ArrayJobID.Value, rj.ArrayTaskID.Value)
	case rj.ArrayJobID.Value != 0 && rj.ArrayTaskString != "":
		j.ID = fmt.Sprintf("%d_[%s]", rj.ArrayJobID.Value, rj.ArrayTaskString)
	case rj.HetJobID.Value != 0:
		j.ID = fmt.Sprintf("%d+%d", rj.HetJobID.Value, rj.HetJobOffset.Value)
	default:
		j.ID = strconv.FormatUint(rj.JobID.Value, 10)
	}
	switch {
	case rj.TimeLimit.Infinite || !rj.TimeLimit.Set:
		j.TimeLimit = Unlimited
	case rj.TimeLimit.Value > uint64(Unlimited/time.Minute):
		return Job{}, fmt.Errorf("time_limit %d minutes: %w", rj.TimeLimit.Value, ErrTimeLimit)
	case rj.TimeLimit.Value > 0:
		j.TimeLimit = time.Duration(rj.TimeLimit.Value) * time.Minute
	}
	nodes, err := Expand(rj.Nodes)
	if err != nil {
		return Job{}, fmt.Errorf("nodes: %w", err)
	}
	if Allocated(j.State) && len(nodes) == 0 {
		return Job{}, errors.New("running job without nodes")
	}
	j.Nodes = nodes
	return j, nil
}
