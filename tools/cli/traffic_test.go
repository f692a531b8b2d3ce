package cli

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestTrafficBarsAndSVG runs `traffic` against a local server that answers
// /hostname like a pod: -o bars draws the split as Unicode bars without
// colour (the output is not a terminal) and keeps the verdict; -o svg is a
// valid SVG picture naming the backend; the table is unchanged.
func TestTrafficBarsAndSVG(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "web-1") //nolint:errcheck // the client sees a short answer
	}))
	defer srv.Close()
	target := srv.Listener.Addr().String()

	out, err := run("traffic", "--to", target, "-c", "20", "-o", "bars")
	if err != nil {
		t.Fatalf("traffic -o bars: %v\n%s", err, out)
	}
	for _, want := range []string{target + ": 20 connections, 20 succeeded", "web-1  ████", "100.0%  20", "100.0%  expected", "PASS at alpha 1e-06"} {
		if !strings.Contains(out, want) {
			t.Errorf("-o bars lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Errorf("-o bars to a buffer carries colour escapes:\n%s", out)
	}

	out, err = run("traffic", "--to", target, "-c", "20", "-o", "svg")
	if err != nil {
		t.Fatalf("traffic -o svg: %v\n%s", err, out)
	}
	dec := xml.NewDecoder(strings.NewReader(out))
	var texts bytes.Buffer
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("-o svg is not valid XML: %v\n%s", err, out)
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts.Write(cd)
		}
	}
	if !strings.Contains(texts.String(), "web-1") || !strings.Contains(out, "<svg xmlns=\"http://www.w3.org/2000/svg\"") {
		t.Errorf("-o svg does not name web-1:\n%s", out)
	}

	out, err = run("traffic", "--to", target, "-c", "20")
	if err != nil || !strings.Contains(out, "BACKEND  COUNT  SHARE   EXPECTED") {
		t.Errorf("the table changed (%v):\n%s", err, out)
	}
}

// TestTrafficRefusesUnknownOutputFirst: a bad -o is one error, before any
// connection is made.
func TestTrafficRefusesUnknownOutputFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	out, err := run("traffic", "--to", ln.Addr().String(), "-c", "3", "-o", "yaml")
	if err == nil || !strings.Contains(err.Error(), `-o "yaml": want one of table, json, bars, svg`) {
		t.Errorf("traffic -o yaml: %v\n%s", err, out)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("traffic -o yaml made %d connections before refusing", n)
	}
}

// TestTrafficNamesTheFlagOfABareIPv6Address: an IPv6 --to without
// brackets is one error naming the flag and the form to write, before
// any connection or lab.
func TestTrafficNamesTheFlagOfABareIPv6Address(t *testing.T) {
	for to, want := range map[string]string{
		"fd00:10:96::a":           `--to "fd00:10:96::a": fd00:10:96::a is an IPv6 address without a port: want [fd00:10:96::a]:PORT`,
		"fd00:10:96:1:2:3:4:a:80": `--to "fd00:10:96:1:2:3:4:a:80": an IPv6 address is written in brackets before its port: want [fd00:10:96:1:2:3:4:a]:80`,
	} {
		out, err := run("traffic", "--lab", "nosuch", "--from", "client", "--to", to, "-c", "1")
		if err == nil || err.Error() != want {
			t.Errorf("traffic --to %s: %v, want %q\n%s", to, err, want, out)
		}
	}
}
