package sm

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
)

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /status", s.statusHandler)
	mux.HandleFunc("POST /reroute", s.rerouteHandler)
	mux.HandleFunc("GET /deployed", s.deployedHandler)
	return mux
}

// healthz answers 200 while verified tables are published, else 503.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	st := s.Status()
	if st.Published == nil || !st.Published.Verified {
		http.Error(w, "no verified tables published yet", http.StatusServiceUnavailable)
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
// 503 until then, 404 without a deployer.
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
		http.Error(w, "the published generation was not routed for job "+job, http.StatusServiceUnavailable)
	case dep < pub.Generation:
		http.Error(w, fmt.Sprintf("generation %d published, %d deployed", pub.Generation, dep), http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "generation %d deployed\n", dep)
	}
}

func hasJob(js []JobStatus, id string) bool {
	for _, j := range js {
		if j.ID == id {
			return true
		}
	}
	return false
}

// rerouteHandler queues a reroute: from loopback, or with the token.
func (s *Server) rerouteHandler(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		http.Error(w, "POST /reroute needs a loopback client or Authorization: Bearer <token>", http.StatusForbidden)
		return
	}
	reason := "http"
	if q := r.URL.Query().Get("reason"); q != "" {
		reason = "http-" + sanitize(q)
	}
	s.Trigger(reason)
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
	if s.cfg.Token == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
}

// sanitize keeps a label value short and tame (it becomes a metric label).
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

// pollJobs asks the job source for the running jobs and triggers a
// reroute when the set changed.
func (s *Server) pollJobs(ctx context.Context) {
	g := s.lastGraph
	if g == nil {
		return // nothing routed yet: the first reroute asks the source itself
	}
	jctx, cancel := context.WithTimeout(ctx, s.cfg.SLURM.Timeout.Duration)
	defer cancel()
	jobs, _, err := s.jobs.Jobs(jctx, g)
	if err != nil {
		s.metrics.slurmErrors.Inc()
		s.setStatus(func(st *Status) { st.SLURM = "error: " + err.Error() })
		s.log.Warn("SLURM poll failed", "err", err)
		return
	}
	s.setStatus(func(st *Status) { st.SLURM = "ok" })
	if jobFingerprint(jobs) != s.lastJobs {
		s.Trigger("slurm-jobs-changed")
	}
}
