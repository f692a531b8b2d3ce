package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Bounds of the server's connections: a local user who opens many, or
// sends slowly, holds none for long and cannot make it take more.
const (
	maxConns          = 32
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	// writeTimeout covers the longest answer: a traffic run.
	writeTimeout = TrafficDeadline + 30*time.Second
	idleTimeout  = 30 * time.Second
)

// Serve listens at addr (CheckListen) and serves the page until ctx ends.
// ready, if not nil, is called with the server once it listens.
func Serve(ctx context.Context, addr string, src Source, ready func(*Server)) error {
	if err := CheckListen(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return fmt.Errorf("svclab ui: %w", err)
	}
	s, err := NewServer(src, ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	s.base = ctx
	srv := httpServer(ctx, s.Handler())
	stop := context.AfterFunc(ctx, func() {
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	})
	defer stop()
	if ready != nil {
		ready(s)
	}
	if err := srv.Serve(limitListener(ln, maxConns)); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpServer serves h with every bound of a connection set, its requests'
// contexts ending with ctx.
func httpServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeader,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}
