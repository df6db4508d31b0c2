package sm

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
)

// HTTPLimits bound what one HTTP client may hold: how long it may take
// to send its request headers and body, how long an answer may take, how
// long an idle keep-alive connection stays open, and how large headers and
// request bodies may be.
type HTTPLimits struct {
	ReadHeader, Read, Write, Idle time.Duration
	MaxHeaderBytes                int
	MaxBody                       int64
}

// DefaultHTTPLimits suit scrapes, status queries and hooks on a
// management network.
var DefaultHTTPLimits = HTTPLimits{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: time.Minute,
	Idle: time.Minute, MaxHeaderBytes: 16 << 10, MaxBody: 4 << 10}

func (l HTTPLimits) withDefaults() HTTPLimits {
	d := DefaultHTTPLimits
	pick := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	pick(&l.ReadHeader, d.ReadHeader)
	pick(&l.Read, d.Read)
	pick(&l.Write, d.Write)
	pick(&l.Idle, d.Idle)
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxBody == 0 {
		l.MaxBody = d.MaxBody
	}
	return l
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /status", s.statusHandler)
	mux.HandleFunc("POST /reroute", s.rerouteHandler)
	mux.HandleFunc("GET /deployed", s.deployedHandler)
	return mux
}

// healthz answers 200 while verified tables are published and nothing is
// wrong (Status.Problems), else 503 with the reasons, one a line.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	st := s.Status()
	var why []string
	if st.Published == nil {
		why = append(why, "no tables published yet")
	} else if !st.Published.Verified {
		why = append(why, "published tables are not verified")
	}
	why = append(why, st.Problems...)
	if h, ok := s.deployer.(DeployerHealth); ok {
		if p := h.Problem(); p != "" {
			why = append(why, "deploy: "+p)
		}
	}
	if len(why) > 0 {
		http.Error(w, strings.Join(why, "\n"), http.StatusServiceUnavailable)
		return
	}
	msg := "ok"
	if st.LastResult == resultFailed {
		msg = "ok (serving the last good tables; last reroute failed: " + st.LastError + ")"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(msg + "\n"))
}

func (s *Server) statusHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s.Status())
}

// deployedHandler answers GET /deployed?job=ID: 200 once the switches
// hold a generation routed for the job (the SLURM prolog waits for it),
// or at once for a job SLURM runs that routing leaves out (one switch, a
// short time limit, an excluded partition: it needs no tables of its own,
// and most jobs are such); 503 until then, 404 without a deployer.
func (s *Server) deployedHandler(w http.ResponseWriter, r *http.Request) {
	if s.deployer == nil {
		http.Error(w, "no deployer: tables are only published ([opensm] enabled = false)", http.StatusNotFound)
		return
	}
	job := r.URL.Query().Get("job")
	st := s.Status()
	dep := s.deployer.Deployed()
	pub := st.Published
	switch {
	case pub == nil:
		http.Error(w, "nothing published yet", http.StatusServiceUnavailable)
	case job != "" && !hasJob(pub.Jobs, job):
		if why, ok := s.jobLeftOut(job); ok {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "job %s is not routed for (%s): no tables to wait for\n", job, why)
			return
		}
		http.Error(w, "the published generation was not routed for job "+job, http.StatusServiceUnavailable)
	case dep < pub.Generation:
		http.Error(w, fmt.Sprintf("generation %d published, %d deployed", pub.Generation, dep), http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "generation %d deployed\n", dep)
	}
}

// jobLeftOut reports whether SLURM's last answer has job id running and
// the SAR filter leaves it out on the last routed fabric, and why.
func (s *Server) jobLeftOut(id string) (string, bool) {
	g := s.lastGraph.Load()
	if s.poller == nil || g == nil {
		return "", false
	}
	lo, ok := s.poller.answer().(interface {
		LeftOut(g *fabric.Graph, id string) (string, bool)
	})
	if !ok {
		return "", false
	}
	return lo.LeftOut(g, id)
}

func hasJob(js []JobStatus, id string) bool {
	for _, j := range js {
		if j.ID == id {
			return true
		}
	}
	return false
}

// rerouteHandler queues a reroute for a loopback client or one with the
// token, sent with Content-Type application/json: a browser sends that
// cross-site only after a CORS preflight, which the daemon never grants,
// so a web page cannot make a browser on the host trigger reroutes. The
// body (ignored) is bounded.
func (s *Server) rerouteHandler(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		http.Error(w, "POST /reroute needs a loopback client or Authorization: Bearer <token>", http.StatusForbidden)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "POST /reroute needs Content-Type: application/json", http.StatusUnsupportedMediaType)
		return
	}
	if r.ContentLength > s.limits.MaxBody {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, s.limits.MaxBody)); err != nil {
		http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	reason := "http"
	if q := r.URL.Query().Get("reason"); q != "" {
		reason = "http-" + sanitize(q)
	}
	s.request(reason)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]any{"queued": true, "reason": reason})
}

func (s *Server) authorized(r *http.Request) bool {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return true
		}
	}
	if s.token == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// sanitize keeps a reason short and tame (it shows in the status and the
// logs; metrics label it by triggerLabel).
func sanitize(s string) string {
	var b strings.Builder
	for _, c := range s {
		if b.Len() >= 24 {
			break
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteRune(c)
		}
	}
	return b.String()
}
