package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/svclab/svclab/labs"
)

// Options of a tour run.
type Options struct {
	Out  io.Writer
	Keep bool // leave the lab running at the end
	// Root is the svclab checkout (for clusters/); default: found from the
	// working directory.
	Root string
	// Binary is the svclab executable the lab runs (default: this one).
	Binary string
}

// guide is what a tour's steps use to talk and to run things.
type guide struct {
	ctx    context.Context
	out    io.Writer
	lab    *labs.Lab
	step   int
	color  bool // ANSI colours: see useColor
	binary string
}

// labOpts are the options of the lab operations a tour runs.
func (g *guide) labOpts(out io.Writer) labs.Options {
	return labs.Options{Out: out, Binary: g.binary}
}

// style wraps s in an ANSI style when the output is a terminal.
func (g *guide) style(code, s string) string {
	if !g.color {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// useColor reports whether output to w gets ANSI colours: only when w is a
// terminal, and not when the NO_COLOR environment variable is set to a
// non-empty value (https://no-color.org).
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// section starts a numbered part of the walk-through.
func (g *guide) section(title string) {
	g.step++
	fmt.Fprintf(g.out, "\n%s\n", g.style("1", fmt.Sprintf("%d. %s", g.step, title)))
}

// say prints explanation text, wrapped as given.
func (g *guide) say(format string, args ...any) {
	fmt.Fprintf(g.out, "   "+format+"\n", args...)
}

// hop prints one line saying what happened to the packet at a hop.
func (g *guide) hop(format string, args ...any) {
	fmt.Fprintf(g.out, "   "+g.style("32", "→")+" "+format+"\n", args...)
}

// show runs a command in a lab host, prints it as a prompt line and its real
// output (filtered to the lines that contain one of keep, when given).
func (g *guide) show(host string, keep []string, args ...string) (string, error) {
	if err := g.ctx.Err(); err != nil {
		return "", err
	}
	cmd, err := g.lab.Command(host, args...)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	prompt := fmt.Sprintf("[root@%s ~]# %s", host, strings.Join(quoteArgs(args), " "))
	if len(keep) > 0 {
		prompt += " | grep -E '" + strings.Join(keep, "|") + "'"
	}
	fmt.Fprintf(g.out, "   %s\n", g.style("2", prompt))
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if len(keep) > 0 && !containsAny(line, keep) {
			continue
		}
		fmt.Fprintf(g.out, "   %s\n", line)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s in %s: %w", strings.Join(args, " "), host, err)
	}
	return string(out), nil
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \"'|*") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// run brings up the lab from topology, runs the tour's steps, and deletes the
// lab at the end unless Keep, and always when the steps fail or ctx ends
// (Ctrl-C).
func run(ctx context.Context, opts Options, topology string, steps func(*guide) error) error {
	return runWith(ctx, opts, topology, nil, steps)
}

// runWith is run with an optional edit of the topology file's text (for
// example another CNI variant), written to a scratch file.
func runWith(ctx context.Context, opts Options, topology string, edit func(string) string, steps func(*guide) error) error {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	root, err := checkoutRoot(opts.Root)
	if err != nil {
		return err
	}
	topoFile := filepath.Join(root, topology)
	if edit != nil {
		data, err := os.ReadFile(topoFile)
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "svclab-tour-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		topoFile = filepath.Join(dir, filepath.Base(topology))
		if err := os.WriteFile(topoFile, []byte(edit(string(data))), 0o644); err != nil {
			return err
		}
	}
	color := useColor(opts.Out)
	fmt.Fprintf(opts.Out, "svclab tour — lab from %s\n", topology)
	lab, took, err := labs.Create(ctx, topoFile, labs.Options{Out: opts.Out, Binary: opts.Binary})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "   lab %s is up in %s\n", lab.Name(), took.Round(time.Millisecond))
	g := &guide{ctx: ctx, out: opts.Out, lab: lab, color: color, binary: opts.Binary}
	stepsErr := steps(g)
	if ctx.Err() != nil {
		stepsErr = errors.Join(stepsErr, fmt.Errorf("interrupted"))
	}
	if opts.Keep && stepsErr == nil {
		fmt.Fprintf(opts.Out, "\nThe lab keeps running. Poke around, for example:\n")
		for _, h := range lab.Topology.Hosts() {
			fmt.Fprintf(opts.Out, "   svclab exec --lab %s %s -- ip route\n", lab.Name(), h.Name)
		}
		fmt.Fprintf(opts.Out, "   svclab exec --lab %s %s -- iptables -t nat -vnL KUBE-SERVICES\n", lab.Name(), lab.Topology.Spec.Nodes[0].Name)
		fmt.Fprintf(opts.Out, "   svclab get pods -A --lab %s\n", lab.Name())
		fmt.Fprintf(opts.Out, "and delete it with: svclab delete lab --name %s\n", lab.Name())
		return nil
	}
	delErr := labs.Delete(lab.Name())
	if delErr == nil {
		fmt.Fprintf(opts.Out, "\nlab %s deleted: no namespace, process or rule of it is left (KEEP=1 keeps it).\n", lab.Name())
	}
	return errors.Join(stepsErr, delErr)
}

// checkoutRoot finds the svclab checkout: the directory with clusters/ at or
// above the working directory.
func checkoutRoot(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "clusters", "single-node.yaml")); err == nil {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("tour: run it from the svclab checkout (no clusters/ found above %s)", dir)
		}
	}
}
