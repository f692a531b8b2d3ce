package ui

import (
	"fmt"
	"net/http"
	"strings"
)

// guard answers only requests for the bound address (a Host header naming
// anything else is a DNS-rebinding attempt); takes a POST only from the
// page (its origin, same-origin, a JSON body); and serves /api/ only to a
// request with the session cookie (but POST /api/session, which checks the
// token). Every body is bounded.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", contentSecurity)
		if r.Host != s.addr {
			http.Error(w, fmt.Sprintf("svclab ui answers for %s only, not for Host %q", s.addr, r.Host), http.StatusMisdirectedRequest)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := s.foreignPost(r); why != "" {
				writeError(w, http.StatusForbidden, "forbidden: "+why)
				return
			}
		}
		if strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != sessionPath && !s.hasSession(r) {
			writeError(w, http.StatusUnauthorized, "no session: open the link `svclab ui` printed in its terminal (it ends in #token=…)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// foreignPost says why a POST does not come from the page, or "".
func (s *Server) foreignPost(r *http.Request) string {
	if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+s.addr {
		return fmt.Sprintf("Origin %q is not this page's", origin)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Sprintf("Sec-Fetch-Site %q: not from this page", site)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("Content-Type %q: want application/json", ct)
	}
	return ""
}
