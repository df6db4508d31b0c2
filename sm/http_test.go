package sm

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuesm/nuesm/topo"
)

// idleServer is a daemon on a ring that is not running.
func idleServer(t *testing.T, cfg Config, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	cfg.Fabric = filepath.Join(dir, "f.topo")
	tp, err := topo.Ring(4, 1, nil)
	writeFabric(t, cfg.Fabric, tp, err)
	cfg.Output, cfg.Listen = filepath.Join(dir, "out"), "127.0.0.1:0"
	s, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// postReroute sends POST /reroute from remote with the content type and
// authorization given (empty: none) and returns the code.
func postReroute(s *Server, remote, contentType, auth, query string, body io.Reader) int {
	req := httptest.NewRequest("POST", "/reroute"+query, body)
	req.RemoteAddr = remote
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	s.handler().ServeHTTP(rec, req)
	return rec.Code
}

// TestRerouteNeedsJSONAndAuth: POST /reroute takes a loopback client or
// the token, and only Content-Type application/json: the content types a
// cross-site HTML form (or a no-cors fetch) can send are refused.
func TestRerouteNeedsJSONAndAuth(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("sekret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := idleServer(t, Config{TokenFile: tokenFile})
	for _, c := range []struct {
		remote, ctype, auth string
		want                int
	}{
		{"127.0.0.1:1", "application/json", "", http.StatusAccepted},
		{"[::1]:1", "application/json; charset=utf-8", "", http.StatusAccepted},
		{"127.0.0.1:1", "application/x-www-form-urlencoded", "", http.StatusUnsupportedMediaType},
		{"127.0.0.1:1", "multipart/form-data; boundary=x", "", http.StatusUnsupportedMediaType},
		{"127.0.0.1:1", "text/plain", "", http.StatusUnsupportedMediaType},
		{"127.0.0.1:1", "", "", http.StatusUnsupportedMediaType},
		{"10.1.2.3:1", "application/json", "", http.StatusForbidden},
		{"10.1.2.3:1", "application/json", "Bearer wrong", http.StatusForbidden},
		{"10.1.2.3:1", "application/json", "Bearer sekret", http.StatusAccepted},
		{"10.1.2.3:1", "text/plain", "Bearer sekret", http.StatusUnsupportedMediaType},
	} {
		if got := postReroute(s, c.remote, c.ctype, c.auth, "", nil); got != c.want {
			t.Errorf("%s %q %q: %d, want %d", c.remote, c.ctype, c.auth, got, c.want)
		}
	}
}

// TestTokenSources: the token comes from token_file (its first line) or
// the configuration; an empty file or both are errors.
func TestTokenSources(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{TokenFile: empty}, "is empty"},
		{Config{TokenFile: filepath.Join(dir, "nosuch")}, "token_file"},
		{Config{TokenFile: empty, Token: "x"}, "token and token_file"},
	} {
		c.cfg.Fabric, c.cfg.Output = "/x.topo", t.TempDir()
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	s := idleServer(t, Config{Token: "t0k"})
	if got := postReroute(s, "10.0.0.1:1", "application/json", "Bearer t0k", "", nil); got != http.StatusAccepted {
		t.Errorf("token from the configuration: %d", got)
	}
}

// TestRerouteBodyLimit: a body beyond the limit is refused, whether its
// length is announced or not.
func TestRerouteBodyLimit(t *testing.T) {
	s := idleServer(t, Config{})
	big := strings.Repeat("x", int(DefaultHTTPLimits.MaxBody)+1)
	if got := postReroute(s, "127.0.0.1:1", "application/json", "", "", strings.NewReader(big)); got != http.StatusRequestEntityTooLarge {
		t.Errorf("announced large body: %d", got)
	}
	chunked := io.MultiReader(strings.NewReader(big)) // no length known
	if got := postReroute(s, "127.0.0.1:1", "application/json", "", "", chunked); got != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed large body: %d", got)
	}
	if got := postReroute(s, "127.0.0.1:1", "application/json", "", "", strings.NewReader("{}")); got != http.StatusAccepted {
		t.Errorf("small body: %d", got)
	}
}

// TestTriggerLabelsBounded: any number of distinct reasons gives the same
// fixed set of metric series.
func TestTriggerLabelsBounded(t *testing.T) {
	m := NewMetrics()
	s := idleServer(t, Config{}, WithMetrics(m))
	for i := 0; i < 500; i++ {
		postReroute(s, "127.0.0.1:1", "application/json", "", fmt.Sprintf("?reason=r%d", i), nil)
	}
	postReroute(s, "127.0.0.1:1", "application/json", "", "?reason=prolog", nil)
	s.Trigger("made-up-by-a-plugin")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	series := 0
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(l, "nuesm_reroute_triggers_total{") {
			series++
		}
	}
	body := rec.Body.String()
	if series != len(triggerLabels) || !strings.Contains(body, `nuesm_reroute_triggers_total{source="http-other"} 500`) ||
		!strings.Contains(body, `nuesm_reroute_triggers_total{source="http-prolog"} 1`) ||
		!strings.Contains(body, `nuesm_reroute_triggers_total{source="other"} 1`) {
		t.Fatalf("%d trigger series (want %d):\n%s", series, len(triggerLabels), body)
	}
}

// TestHTTPTimeouts: an idle keep-alive connection and a client that never
// finishes its headers are closed.
func TestHTTPTimeouts(t *testing.T) {
	lim := HTTPLimits{ReadHeader: 300 * time.Millisecond, Idle: 300 * time.Millisecond}
	s := idleServer(t, Config{}, WithHTTPLimits(lim))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	poll(t, "the listener", func() bool { return s.Addr() != "" })

	idle := dial(t, s.Addr())
	fmt.Fprintf(idle, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	awaitClosed(t, idle, "idle keep-alive connection")

	slow := dial(t, s.Addr())
	fmt.Fprintf(slow, "GET /status HTTP/1.1\r\nHost: x\r\n") // headers never end
	awaitClosed(t, slow, "connection with unfinished headers")
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// awaitClosed reads from c until the server closes it (within the
// test's deadline).
func awaitClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_ = c.SetReadDeadline(testDeadline(t))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("%s not closed by the server", what)
	}
}
