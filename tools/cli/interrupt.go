package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// interruptedError is a lab-changing command stopped by a signal: it rolled
// back what it had not stored yet, or says what the next command on the lab
// finishes (a stored change stands), and exits 128+signal, as a shell reports
// a command killed by that signal.
type interruptedError struct {
	sig syscall.Signal
	err error
}

func (e interruptedError) Error() string { return e.err.Error() }
func (e interruptedError) Unwrap() error { return e.err }
func (e interruptedError) code() int     { return 128 + int(e.sig) }

// labChange runs a command that changes a lab with SIGINT and SIGTERM
// caught: the first cancels the command's context, so that it rolls back
// what it had not stored yet (or leaves a stored change to the next
// command) and fails saying so; a second ends svclab at once (the lab's
// journal lets the next command settle what is left).
func labChange(run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx, caught, stop := catchSignals(cmd.Context(), cmd.ErrOrStderr())
		defer stop()
		cmd.SetContext(ctx)
		err := run(cmd, args)
		if sig := caught(); sig != 0 && err != nil {
			return interruptedError{sig: sig, err: err}
		}
		return err
	}
}

func catchSignals(parent context.Context, stderr io.Writer) (ctx context.Context, caught func() syscall.Signal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	var mu sync.Mutex
	var first syscall.Signal
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case s := <-signals:
				sig := s.(syscall.Signal)
				mu.Lock()
				again := first != 0
				if !again {
					first = sig
				}
				mu.Unlock()
				if again {
					fmt.Fprintf(stderr, "svclab: %s again: exiting now; the next command on the lab (or svclab delete lab) settles what is left\n", sig)
					os.Exit(128 + int(sig))
				}
				fmt.Fprintf(stderr, "svclab: %s: stopping: a change not stored yet is rolled back, a stored one the next command on the lab finishes (send it again to exit at once)\n", sig)
				cancel()
			}
		}
	}()
	caught = func() syscall.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	stop = func() {
		signal.Stop(signals)
		close(done)
		cancel()
	}
	return ctx, caught, stop
}
