package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
)

// TokenHeader carries the page's token on POST /api/session.
const TokenHeader = "X-Svclab-Token"

// sessionPath is where the page trades the token for its cookie.
const sessionPath = "/api/session"

// newSecret is 128 random bits in hex.
func newSecret() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// sameSecret compares a secret a request carries with ours in constant
// time (no timing tells how much of a guess was right).
func sameSecret(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// cookieName is the session cookie's name. Browsers share cookies between
// the ports of one host: each server names its own by its port, so two
// pages on 127.0.0.1 do not overwrite each other's.
func (s *Server) cookieName() string {
	_, port, _ := net.SplitHostPort(s.addr)
	return "svclab_ui_" + port
}

// hasSession says whether the request carries this server's session cookie.
func (s *Server) hasSession(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	return err == nil && sameSecret(c.Value, s.session)
}

// openSession answers POST /api/session: with the token `svclab ui`
// printed (in TokenHeader), it sets the session cookie — HttpOnly (no
// script reads it), SameSite=Strict (no other site's request carries it) —
// that every other /api/ request needs.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request) {
	if !sameSecret(r.Header.Get(TokenHeader), s.token) {
		writeError(w, http.StatusForbidden, "no valid "+TokenHeader+": open the link `svclab ui` printed (it ends in #token=…)")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}
