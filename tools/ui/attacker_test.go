package ui

import (
	"context"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
)

// TestAttackerAsNobodyGetsNoToken is issue 25's first finding, replayed:
// another user of the machine (nobody, through setpriv) uses curl against
// the page root serves. Every public file (/, app.js, app.css) answers and
// carries neither the token nor the session; no string that looks like a
// secret in them opens a session or sends traffic; and without the cookie
// every /api/ request is refused (401/403) and reaches the lab not once.
// With the token the terminal printed, the same curl gets in: the refusals
// are the server's, not the probe's.
func TestAttackerAsNobodyGetsNoToken(t *testing.T) {
	roottest.Require(t, "serves as root and probes as user nobody")
	for _, prog := range []string{"setpriv", hostprog.Curl} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("the attacker's test needs %s: %v", prog, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	src := &fakeSource{}
	ready := make(chan *Server, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", src, func(s *Server) { ready <- s }) }()
	var s *Server
	select {
	case s = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	var seen strings.Builder
	for _, path := range []string{"", "app.js", "app.css"} {
		code, out := curlAsNobody(t, s.URL()+path)
		if code != http.StatusOK {
			t.Errorf("nobody: GET /%s: %d, want 200 (the page is public)", path, code)
		}
		seen.WriteString(out)
	}
	if strings.Contains(seen.String(), s.Token()) || strings.Contains(seen.String(), s.session) {
		t.Fatalf("nobody read a secret in the public files:\n%s", seen.String())
	}
	// Whatever looks like a secret there is tried as one.
	guesses := regexp.MustCompile(`[0-9a-fA-F]{32}`).FindAllString(seen.String(), -1)
	guesses = append(guesses, "", strings.Repeat("0", 32))
	jsonType := []string{"-H", "Content-Type: application/json"}
	for _, g := range guesses {
		token := append(slices.Clone(jsonType), "-H", TokenHeader+": "+g)
		if code, out := curlAsNobody(t, s.URL()+"api/session", append(token, "-X", "POST")...); code != http.StatusForbidden {
			t.Errorf("nobody: POST /api/session with %q: %d, want 403\n%s", g, code, out)
		}
		cookie := []string{"-H", "Cookie: " + s.cookieName() + "=" + g}
		for _, h := range [][]string{token, append(slices.Clone(jsonType), cookie...)} {
			if code, out := curlAsNobody(t, s.URL()+"api/traffic", append(h, "--data", `{"service":"default/web:80","count":5}`)...); code != http.StatusUnauthorized {
				t.Errorf("nobody: POST /api/traffic with %v: %d, want 401\n%s", h, code, out)
			}
		}
	}
	for _, path := range []string{"api/state", "api/trace.svg"} {
		if code, out := curlAsNobody(t, s.URL()+path); code != http.StatusUnauthorized {
			t.Errorf("nobody: GET /%s: %d, want 401\n%s", path, code, out)
		}
	}
	if code, out := curlAsNobody(t, s.URL()+"api/traffic", "--data", `{"service":"default/web:80","count":5}`); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("nobody: POST /api/traffic as a form: %d, want 401 or 403\n%s", code, out)
	}
	if n, reads := src.called(), src.kernelReads(); n != 0 || reads != 0 {
		t.Fatalf("nobody's requests sent traffic %d times and read the kernels %d times as root", n, reads)
	}

	// The probe works: with the token svclab ui printed, curl gets a session.
	code, out := curlAsNobody(t, s.URL()+"api/session", "-X", "POST", "-H", "Content-Type: application/json",
		"-H", TokenHeader+": "+s.Token())
	if code != http.StatusNoContent || !strings.Contains(out, "Set-Cookie: "+s.cookieName()+"="+s.session+"; Path=/; HttpOnly; SameSite=Strict") {
		t.Fatalf("POST /api/session with the printed token: %d\n%s", code, out)
	}
	if code, out := curlAsNobody(t, s.URL()+"api/state", "-H", "Cookie: "+s.cookieName()+"="+s.session); code != http.StatusOK {
		t.Errorf("GET /api/state with the session: %d\n%s", code, out)
	}
}

// curlAsNobody runs curl as user nobody (no groups) and returns the
// status and everything it printed: headers, then body.
func curlAsNobody(t *testing.T, url string, args ...string) (int, string) {
	t.Helper()
	argv := append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", hostprog.Curl,
		"-q", "-sS", "--max-time", "30", "-i", "-w", "\n%{http_code}"}, args...)
	out, err := exec.Command("setpriv", append(argv, url)...).CombinedOutput()
	if err != nil {
		t.Fatalf("setpriv … curl %s: %v\n%s", url, err, out)
	}
	text := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(text, '\n')
	code, err := strconv.Atoi(text[i+1:])
	if err != nil {
		t.Fatalf("curl %s: no status at the end:\n%s", url, out)
	}
	return code, text[:i+1]
}
